// The router-agnostic checks (docs/RTL.md) catch a deliberately broken RTL router: one-line
// mutants of la_router.sv and of its shells, built the way a router of your own is (nmpsim_add_router_rtl and its
// description file), each at the centre of a 3x3 mesh of look-ahead models. Each test is its own
// ctest case (one SystemC simulation each).
#include <gtest/gtest.h>

#include <string>

#include "nmpsim/noc/testbench.h"
#include "nmpsim/noc/traffic.h"
#include "nmpsim/noc/valid_stop_adapter.h"
#include "nmpsim/rtl_checks/described_router.h"

namespace nmpsim::rtl {
void register_rtl_la_broken_xy();
void register_rtl_la_broken_drop();
void register_rtl_la_broken_dup();
void register_rtl_la_broken_stop();
void register_rtl_la_vr_broken_hold();
void register_rtl_la_credit_broken_credit();
void register_rtl_la_vr_broken_comb();
}  // namespace nmpsim::rtl

namespace nmpsim::noc {
namespace {

/// A busy 3x3 mesh of look-ahead routers whose centre runs the broken RTL `name`.
TestbenchResult run_broken(const std::string& name, TrafficPattern pattern = TrafficPattern::kUniform) {
  static const bool registered = [] {
    rtl::register_rtl_la_broken_xy();
    rtl::register_rtl_la_broken_drop();
    rtl::register_rtl_la_broken_dup();
    rtl::register_rtl_la_broken_stop();
    rtl::register_rtl_la_vr_broken_hold();
    rtl::register_rtl_la_credit_broken_credit();
    rtl::register_rtl_la_vr_broken_comb();
    return true;
  }();
  (void)registered;
  TestbenchConfig cfg;
  cfg.noc.width = cfg.noc.height = 3;
  cfg.noc.vcs = 1;
  cfg.noc.buffer_flits = 4;
  cfg.noc.watchdog_cycles = 500;
  cfg.traffic.injection_rate = 0.45;
  cfg.traffic.pattern = pattern;
  cfg.traffic.hotspot_node = 5;  // east of the centre
  cfg.traffic.hotspot_fraction = 0.8;
  cfg.warmup_cycles = 0;
  cfg.measure_cycles = 3000;
  cfg.max_drain_cycles = 20000;  // the hotspot is far beyond saturation
  return run_pin_testbench(cfg, rtl::described_factory(
                                    name, [](int n) { return n == 4; }, la_model_factory()));
}

std::string everything(const TestbenchResult& r) {
  return r.conservation_error + " | " + r.router_error + " | " + r.stall_report;
}

TEST(BrokenRtl, AnXyViolationIsCaught) {
  const TestbenchResult r = run_broken("la_broken_xy");
  EXPECT_NE(r.conservation_error.find("router 4 (1,1) sent flit"), std::string::npos) << everything(r);
  EXPECT_NE(r.conservation_error.find("on port S; XY routing takes E"), std::string::npos) << everything(r);
}

TEST(BrokenRtl, ADroppedFlitIsCaught) {
  const TestbenchResult r = run_broken("la_broken_drop", TrafficPattern::kHotspot);
  EXPECT_NE(r.conservation_error.find("router 4 (1,1) "), std::string::npos) << everything(r);
  // The next flit of that packet, or the next packet's head, breaks the wormhole order at once.
  EXPECT_NE(r.conservation_error.find("(wormhole order broken)"), std::string::npos) << everything(r);
}

TEST(BrokenRtl, ADuplicatedFlitIsCaught) {
  const TestbenchResult r = run_broken("la_broken_dup");
  EXPECT_NE(r.conservation_error.find("router 4 (1,1) sent flit"), std::string::npos) << everything(r);
  EXPECT_NE(r.conservation_error.find("which it does not hold (duplicated or forged)"), std::string::npos)
      << everything(r);
}

TEST(BrokenRtl, AHandshakeViolationIsCaught) {
  const TestbenchResult r = run_broken("la_broken_stop", TrafficPattern::kHotspot);
  EXPECT_NE(r.conservation_error.find("router 4 (1,1) sent flit"), std::string::npos) << everything(r);
  EXPECT_NE(r.conservation_error.find("without a credit"), std::string::npos) << everything(r);
}

TEST(BrokenRtl, AValidReadyRouterThatDropsAFlitItPresentedIsCaught) {
  const TestbenchResult r = run_broken("la_vr_broken_hold", TrafficPattern::kHotspot);
  EXPECT_NE(r.router_error.find("router 4 (1,1) (rtl): the flit presented on E was withdrawn before ready took it"),
            std::string::npos)
      << everything(r);
}

TEST(BrokenRtl, ACreditRouterThatIgnoresItsCreditsIsCaught) {
  const TestbenchResult r = run_broken("la_credit_broken_credit", TrafficPattern::kHotspot);
  EXPECT_NE(r.conservation_error.find("router 4 (1,1) sent flit"), std::string::npos) << everything(r);
  EXPECT_NE(r.conservation_error.find("without a credit"), std::string::npos) << everything(r);
}

TEST(BrokenRtl, AnOutputThatDependsOnAnInputWithinTheCycleIsCaught) {
  // out_valid & out_ready: a flit offered while the downstream is not ready vanishes between edges.
  const TestbenchResult r = run_broken("la_vr_broken_comb", TrafficPattern::kHotspot);
  EXPECT_NE(r.router_error.find("router 4 (1,1) (rtl): output out_valid on "), std::string::npos) << everything(r);
  EXPECT_NE(r.router_error.find("a combinational path from an input pin to an output pin"), std::string::npos)
      << everything(r);
}

TEST(BrokenRtl, AStallAfterAViolationIsReportedWithTheViolationFirst) {
  // The dropped flit leaves its packet open: the mesh stalls later, and the report says why.
  const TestbenchResult r = run_broken("la_broken_drop", TrafficPattern::kHotspot);
  ASSERT_TRUE(r.stalled) << everything(r);
  const size_t order = r.stall_report.find("(wormhole order broken)"), stall = r.stall_report.find("then a stall");
  EXPECT_NE(order, std::string::npos) << r.stall_report;
  EXPECT_LT(order, stall) << r.stall_report;
}

void expect_unbroken(const char* name) {
  const TestbenchResult r = run_broken(name, TrafficPattern::kHotspot);  // the harder of the two patterns
  EXPECT_EQ(r.conservation_error, "") << name;
  EXPECT_EQ(r.router_error, "") << name;
  EXPECT_TRUE(r.drained) << name;
  EXPECT_GT(r.ejected_flits, 1000u) << name;
}

TEST(BrokenRtl, TheUnbrokenRouterPassesTheSameRun) { expect_unbroken("la"); }
TEST(BrokenRtl, TheUnbrokenValidReadyShellPassesTheSameRun) { expect_unbroken("la_vr"); }
TEST(BrokenRtl, TheUnbrokenCreditShellPassesTheSameRun) { expect_unbroken("la_credit"); }

}  // namespace
}  // namespace nmpsim::noc
