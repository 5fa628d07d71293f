// The network of flow fidelity: the fluid engine (flow/fluid_network.h) run session by session,
// with repeated sessions replayed from a recording (docs/MODEL.md "Session replay at flow fidelity").
//
// A session runs from a send to an idle network until the network holds nothing again. The engine
// starts every session from reset() and computes in session time (seconds since the session's first
// send), so a session's outcome is a function of its own calls alone: the sends (time, source,
// destination, bytes), the times it was advanced to, and where the queries for its next event fell
// among them. Times the network itself answered with map back to their exact session time; any other
// time is put on a grid of 2^-40 s (about 0.9 ps) after the first send, so that the same schedule
// started at another moment gives the same session times. Decode steps repeat the same collectives
// layer after layer, so the network records each session's calls and answers, and when a session
// starts with the same first send as recordings it answers from them for as long as the calls match
// one; at the first call that matches none it re-simulates the session from its start (the engine was
// left untouched) and goes on simulating. Results are the same to the bit with replay on or off.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "nmpsim/base/session_lru.h"
#include "nmpsim/flow/fluid_network.h"

namespace nmpsim::flow {

/// One call the flow executor made to the network in a session, in session time.
struct FluidCall {
  enum Kind : uint8_t { kSend, kAdvance, kQuery };
  Kind kind = kSend;
  int32_t src = 0, dst = 0;    ///< kSend
  double t = 0;                ///< kSend, kAdvance: the call's time; kQuery: the answer (kNever: none)
  double bytes = 0;            ///< kSend
  uint32_t delivered_end = 0;  ///< kAdvance: the session's deliveries up to and including this call
  /// The same kind with the same inputs (a query has none: its answer follows from the calls before).
  bool same_input(const FluidCall& o) const {
    return kind == o.kind && (kind == kQuery || (t == o.t && src == o.src && dst == o.dst && bytes == o.bytes));
  }
};

/// A recorded session: its calls, and its deliveries in order (send index in the session, time).
struct FluidSession {
  std::vector<FluidCall> calls;
  std::vector<std::pair<uint32_t, double>> deliveries;
  uint64_t last_used = 0;
  size_t footprint_bytes() const {
    return sizeof(FluidSession) + calls.capacity() * sizeof(FluidCall) +
           deliveries.capacity() * sizeof(std::pair<uint32_t, double>);
  }
};

class FluidNetwork {
 public:
  static constexpr double kNever = FluidEngine::kNever;
  using Delivery = FluidEngine::Delivery;
  /// Sessions of this run: all, replayed to their end from a recording, re-simulated after a call
  /// departed from the recordings, and recorded.
  struct Stats {
    uint64_t sessions = 0, replayed = 0, resimulated = 0, recorded = 0;
  };
  static constexpr size_t kPerKey = 8;
  static constexpr size_t kBudgetBytes = size_t{64} << 20;
  /// Longest session recorded (calls); longer ones are simulated every time.
  static constexpr size_t kMaxSessionCalls = size_t{1} << 20;
  /// The grid of session times that do not come from the network's own answers: 2^-40 s.
  static double quantise(double seconds);

  explicit FluidNetwork(const AnalyticalHardware& hw);

  /// Queues `bytes` from src to dst at time `now_s` (not before the last advance). A message to
  /// itself is delivered at once, without the network. `cookie` comes back with the delivery.
  void send(double now_s, int src, int dst, double bytes, uint64_t cookie);
  /// Time of the next thing that happens inside the network; kNever when idle.
  double next_event_s();
  /// Advances to `t_s` (at most next_event_s()) and appends the messages delivered by then.
  void advance(double t_s, std::vector<Delivery>& delivered);
  bool idle() const { return mode_ == Mode::kIdle; }

  double wire_bytes(double bytes) const { return engine_.wire_bytes(bytes); }
  void add_link_bytes(int src, int dst, double bytes, std::vector<double>& link_bytes) const {
    engine_.add_link_bytes(src, dst, bytes, link_bytes);
  }
  double latency_s(int src, int dst) const { return engine_.latency_s(src, dst); }
  /// Full max-min solves so far (replayed sessions solve nothing).
  uint64_t solves() const { return engine_.solves(); }
  const Stats& stats() const { return stats_; }

 private:
  enum class Mode : uint8_t { kIdle, kRecord, kReplay };
  static uint64_t key(int src, int dst, double bytes);
  void start_session(double now_s, int src, int dst, double bytes);
  void end_session();
  /// Session time of an absolute time: exact for the times last given or answered, else on the grid.
  double to_rel(double abs_s) const;
  /// Replaying: keeps the recordings whose next call is `c`; when none is left, re-simulates the
  /// session so far on the engine and records from there (returns false).
  bool replay_matches(const FluidCall& c);
  void resimulate(const FluidSession& s, size_t calls);
  // The calls on the engine (recording them); `out` null while re-simulating.
  void run_send(const FluidCall& c);
  void record(const FluidCall& c);
  double run_query();
  void run_advance(double t_rel, std::vector<Delivery>* out);

  FluidEngine engine_;
  bool replay_enabled_ = true;
  base::SessionLru<FluidSession> cache_{kPerKey, kBudgetBytes};
  Stats stats_;

  Mode mode_ = Mode::kIdle;
  uint64_t key_ = 0;
  double origin_ = 0;                   // absolute time of the session's first send
  double now_abs_ = 0, now_rel_ = 0;    // the last time given
  double next_abs_ = 0, next_rel_ = 0;  // the last next event answered
  bool has_next_ = false;
  std::vector<uint64_t> cookies_;  // by send index in the session
  uint32_t engine_sends_ = 0;      // sends given to the engine in this session
  std::unique_ptr<FluidSession> rec_;
  std::vector<FluidSession*> candidates_;  // replaying: the recordings that match so far
  size_t pos_ = 0;                         // replaying: the next call
  uint32_t replay_delivered_ = 0;          // replaying: deliveries reported
  std::vector<Delivery> scratch_;
};

}  // namespace nmpsim::flow
