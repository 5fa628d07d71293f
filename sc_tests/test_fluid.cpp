// The fluid network of flow fidelity against hand-computed small cases: wire bytes, zero-load
// latency, weighted max-min sharing with the contended-link efficiency, NI queues and the release of a
// queue once a message's tail fits in the buffers of its path, and messages that fit in one VC buffer
// going hop by hop, and hundreds of contended resources at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "mapping_test_util.h"
#include "nmpsim/flow/fluid_replay.h"

namespace nmpsim::flow {
namespace {

using namespace nmpsim::mapping;  // the layer the flow back end executes

/// testing::line_hardware with the presets' router: 2-cycle pipeline, 8-flit VC buffers.
AnalyticalHardware line_hw(int nodes, int ni_queues) {
  AnalyticalHardware hw = testing::line_hardware(nodes);
  hw.router_delay_cycles = 2;
  hw.buffer_flits = 8;
  hw.ni_queues = ni_queues;
  hw.flow_link_efficiency = 0.8;
  return hw;
}

/// Runs the network (a FluidNetwork or a bare FluidEngine) until idle; delivery time by cookie.
template <class Net>
std::map<uint64_t, double> drain(Net& net, int max_steps = 10000) {
  std::map<uint64_t, double> at;
  std::vector<FluidEngine::Delivery> got;
  for (int guard = 0; !net.idle() && guard < max_steps; ++guard) {
    net.advance(net.next_event_s(), got);
    for (const auto& d : got) at[d.cookie] = d.time_s;
    got.clear();
  }
  EXPECT_TRUE(net.idle());
  return at;
}

// Zero-load latency of h hops: the destination router's pipeline (R = 2 cycles), then per hop
// R - 1 + the link's 1 cycle + 1 cycle for the flit on the wire.
double latency(int hops) { return 2e-9 + hops * 3e-9; }

TEST(FluidNetwork, WireBytesAreWholeFlitsOnEveryLinkOfTheXyPath) {
  const FluidNetwork net(line_hw(4, 2));
  EXPECT_EQ(net.wire_bytes(1), 50);
  EXPECT_EQ(net.wire_bytes(100), 100);
  EXPECT_EQ(net.wire_bytes(101), 150);
  std::vector<double> links(4 * 4, 0.0);
  net.add_link_bytes(3, 1, 101, links);  // west: out of 3, out of 2
  net.add_link_bytes(1, 1, 101, links);  // to itself: no link
  for (size_t l = 0; l < links.size(); ++l) EXPECT_EQ(links[l], l == 3 * 4 + 3 || l == 2 * 4 + 3 ? 150 : 0) << l;
  EXPECT_DOUBLE_EQ(net.latency_s(3, 1), latency(2));
  EXPECT_EQ(net.latency_s(2, 2), 0.0);
}

TEST(FluidNetwork, AMessageAloneMovesAtItsInjectionRateAndArrivesAfterTheZeroLoadLatency) {
  FluidNetwork net(line_hw(3, 2));
  net.send(1e-6, 0, 2, 1e6, 7);
  net.send(1e-6, 1, 1, 1e6, 8);  // to itself: at once
  const auto at = drain(net);
  EXPECT_NEAR(at.at(7), 1e-6 + 20e-6 + latency(2), 1e-15);
  EXPECT_EQ(at.at(8), 1e-6);
}

TEST(FluidNetwork, FlowsOnAContendedLinkShareWhatTheEfficiencyLeavesMaxMinFairly) {
  // 0 -> 2 and 1 -> 2 meet on the link 1 -> 2: 0.8 x 50 GB/s, 20 GB/s each; 1 MB takes 50 us.
  FluidNetwork net(line_hw(3, 2));
  net.send(0, 0, 2, 1e6, 1);
  net.send(0, 1, 2, 1e6, 2);
  const auto at = drain(net);
  EXPECT_NEAR(at.at(1), 50e-6 + latency(2), 1e-15);
  EXPECT_NEAR(at.at(2), 50e-6 + latency(1), 1e-15);
}

TEST(FluidNetwork, ARouterSharesAnOutputAmongItsInputPortsNotAmongFlows) {
  // Two messages 0 -> 2 (both NI queues of node 0) and one 1 -> 2 meet on the link 1 -> 2 (40 GB/s
  // usable). Its two input ports get half each: 10 GB/s for each of the two from the west, 20 GB/s
  // for the local one. 1 -> 2 finishes its 1 MB at 50 us; the two then share the links at 20 GB/s
  // each and send their last 0.5 MB in 25 us.
  FluidNetwork net(line_hw(3, 2));
  net.send(0, 0, 2, 1e6, 1);
  net.send(0, 0, 2, 1e6, 2);
  net.send(0, 1, 2, 1e6, 3);
  const auto at = drain(net);
  EXPECT_NEAR(at.at(3), 50e-6 + latency(1), 1e-15);
  EXPECT_NEAR(at.at(1), 75e-6 + latency(2), 1e-14);
  EXPECT_NEAR(at.at(2), 75e-6 + latency(2), 1e-14);
}

TEST(FluidNetwork, OneQueueStartsTheNextMessageWhenTheTailFitsInThePathsBuffers) {
  // One NI queue: 0 -> 1 (1 MB) goes alone at 50 GB/s until its last 800 bytes (2 routers x 8
  // flits x 50 bytes) fit in the buffers, at 19.984 us. Then 0 -> 2 starts; the two share the
  // injection channel and the contended link 0 -> 1 (40 GB/s, 20 GB/s each) until the tail's 800
  // bytes are gone 40 ns later; 0 -> 2 then runs alone at 50 GB/s for its remaining 999200 bytes.
  FluidNetwork net(line_hw(3, 1));
  net.send(0, 0, 1, 1e6, 1);
  net.send(0, 0, 2, 1e6, 2);
  const auto at = drain(net);
  EXPECT_NEAR(at.at(1), 19.984e-6 + 40e-9 + latency(1), 1e-14);
  EXPECT_NEAR(at.at(2), 19.984e-6 + 40e-9 + 999200 / 50e9 + latency(2), 1e-14);
}

TEST(FluidNetwork, AMessageGoesToTheQueueWithTheFewestBytesLeft) {
  // Two queues: 1 MB to node 1 takes one, 10 KB to node 1 the other, and the third message (to
  // node 2) joins the 10 KB queue, which empties first: it does not wait for the 1 MB message.
  FluidNetwork net(line_hw(3, 2));
  net.send(0, 0, 1, 1e6, 1);
  net.send(0, 0, 1, 1e4, 2);
  net.send(0, 0, 2, 1e4, 3);
  const auto at = drain(net);
  EXPECT_LT(at.at(3), 5e-6);
  EXPECT_GT(at.at(1), 20e-6);
}

TEST(FluidNetwork, ASlowLinkLosesToContentionOnlyOnceForEveryFlitItCarries) {
  // A line of two 2-node dies: the die-to-die link 1 -> 2 moves a quarter flit per cycle (12.5 GB/s,
  // 4 cycles per flit), so contention costs it (1 - 0.8) x 0.25 of its bandwidth: 11.875 GB/s for
  // 0 -> 2 and 1 -> 2 together, 5.9375 GB/s each. Per hop latency: R - 1 + 1 + 4 cycles on it.
  AnalyticalHardware hw = line_hw(4, 2);
  hw.topology.die().width = 2;
  hw.topology.links[1].gbytes_per_s = 12.5;
  hw.topology.links[1].latency_ns = 1;
  FluidNetwork net(hw);
  net.send(0, 0, 2, 1e6, 1);
  net.send(0, 1, 2, 1e6, 2);
  const auto at = drain(net);
  EXPECT_NEAR(at.at(1), 1e6 / 5.9375e9 + 2e-9 + 3e-9 + 6e-9, 1e-15);
  EXPECT_NEAR(at.at(2), 1e6 / 5.9375e9 + 2e-9 + 6e-9, 1e-15);
}

TEST(FluidNetwork, BetweenLazySolvesAFinishedFlowsBandwidthStaysIdle) {
  // 0 -> 2 (0.5 MB) and 1 -> 2 (1 MB) share the link 1 -> 2 at 20 GB/s each; the first is done at
  // 25 us. Re-solving at every change, the second then has the link alone (50 GB/s) for its last
  // 0.5 MB: 35 us. With flow_resolve_fraction 1 the next solve waits for two changes, so it keeps 20 GB/s
  // and finishes at 50 us (docs/MODEL.md "Flow-level network").
  for (const double fraction : {0.0, 1.0}) {
    AnalyticalHardware hw = line_hw(3, 2);
    hw.flow_resolve_fraction = fraction;
    FluidNetwork net(hw);
    net.send(0, 0, 2, 0.5e6, 1);
    net.send(0, 1, 2, 1e6, 2);
    const auto at = drain(net);
    EXPECT_NEAR(at.at(1), 25e-6 + latency(2), 1e-15);
    EXPECT_NEAR(at.at(2), (fraction == 0 ? 35e-6 : 50e-6) + latency(1), 1e-15) << fraction;
    EXPECT_EQ(net.solves(), fraction == 0 ? 2u : 1u);
  }
}

TEST(FluidNetwork, AFlowReleasesItsQueueIntoItsShareOfBuffersHeldByOtherFlows) {
  // 0 -> 1, one NI queue, 2 VCs of 400 B per router. Five 500 B messages: the first three fit in the
  // buffer space their two routers give them (800, 800, then 2/3 x 800 = 533 B) and leave the queue at
  // once; the fourth gets 2/4 x 800 = 400 B, so it holds the queue until 400 B are left. The four share
  // the link (0.8 x 50 GB/s) at 10 GB/s: the fifth starts at 10 ns, with a 2/5 x 800 = 320 B share.
  // Five flows at 8 GB/s: the first four finish at 60 ns; the fifth has 100 B left, alone at 50 GB/s.
  FluidNetwork net(line_hw(2, 1));
  for (uint64_t m = 1; m <= 5; ++m) net.send(0, 0, 1, 500, m);
  const auto at = drain(net);
  for (uint64_t m = 1; m <= 4; ++m) EXPECT_NEAR(at.at(m), 60e-9 + latency(1), 1e-15) << m;
  EXPECT_NEAR(at.at(5), 62e-9 + latency(1), 1e-15);
}

TEST(FluidNetwork, KPortsMoveKMessagesToKNeighboursKTimesFaster) {
  // The centre of a 3x3 mesh (50 GB/s links and NI ports) sends 1 MB to each of k neighbours (N, S, E,
  // W in that order), or they send 1 MB each to it. One port: the k flows share its 50 GB/s, k x 20 us. With k ports
  // (a message to the least loaded port; ejection on base::eject_port of its arrival port) each flow has its own:
  // 20 us, as one message alone (docs/MODEL.md "Network interfaces and messages").
  for (bool out : {true, false})
    for (int k : {2, 3, 4}) {
      double last[2] = {0, 0};
      for (int ports : {1, k}) {
        AnalyticalHardware hw = testing::nmp_hardware(3, 3, 1, 50);
        hw.ni_ports = ports;
        hw.ni_queues = 2 * ports;
        FluidNetwork net(hw);
        const int spread[4] = {kNorth, kSouth, kEast, kWest};  // the first k eject on k different ports
        for (int i = 0; i < k; ++i) {
          const int dir = spread[i];
          const int other = neighbour(hw.topology, 4, dir);
          net.send(0, out ? 4 : other, out ? other : 4, 1e6, static_cast<uint64_t>(dir));
        }
        for (const auto& [cookie, t] : drain(net)) last[ports == 1 ? 0 : 1] = std::max(last[ports == 1 ? 0 : 1], t);
      }
      EXPECT_NEAR(last[0], k * 20e-6 + latency(1), 1e-12) << (out ? "inject" : "eject") << " k " << k;
      EXPECT_NEAR(last[1], 20e-6 + latency(1), 1e-12) << (out ? "inject" : "eject") << " k " << k;
      EXPECT_NEAR(last[0] / last[1], k, 0.05 * k);
    }
}

TEST(FluidNetwork, AMessageThatFitsInOneVcBufferGoesHopByHopAndWaitsWhereAnotherIsAhead) {
  // 4-flit messages (200 B, within one 8-flit VC buffer) 0 -> 2 (A) and 1 -> 2 (B) at t = 0; 1 flit
  // per ns everywhere, 3 ns per hop, 2 ns at the end. B has the link 1 -> 2 from 0 to 4 ns, its
  // head is at node 2's ejection port at 3 ns and its tail leaves it at 7 ns: delivered at 9 ns, as
  // alone (4 ns + latency(1)). A's head reaches the link at 3 ns, waits until 4 ns and then crosses
  // it at the contended rate (0.8 x 50 GB/s: 5 ns) until 9 ns; its head is at the ejection port at
  // 7 ns, when B has left it, and its tail follows 3 ns after leaving the link: 12 ns, delivered at
  // 14 ns (alone: 4 ns + latency(2) = 12 ns).
  FluidNetwork net(line_hw(3, 2));
  net.send(0, 0, 2, 200, 1);
  net.send(0, 1, 2, 200, 2);
  const auto at = drain(net);
  EXPECT_NEAR(at.at(2), 4e-9 + latency(1), 1e-15);
  EXPECT_NEAR(at.at(1), 14e-9, 1e-15);
  FluidNetwork alone(line_hw(3, 2));
  alone.send(0, 0, 2, 200, 1);
  EXPECT_NEAR(drain(alone).at(1), 4e-9 + latency(2), 1e-15);
}

TEST(FluidNetwork, AHopMessageGetsItsInputsTurnBesideFluidFlows) {
  // A 1 MB flow 0 -> 2 holds the link 1 -> 2 (entering from the west); a 200 B message 1 -> 2 enters
  // it from node 1's NI, one of two busy inputs: half of 0.8 x 50 GB/s, 10 ns on the link. At the
  // ejection port it shares the flow's input (the link), which the flow already uses: no one else
  // there, 4 ns, and its tail leaves 3 ns after the link's: 13 ns, delivered at 15 ns. The flow does
  // not see it (docs/MODEL.md "Flow-level network").
  FluidNetwork net(line_hw(3, 2));
  net.send(0, 0, 2, 1e6, 1);
  net.send(0, 1, 2, 200, 2);
  const auto at = drain(net);
  EXPECT_NEAR(at.at(2), 15e-9, 1e-15);
  EXPECT_NEAR(at.at(1), 20e-6 + latency(2), 1e-15);
}

TEST(FluidNetwork, AHopMessageHasTheWholeLinkOnceTheFluidFlowsBesideItFinish) {
  // As above with a 500 B flow (10 flits, over one buffer: a fluid flow, done at 10 ns at 1 flit per
  // ns) and an 8-flit hop message 1 -> 2: on the link it has 0.4 flit/ns until 10 ns (4 flits), then
  // the whole link, 1 flit/ns (4 flits, 4 ns): its tail leaves the link at 14 ns, the ejection port
  // 3 ns later, delivered at 19 ns. (At its share throughout: 20 ns on the link, delivered at 25 ns.)
  FluidNetwork net(line_hw(3, 2));
  net.send(0, 0, 2, 500, 1);
  net.send(0, 1, 2, 400, 2);
  const auto at = drain(net);
  EXPECT_NEAR(at.at(2), 19e-9, 1e-15);
  EXPECT_NEAR(at.at(1), 10e-9 + latency(2), 1e-15);
}

TEST(FluidNetwork, SmallMessagesSpreadOverTheNiPortsAsAtCycleLevel) {
  // The centre of a 3x3 mesh sends 64 two-flit messages (100 B), N, S, E, W in turn. Each counts on
  // its queue until its last byte has left, so with four ports message i goes to port i mod 4: 16
  // messages, 32 flits per port and per link, the last delivered at 32 ns + latency(1). With one
  // port they queue for it: 128 flits, 128 ns + latency(1). (Counted off at their start, as before
  // 2026-11-27, all 64 went to port 0 with four ports too.)
  for (const int ports : {1, 4}) {
    AnalyticalHardware hw = testing::nmp_hardware(3, 3, 1, 50);
    hw.router_delay_cycles = 2;
    hw.buffer_flits = 8;
    hw.ni_ports = ports;
    hw.ni_queues = 2 * ports;
    FluidNetwork net(hw);
    const int dirs[4] = {kNorth, kSouth, kEast, kWest};
    for (int i = 0; i < 64; ++i) net.send(0, 4, neighbour(hw.topology, 4, dirs[i % 4]), 100, static_cast<uint64_t>(i));
    double last = 0;
    for (const auto& [cookie, t] : drain(net)) last = std::max(last, t);
    EXPECT_NEAR(last, (ports == 1 ? 128e-9 : 32e-9) + latency(1), 1e-15) << ports;
  }
}

TEST(FluidNetwork, HundredsOfContendedResourcesEachGetTheirMaxMinShare) {
  // 150 disjoint pairs on a line of 300 nodes: node 2i sends k = 1 + i mod 8 messages of 1 MB to node
  // 2i + 1, one on each of its NI queues. More than the 128 resources the filling examines at once
  // (docs/PERFORMANCE.md "Scale"), and most of them tied at one level. A lone message has its link
  // (50 GB/s); k > 1 share what the efficiency leaves, 0.8 x 50 GB/s / k each, and finish together.
  FluidNetwork net(line_hw(300, 8));
  for (int i = 0; i < 150; ++i)
    for (int j = 0; j <= i % 8; ++j) net.send(0, 2 * i, 2 * i + 1, 1e6, static_cast<uint64_t>(i * 8 + j));
  const auto at = drain(net);
  ASSERT_EQ(at.size(), size_t{150 / 8 * 36 + 21});  // 18 full cycles of 1..8, then 1..6
  for (const auto& [cookie, t] : at) {
    const int k = 1 + static_cast<int>(cookie / 8) % 8;
    EXPECT_NEAR(t, (k == 1 ? 1e6 / 50e9 : k * 1e6 / 40e9) + latency(1), 1e-13) << cookie;
  }
}

TEST(FluidNetwork, TheFillingsNearResourcesGiveTheRatesOfAScanOfEveryResource) {
  // Random traffic on a 6x6 mesh (many distinct levels, ties from equal sizes, lazy and exact
  // solving): rounds that look only at the resources near the level, re-chosen 1, 2 or 7 at a
  // time, give the same delivery times to the bit as the plain progressive filling, which scans
  // every resource in every round (a near set larger than the mesh's resources).
  for (const double fraction : {0.0, 0.05}) {
    AnalyticalHardware hw = testing::nmp_hardware(6, 6, 1, 50);
    hw.router_delay_cycles = 2;
    hw.buffer_flits = 8;
    hw.ni_queues = 4;
    hw.flow_link_efficiency = 0.8;
    hw.flow_resolve_fraction = fraction;
    const auto run = [&](size_t near) {
      FluidEngine net(hw);
      net.set_near_size(near);
      std::mt19937_64 rng(12345);
      std::uniform_int_distribution<int> node(0, 35), kbytes(1, 300);
      for (uint64_t i = 0; i < 600; ++i) {
        const int src = node(rng), dst = node(rng);
        net.send(0, src, dst, 1000.0 * kbytes(rng), i);
      }
      return drain(net, 100000);
    };
    const auto all = run(100000);
    ASSERT_EQ(all.size(), 600u);
    for (const size_t near : {1, 2, 7}) EXPECT_EQ(run(near), all) << near << " " << fraction;
  }
}

}  // namespace
}  // namespace nmpsim::flow
