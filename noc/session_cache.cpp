#include "noc/session_cache.h"

#include <algorithm>

namespace nmpsim::noc {

size_t Session::footprint_bytes() const {
  return sizeof(Session) + sends.capacity() * sizeof(SessionSend) + steps.capacity() * sizeof(uint64_t) +
         (delivery_send.capacity() + delivery_step.capacity()) * sizeof(uint32_t) +
         (reads.capacity() + finals.capacity()) * sizeof(RrPointer) + routers.capacity() * sizeof(RouterDelta);
}

uint64_t SessionCache::key(const SessionSend& f) {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t v : {uint64_t(f.local), f.rel_cycle, uint64_t(uint32_t(f.src)), uint64_t(uint32_t(f.dst)), f.bytes,
                     uint64_t(f.flits), uint64_t(f.packet_flits)})
    h = (h ^ v) * 1099511628211ull;
  return h;
}

std::vector<std::unique_ptr<Session>>* SessionCache::find(const SessionSend& first) {
  const auto it = map_.find(key(first));
  return it == map_.end() ? nullptr : &it->second;
}

void SessionCache::insert(std::unique_ptr<Session> s) {
  const size_t bytes = s->footprint_bytes();
  if (bytes > kBudgetBytes / 4) return;
  while (count_ > 0 && bytes_ + bytes > kBudgetBytes) evict_one();
  auto& bucket = map_[key(s->sends.front())];
  if (bucket.size() >= kPerKey)
    drop(bucket, std::min_element(bucket.begin(), bucket.end(),
                                  [](const auto& a, const auto& b) { return a->last_used < b->last_used; }));
  s->last_used = tick();
  bytes_ += bytes;
  ++count_;
  bucket.push_back(std::move(s));
}

void SessionCache::evict_one() {
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

void SessionCache::drop(Bucket& bucket, Bucket::iterator it) {
  bytes_ -= (*it)->footprint_bytes();
  --count_;
  bucket.erase(it);
}

}  // namespace nmpsim::noc
