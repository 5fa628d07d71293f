// Session replay at flow fidelity (flow/fluid_replay.h, docs/MODEL.md "Session replay at flow
// fidelity"): closed-loop workloads driven like the flow executor drives the network (timers beside
// network events, sends from delivery handlers and from timers) give every delivery at the same time,
// to the bit, with replay on and off; repeated sessions are replayed, departures re-simulated.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <queue>

#include "mapping_test_util.h"
#include "nmpsim/flow/fluid_replay.h"

namespace nmpsim::flow {
namespace {

using namespace nmpsim::mapping;  // the layer the flow back end executes

AnalyticalHardware mesh_hw(bool replay) {
  AnalyticalHardware hw = testing::nmp_hardware(4, 4, 5, 50);
  hw.replay_sessions = replay;
  return hw;
}

/// One round of a ring collective on all 16 nodes, `steps` steps: node v sends `bytes` to v + 1; a
/// node that receives step s computes for `compute_s` (a timer) and sends step s + 1. Rounds start at
/// `starts` (absolute seconds), each after the previous has finished. `tweak(round, step, node)`
/// changes a message's bytes (0: unchanged). Returns every delivery: (round, step, node) -> time
/// since the round's start.
struct Ring {
  int steps = 3;
  double bytes = 4096, compute_s = 37e-9;
  std::function<double(int, int, int)> tweak = [](int, int, int) { return 0.0; };
};

std::map<std::tuple<int, int, int>, double> run_rings(FluidNetwork& net, const Ring& ring,
                                                      const std::vector<double>& starts) {
  const int n = 16;
  std::map<std::tuple<int, int, int>, double> got;
  struct Timer {
    double t;
    int node, step;
    bool operator>(const Timer& o) const { return t != o.t ? t > o.t : node > o.node; }
  };
  for (size_t round = 0; round < starts.size(); ++round) {
    const int r = static_cast<int>(round);
    std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers;
    auto send = [&](double now, int node, int step) {
      const double extra = ring.tweak(r, step, node);
      const uint64_t cookie = (static_cast<uint64_t>(step) << 8) | static_cast<uint64_t>(node);
      net.send(now, node, (node + 1) % n, ring.bytes + extra, cookie);
    };
    double now = starts[round];
    for (int v = 0; v < n; ++v) send(now, v, 0);
    std::vector<FluidNetwork::Delivery> delivered;
    for (int guard = 0; guard < 100000; ++guard) {
      const double tn = net.next_event_s();
      const double tt = timers.empty() ? FluidNetwork::kNever : timers.top().t;
      const double t = std::min(tn, tt);
      if (t == FluidNetwork::kNever) break;
      now = std::max(now, t);
      delivered.clear();
      net.advance(t, delivered);
      for (const auto& d : delivered) {
        const int step = static_cast<int>(d.cookie >> 8), from = static_cast<int>(d.cookie & 0xff);
        got[{r, step, from}] = d.time_s - starts[round];
        if (step + 1 < ring.steps) timers.push(Timer{now + ring.compute_s, (from + 1) % n, step + 1});
      }
      while (!timers.empty() && timers.top().t <= t) {
        send(now, timers.top().node, timers.top().step);
        timers.pop();
      }
    }
    EXPECT_TRUE(net.idle());
  }
  return got;
}

/// Round starts that are not multiples of each other (rounding differs from round to round).
std::vector<double> starts(int rounds) {
  std::vector<double> s;
  for (int k = 0; k < rounds; ++k) s.push_back(1e-3 * k + 0.1234567e-3 * std::sqrt(k + 1.0));
  return s;
}

TEST(FluidReplay, RepeatedSessionsAreReplayedWithTheSameDeliveries) {
  FluidNetwork on(mesh_hw(true)), off(mesh_hw(false));
  const Ring ring;
  const auto a = run_rings(on, ring, starts(6)), b = run_rings(off, ring, starts(6));
  ASSERT_EQ(a.size(), 6u * 3 * 16);
  EXPECT_EQ(a, b);  // every delivery at the same time, to the bit
  // A step's 16 messages are all delivered before the first compute ends, so every step is a session
  // of its own; the three steps of a round differ (step 0 sends at once, the others as their inputs
  // arrive), so round 1 records three sessions and rounds 2-6 replay them.
  EXPECT_EQ(on.stats().sessions, 18u);
  EXPECT_EQ(on.stats().recorded, 3u);
  EXPECT_EQ(on.stats().replayed, 15u);
  EXPECT_EQ(on.stats().resimulated, 0u);
  EXPECT_EQ(off.stats().replayed + off.stats().recorded, 0u);
  // Session time does not depend on when a round starts: round 6 sees round 1's times.
  for (int v = 0; v < 16; ++v)
    for (int s = 0; s < 3; ++s) EXPECT_NEAR(a.at({5, s, v}), a.at({0, s, v}), 1e-15);
}

TEST(FluidReplay, ASendThatDepartsFromTheRecordingIsResimulatedFromTheSessionStart) {
  // Round 3 sends one larger message in its last step: that step's session replays round 1's up to
  // that send, then re-simulates and is recorded. Round 4 is round 1 again, round 5 is round 3 again:
  // both replay. 15 sessions (a step is a session), 3 + 1 recorded.
  Ring ring;
  ring.tweak = [](int r, int step, int node) { return (r == 2 || r == 4) && step == 2 && node == 5 ? 9000.0 : 0.0; };
  FluidNetwork on(mesh_hw(true)), off(mesh_hw(false));
  const auto a = run_rings(on, ring, starts(5)), b = run_rings(off, ring, starts(5));
  EXPECT_EQ(a, b);
  EXPECT_GT(a.at({2, 2, 5}), a.at({0, 2, 5}) + 1e-7);  // the larger message arrives later
  EXPECT_EQ(on.stats().sessions, 15u);
  EXPECT_EQ(on.stats().resimulated, 1u);
  EXPECT_EQ(on.stats().recorded, 4u);
  EXPECT_EQ(on.stats().replayed, 11u);
}

TEST(FluidReplay, ALongerComputeReplaysWhenItShiftsASessionAndResimulatesWhenItFallsInsideOne) {
  // A uniformly longer compute only moves whole steps: the same sessions in session time, replayed.
  Ring ring;
  FluidNetwork on(mesh_hw(true)), off(mesh_hw(false));
  run_rings(on, ring, {0.0});
  ring.compute_s = 91e-9;
  run_rings(on, ring, {1e-3});
  EXPECT_EQ(on.stats().recorded, 3u);
  EXPECT_EQ(on.stats().replayed, 3u);
  // Node 0's first message of 64 KB keeps the network busy while the others compute: the compute
  // timers now fall inside a session, where the network is advanced to them, and a longer compute
  // advances it to other times (a departure at an advance, not at a send).
  ring.tweak = [](int, int step, int node) { return step == 0 && node == 0 ? 60000.0 : 0.0; };
  const uint64_t resimulated = on.stats().resimulated;
  for (FluidNetwork* net : {&on, &off}) {
    ring.compute_s = 37e-9;
    run_rings(*net, ring, {2e-3});
    ring.compute_s = 91e-9;
    run_rings(*net, ring, {3e-3});
  }
  EXPECT_GT(on.stats().resimulated, resimulated);
  const uint64_t after = on.stats().resimulated, replayed = on.stats().replayed;
  EXPECT_EQ(run_rings(on, ring, {4e-3}), run_rings(off, ring, {4e-3}));  // the 91 ns round again
  EXPECT_EQ(on.stats().resimulated, after);
  EXPECT_GT(on.stats().replayed, replayed);
}

TEST(FluidReplay, SessionTimesAreOnAGridOfTwoToTheMinusFortySeconds) {
  const double q = std::ldexp(1.0, -40);
  for (double t : {0.0, 1e-12, 3.3e-9, 1.2345678e-6, 0.75e-3}) {
    const double g = FluidNetwork::quantise(t);
    EXPECT_LE(std::abs(g - t), q / 2) << t;
    EXPECT_EQ(std::fmod(g, q), 0.0) << t;
    EXPECT_EQ(FluidNetwork::quantise(g), g) << t;
  }
}

TEST(FluidReplay, AMessageToItselfIsASessionOfItsOwn) {
  FluidNetwork net(mesh_hw(true));
  std::vector<FluidNetwork::Delivery> got;
  for (int k = 0; k < 3; ++k) {
    const double t0 = 1e-6 * k;
    net.send(t0, 3, 3, 100, 7);
    EXPECT_EQ(net.next_event_s(), t0);
    net.advance(t0, got);
    EXPECT_TRUE(net.idle());
  }
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].cookie, 7u);
  EXPECT_EQ(got[2].time_s, 2e-6);
  EXPECT_EQ(net.stats().replayed, 2u);
}

}  // namespace
}  // namespace nmpsim::flow
