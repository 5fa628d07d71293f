// Area and static power as functions of the design point (hw/cost_model.h), against hand-computed
// figures from the coefficients of docs/MODEL.md "Area and power".
#include <gtest/gtest.h>

#include "hw_test_util.h"
#include "nmpsim/hw/cost_model.h"
#include "nmpsim/hw/hardware_spec.h"

namespace nmpsim::hw {
namespace {

using json = nlohmann::json;
using testing::error_of;

constexpr double kMiB = 1024.0 * 1024.0;

TEST(CostModel, TheNmpChipByHand) {
  const CostReport c = cost_report(preset("nmp-4x8-5t50g"));
  EXPECT_EQ(c.nodes, 32);
  EXPECT_NEAR(c.logic_mm2, 5 * 0.82, 1e-12);  // 5 TFLOP/s at 0.82 mm^2 each
  EXPECT_NEAR(c.dram_mm2, 8 * 33.0, 1e-9);    // 8 GiB at 33 mm^2/GiB
  // Flit buffers: 50-byte flits (the 50 GB/s link at 1 GHz), 8 flits per VC (the credit round trip of
  // 1-cycle links is under 8), 2 VCs, 4 mesh ports + 2 x 1 NI port.
  const double buffer_bytes = 6 * 2 * 8 * 50.0;
  EXPECT_NEAR(c.buffer_mm2, buffer_bytes / kMiB * 4.2, 1e-12);
  EXPECT_EQ(c.phy_mm2, 0);  // one die: no link leaves it
  EXPECT_NEAR(c.compute_static_w, 4.1 * 0.122, 1e-12);
  EXPECT_NEAR(c.dram_background_w, 0.3, 1e-12);
  EXPECT_NEAR(c.noc_static_w, c.buffer_mm2 * 0.122, 1e-15);
  EXPECT_NEAR(c.total_static_w(), 32 * (0.5002 + 0.3 + c.noc_static_w), 1e-9);
  EXPECT_NEAR(c.total_mm2(), 32 * (4.1 + 264 + c.buffer_mm2), 1e-9);
}

TEST(CostModel, StaticPowerAndAreaFollowComputeAndCapacity) {
  HardwareSpec a = preset("nmp-4x4-5t50g");
  HardwareSpec b = a;
  b.compute.peak_flops *= 2;
  b.memory.capacity_bytes *= 2;
  const CostReport ca = cost_report(a), cb = cost_report(b);
  EXPECT_NEAR(cb.logic_mm2, 2 * ca.logic_mm2, 1e-12);
  EXPECT_NEAR(cb.compute_static_w, 2 * ca.compute_static_w, 1e-12);
  EXPECT_NEAR(cb.dram_mm2, 2 * ca.dram_mm2, 1e-9);
  EXPECT_NEAR(cb.dram_background_w, 2 * ca.dram_background_w, 1e-12);
  // Faster links, wider flits: the router's buffers grow with the flit (25 -> 100 GB/s: 4x).
  HardwareSpec c = a;
  c.topology.links[0].gbytes_per_s = 4 * a.topology.links[0].gbytes_per_s;
  EXPECT_NEAR(cost_report(c).buffer_mm2, 4 * ca.buffer_mm2, 1e-12);
  // The 10 TFLOP/s preset's PE leaks twice the 5 TFLOP/s one's.
  EXPECT_NEAR(cost_report(preset("nmp-4x4-10t25g")).compute_static_w, 2 * ca.compute_static_w, 1e-12);
}

TEST(CostModel, WaferPresetKeepsItsDieFigures) {
  const CostReport c = cost_report(preset("wsc-4x4"));
  EXPECT_NEAR(c.logic_mm2, 2250 * 0.72, 1e-9);
  EXPECT_NEAR(c.compute_static_w, 100, 1e-9);  // 10% of a 1000 W die, as before
  EXPECT_NEAR(c.dram_background_w, 12, 1e-9);  // 8 HBM stacks at 1.5 W
  // Every link is die-to-die (one die per node): 4x4 mesh, 24 links, 48 node-neighbour pairs. Each
  // node has per neighbour a PHY for 4000 GB/s out and 4000 in (UCIe's density counts both), and
  // each direction's idle power is counted once.
  EXPECT_NEAR(c.phy_mm2, 48 * 2 * 4000 * 0.00074 / 16, 1e-9);
  const double phy_w = 48 * 4000e9 * 8 * 0.1e-12 * 0.15 / 16;
  EXPECT_NEAR(c.noc_static_w, phy_w + c.buffer_mm2 * c.compute_static_w / c.logic_mm2, 1e-9);
}

TEST(CostModel, FixedStaticPowerIsTheGivenFigures) {
  const CostReport c = cost_report(preset("gpu-cluster-32"));
  EXPECT_EQ(c.compute_static_w, 30);
  EXPECT_EQ(c.dram_background_w, 10);
  EXPECT_EQ(c.noc_static_w, 0);
  EXPECT_GT(c.logic_mm2, 0);  // area is reported either way
}

TEST(CostModel, ADescriptionWithoutACostObjectReadsAsBefore) {
  json j = to_json(preset("nmp-4x4-5t50g"));
  EXPECT_EQ(j["cost"]["static_power"], "scaled");
  EXPECT_FALSE(j["compute"].contains("static_w"));  // scaled: the fixed figures are not written
  EXPECT_EQ(hardware_from_json(j, "again").cost.static_power, StaticPower::kScaled);
  // Without a "cost" object (a description of before issue 40): fixed, at the old defaults.
  j.erase("cost");
  const HardwareSpec old = hardware_from_json(j, "old.json");
  EXPECT_EQ(old.cost.static_power, StaticPower::kFixed);
  EXPECT_EQ(cost_report(old).compute_static_w, 0.5);
  EXPECT_EQ(cost_report(old).dram_background_w, 0.3);
}

TEST(CostModel, AGivenStaticFigureWithoutAChoiceMakesStaticPowerFixed) {
  json j = to_json(preset("nmp-4x4-5t50g"));
  j["cost"].erase("static_power");
  j["compute"]["static_w"] = 2.0;
  const HardwareSpec s = hardware_from_json(j, "hw.json");
  EXPECT_EQ(s.cost.static_power, StaticPower::kFixed);
  EXPECT_EQ(cost_report(s).compute_static_w, 2.0);
  EXPECT_EQ(cost_report(s).noc_static_w, 0);  // the fixed model charges nothing else
  // Written back with both figures and the choice, and read the same.
  const json back = to_json(s);
  EXPECT_EQ(back["cost"]["static_power"], "fixed");
  EXPECT_EQ(back["compute"]["static_w"], 2.0);
  EXPECT_EQ(hardware_from_json(back, "again").compute.static_w, 2.0);
}

TEST(CostModel, AStaticFigureBesideScaledIsAnError) {
  json j = to_json(preset("nmp-4x4-5t50g"));
  j["cost"]["static_power"] = "scaled";
  j["memory"]["background_w"] = 0.5;
  EXPECT_EQ(error_of(j), "hw.json: memory.background_w: applies only with `cost.static_power` `fixed`");
  j["memory"].erase("background_w");
  j["cost"]["phy_static_fraction"] = 1.5;
  EXPECT_NE(error_of(j).find("hw.json: cost.phy_static_fraction:"), std::string::npos);
  j["cost"]["phy_static_fraction"] = 0.1;
  j["cost"]["static_power"] = "leaky";
  EXPECT_NE(error_of(j).find("hw.json: cost.static_power:"), std::string::npos);
}

}  // namespace
}  // namespace nmpsim::hw
