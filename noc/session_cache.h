// Session replay for the cycle-level network (docs/MODEL.md "Session replay").
//
// A session is the network's work from quiescence to quiescence: it starts when a message is sent
// to a network that holds nothing (no packet queued or in flight, no flit or credit on a wire) and
// ends when the network is quiescent again. At quiescence every buffer is empty, every credit is
// home and every link is free; the only state that carries over is the round-robin pointers of the
// routers and network interfaces. A session's outcome (every delivery cycle, every counter) is
// therefore fixed by its sends (what, when, and at which point of the session they were made) and
// by the picks of the arbitrations that read a pointer before the session wrote it. Decode steps
// repeat the same collectives layer after layer, so the network records sessions and, when a new
// one starts with the same sends on pointer values that make the same picks, replays the recorded
// deliveries instead of moving the flits. A send that departs from the recording makes the network
// re-simulate the session from its start (the real network was left untouched), so results are the
// same cycle for cycle either way.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nmpsim/base/session_lru.h"
#include "nmpsim/noc/noc_config.h"

namespace nmpsim::noc {

/// One send of a session, with the point of the session it was made at.
struct SessionSend {
  uint32_t step = 0;       ///< cycles evaluated in the session before the call
  uint32_t delivered = 0;  ///< messages of the session delivered before the call
  uint8_t in_step = 0;     ///< made while a cycle was evaluated (from a delivery handler)
  uint8_t local = 0;       ///< source == destination (no network)
  uint64_t rel_cycle = 0;  ///< injectable cycle - the session's first send's
  int32_t src = 0, dst = 0;
  uint64_t bytes = 0;
  uint32_t flits = 0, packet_flits = 0;
  bool operator==(const SessionSend& o) const {
    return step == o.step && delivered == o.delivered && in_step == o.in_step && local == o.local &&
           rel_cycle == o.rel_cycle && src == o.src && dst == o.dst && bytes == o.bytes && flits == o.flits &&
           packet_flits == o.packet_flits;
  }
};

/// A round-robin pointer: router pointer k (noc::Router::rr_value) or, k == kNiPointer - p, the NI's
/// pointer of its local port p;
/// `allowed`: the values a session's picks hold for (a precondition), `value`: its value at the end.
struct RrPointer {
  static constexpr uint8_t kNiPointer = 255;
  /// k of the NI pointer of local port `port`.
  static constexpr uint8_t ni_k(int port) { return static_cast<uint8_t>(kNiPointer - port); }
  /// The NI port whose pointer this is, or -1 for a router pointer.
  int ni_port() const { return k > kNiPointer - kMaxNiPorts ? kNiPointer - k : -1; }
  uint32_t node = 0;
  uint8_t k = 0;
  uint8_t value = 0;
  uint64_t allowed = 0;
};

/// A router's counters over a session (it is empty at both ends).
struct RouterDelta {
  uint32_t node = 0;
  uint64_t flits_out[kMaxPorts] = {};
  double area = 0.0;
  int peak = 0;
};

/// The cycles a session evaluated, relative to its first send's, as runs of consecutive cycles: a
/// collective that keeps the network busy for millions of cycles is a handful of runs. Read in order
/// (the replay asks for step n, then n + 1, ...): a cursor makes that O(1); any other index is a binary
/// search.
class StepList {
 public:
  void push_back(uint64_t rel_cycle) {
    if (!runs_.empty() && runs_.back().start + runs_.back().count == rel_cycle) {
      ++runs_.back().count;
    } else {
      runs_.push_back(Run{rel_cycle, size_, 1});
    }
    ++size_;
  }
  size_t size() const { return size_; }
  size_t runs() const { return runs_.size(); }
  uint64_t operator[](size_t n) const {
    const Run* r = &runs_[cursor_];
    if (n < r->first || n >= r->first + r->count) {
      if (cursor_ + 1 < runs_.size() && n >= runs_[cursor_ + 1].first &&
          n < runs_[cursor_ + 1].first + runs_[cursor_ + 1].count) {
        ++cursor_;
      } else {
        size_t lo = 0, hi = runs_.size();  // the last run whose first index is <= n
        while (hi - lo > 1) {
          const size_t mid = (lo + hi) / 2;
          (runs_[mid].first <= n ? lo : hi) = mid;
        }
        cursor_ = lo;
      }
      r = &runs_[cursor_];
    }
    return r->start + (n - r->first);
  }
  void shrink_to_fit() { runs_.shrink_to_fit(); }
  size_t footprint_bytes() const { return runs_.capacity() * sizeof(Run); }

 private:
  struct Run {
    uint64_t start;  ///< relative cycle of the run's first step
    uint64_t first;  ///< index of that step
    uint64_t count;
  };
  std::vector<Run> runs_;
  size_t size_ = 0;
  mutable size_t cursor_ = 0;
};

struct Session {
  std::vector<SessionSend> sends;
  StepList steps;                       ///< cycles evaluated, relative to the first send's cycle
  std::vector<uint32_t> delivery_send;  ///< in delivery order: the send delivered
  std::vector<uint32_t> delivery_step;  ///< ... and the index of the cycle it was delivered in
  std::vector<RrPointer> reads;         ///< pointers read before written: the values they may have
  std::vector<RrPointer> finals;        ///< pointers written: their values at the end
  std::vector<RouterDelta> routers;
  uint64_t injected_flits = 0, ejected_flits = 0, link_traversals = 0;
  uint64_t last_used = 0;
  size_t footprint_bytes() const;
};

/// Recorded sessions, found by their first send (base::SessionLru: a few sessions per first send,
/// and a total memory budget past which the least recently used session makes room).
class SessionCache {
 public:
  static constexpr size_t kPerKey = 8;
  static constexpr size_t kBudgetBytes = size_t{256} << 20;
  /// Longest session recorded (sends, deliveries and runs of consecutive cycles evaluated); longer ones
  /// are simulated every time.
  static constexpr size_t kMaxSessionEvents = size_t{4} << 20;

  static uint64_t key(const SessionSend& first);
  /// Sessions recorded with this first send (null when none).
  std::vector<std::unique_ptr<Session>>* find(const SessionSend& first) { return lru_.find(key(first)); }
  void insert(std::unique_ptr<Session> s) {
    const uint64_t k = key(s->sends.front());
    lru_.insert(k, std::move(s));
  }
  uint64_t tick() { return lru_.tick(); }

 private:
  base::SessionLru<Session> lru_{kPerKey, kBudgetBytes};
};

}  // namespace nmpsim::noc
