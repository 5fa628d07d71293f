// The SystemC wrapper: timing convention, agreement with the plain driver, idle-cycle skipping.
// Each TEST runs in its own process (one SystemC elaboration each).
#include <gtest/gtest.h>

#include <systemc>

#include "nmpsim/noc/mesh_module.h"
#include "nmpsim/noc/testbench.h"
#include "noc_test_util.h"

namespace nmpsim::noc {
namespace {

using sc_core::sc_time;

struct Sender : sc_core::sc_module {
  SC_HAS_PROCESS(Sender);
  Sender(sc_core::sc_module_name n, MeshModule& m) : sc_module(n), mesh(m) { SC_THREAD(run); }
  MeshModule& mesh;
  std::vector<std::tuple<sc_time, int, int, uint64_t>> plan;  // when, src, dst, bytes
  void run() {
    for (const auto& [when, src, dst, bytes] : plan) {
      if (when > sc_core::sc_time_stamp()) wait(when - sc_core::sc_time_stamp());
      mesh.send(src, dst, bytes);
    }
  }
};

TEST(NocSystemC, DeliveryTimeMatchesClosedFormInSimulatedTime) {
  NocConfig cfg;
  cfg.width = 5;
  cfg.height = 4;
  cfg.clock_ghz = 2.0;  // 500 ps period
  MeshModule mesh("mesh", cfg);
  Sender sender("sender", mesh);
  const sc_time period(500, sc_core::SC_PS);
  ASSERT_EQ(mesh.period(), period);
  // Sent exactly at the clock edge of cycle 7: injectable in cycle 7.
  sender.plan.emplace_back(7 * period, 0, 19, 3 * cfg.flit_bytes);
  std::vector<std::pair<sc_time, Delivery>> got;
  mesh.set_delivery_handler([&](const Delivery& d) { got.emplace_back(sc_core::sc_time_stamp(), d); });
  sc_core::sc_start(sc_time(1, sc_core::SC_US));
  ASSERT_EQ(got.size(), 1u);
  const uint64_t lat = testing::closed_form_latency(cfg, 0, 19, 3);
  EXPECT_EQ(got[0].second.create_cycle, 7u);
  EXPECT_EQ(got[0].second.deliver_cycle, 7u + lat);
  // Cycle c is evaluated at (c + 1/2) periods.
  EXPECT_EQ(got[0].first, (7.0 + lat + 0.5) * period);
}

TEST(NocSystemC, SystemCTestbenchEqualsDirectDriverBitForBit) {
  TestbenchConfig tb;
  tb.noc.width = 6;
  tb.noc.height = 6;
  tb.traffic.injection_rate = 0.25;
  tb.traffic.pattern = TrafficPattern::kUniform;
  tb.warmup_cycles = 1000;
  tb.measure_cycles = 5000;
  const TestbenchResult direct = run_testbench_direct(tb);
  const TestbenchResult sc = run_testbench(tb);
  EXPECT_EQ(sc.conservation_error, "");
  EXPECT_TRUE(sc.drained);
  EXPECT_EQ(sc.injected_flits, direct.injected_flits);
  EXPECT_EQ(sc.stats.accepted_flits, direct.stats.accepted_flits);
  EXPECT_EQ(sc.stats.offered_flits, direct.stats.offered_flits);
  EXPECT_EQ(sc.stats.packet_latency_cycles.avg, direct.stats.packet_latency_cycles.avg);
  EXPECT_EQ(sc.stats.packet_latency_cycles.max, direct.stats.packet_latency_cycles.max);
  EXPECT_EQ(sc.simulated_cycles, direct.simulated_cycles);
  for (size_t i = 0; i < sc.stats.links.size(); ++i) EXPECT_EQ(sc.stats.links[i].flits, direct.stats.links[i].flits);
}

TEST(NocSystemC, IdleCyclesAreSkipped) {
  NocConfig cfg;
  MeshModule mesh("mesh", cfg);
  Sender sender("sender", mesh);
  const sc_time period = mesh.period();
  sender.plan.emplace_back(sc_core::SC_ZERO_TIME, 0, 63, 64);
  sender.plan.emplace_back(10'000'000 * period, 63, 0, 64);
  int delivered = 0;
  mesh.set_delivery_handler([&](const Delivery&) { ++delivered; });
  sc_core::sc_start(10'001'000 * period);
  EXPECT_EQ(delivered, 2);
  // Each message needs about 30 evaluated cycles; the 10 million idle cycles between them cost nothing.
  EXPECT_LT(mesh.network().steps(), 100u);
  EXPECT_EQ(mesh.network().check_conservation(), "");
}

}  // namespace
}  // namespace nmpsim::noc
