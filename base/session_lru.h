// A bounded store of recorded network sessions, found by a key of their first send, for session
// replay at both fidelities (noc/session_cache.h for the cycle level, flow/fluid_replay.h for the
// flow level). Bounded: at most `per_key` recordings per key (the least recently used goes) and a
// memory budget past which the least recently used recording anywhere makes room; a recording over a
// quarter of the budget is not kept. S needs `uint64_t last_used` and `size_t footprint_bytes() const`.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <unordered_map>
#include <vector>

namespace nmpsim::base {

/// FNV-1a over 64-bit words: the key of a session's first send at both fidelities.
inline uint64_t session_key(std::initializer_list<uint64_t> words) {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t v : words) h = (h ^ v) * 1099511628211ull;
  return h;
}

template <class S>
class SessionLru {
 public:
  using Bucket = std::vector<std::unique_ptr<S>>;
  SessionLru(size_t per_key, size_t budget_bytes) : per_key_(per_key), budget_(budget_bytes) {}

  /// Recordings kept under `key` (null when none).
  Bucket* find(uint64_t key) {
    const auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second;
  }
  void insert(uint64_t key, std::unique_ptr<S> s) {
    const size_t bytes = s->footprint_bytes();
    if (bytes > budget_ / 4) return;
    while (count_ > 0 && bytes_ + bytes > budget_) evict_one();
    Bucket& bucket = map_[key];
    if (bucket.size() >= per_key_)
      drop(bucket, std::min_element(bucket.begin(), bucket.end(),
                                    [](const auto& a, const auto& b) { return a->last_used < b->last_used; }));
    s->last_used = tick();
    bytes_ += bytes;
    ++count_;
    bucket.push_back(std::move(s));
  }
  /// The clock that orders recordings by their last use.
  uint64_t tick() { return ++clock_; }
  size_t bytes() const { return bytes_; }

 private:
  void evict_one() {
    auto best_bucket = map_.end();
    size_t best = 0;
    for (auto it = map_.begin(); it != map_.end(); ++it)
      for (size_t i = 0; i < it->second.size(); ++i)
        if (best_bucket == map_.end() || it->second[i]->last_used < best_bucket->second[best]->last_used) {
          best_bucket = it;
          best = i;
        }
    drop(best_bucket->second, best_bucket->second.begin() + static_cast<long>(best));
    if (best_bucket->second.empty()) map_.erase(best_bucket);
  }
  void drop(Bucket& bucket, typename Bucket::iterator it) {
    bytes_ -= (*it)->footprint_bytes();
    --count_;
    bucket.erase(it);
  }
  std::unordered_map<uint64_t, Bucket> map_;
  size_t per_key_, budget_;
  size_t bytes_ = 0, count_ = 0;
  uint64_t clock_ = 0;
};

}  // namespace nmpsim::base
