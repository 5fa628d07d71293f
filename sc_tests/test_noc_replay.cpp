// Session replay (noc/session_cache.h): a network that replays repeated sessions must deliver every
// message in the same cycle, in the same order, and end with the same counters as one that simulates
// every flit. The expectation is the engine without replay, run on the same closed-loop workload.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "nmpsim/noc/bits.h"
#include "nmpsim/noc/network.h"
#include "nmpsim/noc/session_cache.h"

namespace nmpsim::noc {
namespace {

struct Msg {
  int src, dst;
  uint64_t bytes;
};

/// A phase: messages sent together; `chain`: each delivery of the phase sends one follow-up message
/// from its handler (a ring step), of `chain_bytes`.
struct Phase {
  std::vector<Msg> msgs;
  uint64_t chain_bytes = 0;
  uint64_t gap_cycles = 40;  // "compute" between the end of this phase and the next one
  uint64_t tail_bytes = 0;   // the last delivery of `msgs` sends one more message from its handler
};

/// Emulates noc::MeshModule: steps the cycles next_event_cycle() names and the cycles sends ask for;
/// the firmware sends a phase `gap` cycles after the previous one's last delivery.
class Driver {
 public:
  Driver(const NocConfig& cfg, bool replay, std::vector<Phase> phases) : net_(cfg), phases_(std::move(phases)) {
    net_.set_session_replay(replay);
    net_.set_delivery_handler([this](const Delivery& d) { on_delivery(d); });
  }
  std::string run() {
    start_phase(0, 0);
    uint64_t c = 0;
    bool stepped = false;
    for (int guard = 0; guard < 10'000'000; ++guard) {
      uint64_t next = stepped ? net_.next_event_cycle(c) : kNever;
      next = std::min(next, wake_);
      if (next_phase_ < phases_.size()) next = std::min(next, phase_at_);
      if (next == kNever) break;
      if (next_phase_ < phases_.size() && phase_at_ == next) start_phase(next_phase_, next);
      if (wake_ <= next) wake_ = kNever;
      if (!net_.step(next)) return "stalled: " + net_.stall_report();
      if (phase_done_ && net_.idle()) {  // where an owner may stop the clock and read the counters
        net_.settle_counters();
        snapshots_ << link_counters() << '\n';
      }
      phase_done_ = false;
      stepped = true;
      c = next;
    }
    return log_.str();
  }
  Network& net() { return net_; }
  /// The link counters at the end of each phase, read as soon as the network is idle.
  std::string snapshots() const { return snapshots_.str(); }

 private:
  void send(int src, int dst, uint64_t bytes, uint64_t cycle, uint64_t tag) {
    net_.send(src, dst, bytes, cycle, tag);
    wake_ = std::min(wake_, cycle);
  }
  void start_phase(size_t p, uint64_t cycle) {
    const Phase& ph = phases_[p];
    next_phase_ = p + 1;
    phase_at_ = kNever;
    outstanding_ = ph.msgs.size() * (ph.chain_bytes ? 2 : 1) + (ph.tail_bytes ? 1 : 0);
    firsts_left_ = ph.msgs.size();
    for (const Msg& m : ph.msgs) send(m.src, m.dst, m.bytes, cycle, p * 1000 + 1);
  }
  void on_delivery(const Delivery& d) {
    log_ << d.message_id << ' ' << d.src << ' ' << d.dst << ' ' << d.bytes << ' ' << d.tag << ' ' << d.create_cycle
         << ' ' << d.deliver_cycle << ' ' << net_.idle() << '\n';
    const size_t p = d.tag / 1000;
    const Phase& ph = phases_[p];
    if (d.tag % 1000 == 1 && ph.chain_bytes)
      send(d.dst, (d.dst + 1) % net_.nodes(), ph.chain_bytes, d.deliver_cycle + 1, p * 1000 + 2);
    if (d.tag % 1000 == 1 && --firsts_left_ == 0 && ph.tail_bytes)
      send(d.dst, (d.dst + 5) % net_.nodes(), ph.tail_bytes, d.deliver_cycle + 1, p * 1000 + 3);
    if (--outstanding_ == 0) {
      phase_done_ = true;
      if (next_phase_ < phases_.size()) phase_at_ = d.deliver_cycle + ph.gap_cycles;
    }
  }
  std::string link_counters() const {
    std::ostringstream os;
    os << net_.injected_flits() << ' ' << net_.ejected_flits() << ' ' << net_.flit_link_traversals();
    for (int i = 0; i < net_.nodes(); ++i)
      for (int p = 0; p < kNumPorts; ++p) os << ' ' << net_.router(i).flits_out(p);
    return os.str();
  }

  Network net_;
  std::vector<Phase> phases_;
  size_t next_phase_ = 0;
  uint64_t phase_at_ = kNever, wake_ = kNever;
  size_t outstanding_ = 0, firsts_left_ = 0;
  bool phase_done_ = false;
  std::ostringstream log_, snapshots_;
};

NocConfig small_mesh() {
  NocConfig cfg;
  cfg.width = 4;
  cfg.height = 4;
  cfg.flit_bytes = 16;
  cfg.max_packet_flits = 8;
  return cfg;
}

Phase all_to_all(int n, uint64_t bytes, uint64_t gap) {
  Phase p;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (s != d) p.msgs.push_back({s * 3 % 16, d * 5 % 16, bytes + static_cast<uint64_t>(s)});
  p.gap_cycles = gap;
  return p;
}

/// Every counter a run reports, in one string.
std::string counters(const Network& net) {
  std::ostringstream os;
  os << net.injected_flits() << ' ' << net.ejected_flits() << ' ' << net.flit_link_traversals() << ' '
     << net.delivered_messages() << ' ' << net.sent_messages() << ' ' << net.check_conservation() << '\n';
  for (int i = 0; i < net.nodes(); ++i) {
    const Router& r = net.router(i);
    for (int p = 0; p < kNumPorts; ++p) os << r.flits_out(p) << ' ';
    os << r.occupancy_flit_cycles(net.last_cycle()) << ' ' << r.max_buffered_flits() << '\n';
  }
  return os.str();
}

void expect_same_as_without_replay(const NocConfig& cfg, const std::vector<Phase>& phases, uint64_t min_replayed,
                                   uint64_t min_diverged) {
  Driver plain(cfg, false, phases), replay(cfg, true, phases);
  const std::string want = plain.run();
  const std::string got = replay.run();
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(got, want);
  EXPECT_EQ(counters(replay.net()), counters(plain.net()));
  EXPECT_EQ(replay.snapshots(), plain.snapshots()) << "link counters read when the network goes idle";
  const auto& rc = replay.net().replay_counters();
  EXPECT_GE(rc.replayed, min_replayed);
  EXPECT_GE(rc.diverged, min_diverged);
  EXPECT_EQ(plain.net().replay_counters().replayed, 0u);
}

TEST(NocReplay, RepeatedCollectivesAreReplayedWithTheSameDeliveries) {
  std::vector<Phase> phases;
  for (int i = 0; i < 12; ++i) phases.push_back(all_to_all(4, 300, 50));
  expect_same_as_without_replay(small_mesh(), phases, 6, 0);
}

TEST(NocReplay, SessionsThatDepartFromTheRecordingAreResimulated) {
  // The same first sends, then a different message late in the phase (outside a cycle), a different
  // follow-up from a delivery handler (inside a cycle), and phases that start while credits of the
  // last are still on their way back (one session in place of two).
  const Phase a = all_to_all(4, 300, 50);
  Phase late = a;
  late.msgs.back().bytes += 64;
  Phase chain = a;
  chain.chain_bytes = 200;
  Phase chain2 = chain;
  chain2.chain_bytes = 260;
  Phase tight = a;
  tight.gap_cycles = 1;
  std::vector<Phase> phases{chain, chain, a, a, tight, a, tight, tight};
  for (int i = 0; i < 3; ++i)
    for (const Phase& p : {a, late, a, chain, chain, chain2, tight, a, a, chain2, late}) phases.push_back(p);
  expect_same_as_without_replay(small_mesh(), phases, 4, 2);
}

TEST(NocReplay, CountersAreCompleteWhenTheNetworkGoesIdle) {
  // Recordings that go on past the end of a shorter session: phases whose successor starts while the
  // credits of their slow links are on their way back (one session), and a phase whose last delivery
  // sends one more message. The counters read (after settle_counters) when each phase's last message
  // is delivered must be those of simulating every flit. The case where only longer recordings agree
  // with the session when it goes idle is CliRun.SessionReplayCountsEveryLinkFlitWhenTheStepEndsMidSession.
  NocConfig cfg = small_mesh();
  for (int node = 0; node < 16; ++node)
    for (int dir = 0; dir < 4; ++dir)
      if (MeshGeometry{4, 4}.neighbour(node, dir) >= 0) cfg.set_link(node, dir, LinkSpec{12, 1.0});
  const Phase a = all_to_all(4, 300, 50);
  Phase tight = a, tail = a;
  tight.gap_cycles = 1;
  tail.tail_bytes = 400;
  Phase one;
  one.msgs.push_back({2, 9, 500});
  std::vector<Phase> phases;
  for (int i = 0; i < 6; ++i)
    for (const Phase& p : {tight, one, a, tight, one, a, a, tail, a}) phases.push_back(p);
  expect_same_as_without_replay(cfg, phases, 4, 2);
}

TEST(NocReplay, LocalMessagesAndSlowLinksAreReplayed) {
  NocConfig cfg = small_mesh();
  for (int node = 0; node < 16; ++node)
    if (node % 4 != 3) cfg.set_link(node, 1, LinkSpec{3, 0.25});  // East links: 4 cycles per flit
  Phase p = all_to_all(3, 500, 20);
  p.msgs.push_back({5, 5, 1000});  // to itself: no network
  p.chain_bytes = 48;
  Phase tight = p;  // starts while the credits of the slow links are still on their way back
  tight.gap_cycles = 1;
  std::vector<Phase> phases(10, p);
  phases.insert(phases.end(), {tight, p, tight, p, tight, tight, p, p});
  expect_same_as_without_replay(cfg, phases, 4, 1);
}

TEST(NocReplay, SamePickStartsAreExactlyThePointersWithTheSamePick) {
  // Brute force: pointer value v is in the set iff the arbiter started at v picks what it picks at start.
  for (int n : {2, 3, 5, 8, 40})
    for (uint64_t mask = 1; mask < (uint64_t{1} << std::min(n, 10)); mask += 7)
      for (int start = 0; start < n; ++start) {
        const uint64_t m = n > 10 ? mask * 0x9E3779B1ull & low_bits(n) : mask;
        if (!m) continue;
        const uint64_t same = same_pick_starts(m, start, n);
        for (int v = 0; v < n; ++v)
          ASSERT_EQ(same >> v & 1, round_robin_pick(m, v, n) == round_robin_pick(m, start, n) ? 1u : 0u)
              << "n " << n << " mask " << m << " start " << start << " v " << v;
        EXPECT_EQ(same & ~low_bits(n), 0u);
      }
}

TEST(NocReplay, StepListsKeepRunsOfConsecutiveCycles) {
  // A collective that keeps the network busy evaluates every cycle: one run, whatever its length.
  StepList busy;
  for (uint64_t c = 0; c < 5'000'000; ++c) busy.push_back(c);
  EXPECT_EQ(busy.size(), 5'000'000u);
  EXPECT_EQ(busy.runs(), 1u);
  EXPECT_LT(busy.footprint_bytes(), 1024u);
  // Runs with gaps: read in order, backwards and at random, against the plain list.
  std::vector<uint64_t> plain;
  StepList steps;
  uint64_t c = 3;
  for (int i = 0; i < 2000; ++i) {
    c += (i % 7 == 0) ? 1 + static_cast<uint64_t>(i % 13) : 1;
    plain.push_back(c);
    steps.push_back(c);
  }
  EXPECT_EQ(steps.size(), plain.size());
  EXPECT_LT(steps.runs(), plain.size() / 5);
  for (size_t n = 0; n < plain.size(); ++n) ASSERT_EQ(steps[n], plain[n]) << n;
  for (size_t n = plain.size(); n-- > 0;) ASSERT_EQ(steps[n], plain[n]) << n;
  for (size_t k = 0; k < 5000; ++k) {
    const size_t n = (k * 7919) % plain.size();
    ASSERT_EQ(steps[n], plain[n]) << n;
  }
}

TEST(NocReplay, OffUnlessAskedAndOffForGoodWithAMeasurementWindow) {
  Network net(small_mesh());
  EXPECT_FALSE(net.session_replay());
  net.set_session_replay(true);
  EXPECT_TRUE(net.session_replay());
  net.begin_measurement(0);
  EXPECT_FALSE(net.session_replay());
  net.set_session_replay(true);
  EXPECT_FALSE(net.session_replay());
}

}  // namespace
}  // namespace nmpsim::noc
