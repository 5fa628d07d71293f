// A growable FIFO ring buffer: no allocation in steady state (capacity only ever doubles).
#pragma once

#include <cstddef>
#include <vector>

namespace nmpsim::noc {

template <class T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  const T& at(size_t i) const { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  void push(const T& v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
  }
  void pop() {
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }

 private:
  void grow() {
    std::vector<T> next(buf_.empty() ? 8 : buf_.size() * 2);
    for (size_t i = 0; i < size_; ++i) next[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(next);
    head_ = 0;
  }
  std::vector<T> buf_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace nmpsim::noc
