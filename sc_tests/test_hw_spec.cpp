// Hardware descriptions: presets, JSON round trip, topology queries, clear errors for bad input.
#include <gtest/gtest.h>

#include <fstream>

#include "hw_test_util.h"
#include "nmpsim/hw/hardware_spec.h"

namespace nmpsim::hw {
namespace {

TEST(HwPresets, AllRequiredNamesExistAndValidate) {
  std::vector<std::string> expected;
  for (const char* mesh : {"4x4", "4x8", "8x8"})
    for (const char* p : {"2.5t75g", "5t50g", "10t25g"}) expected.push_back(std::string("nmp-") + mesh + "-" + p);
  for (const char* w : {"wsc-4x4", "wsc-6x6", "wsc-8x8", "wsc-4wafer-8x8", "wsc-4wafer-8x8-wide-border",
                        "wsc-4wafer-8x8-levels", "gpu-cluster-32", "xdc-4x8-a800", "xdc-1000"})
    expected.push_back(w);
  const auto names = preset_names();
  EXPECT_EQ(names.size(), expected.size());
  for (const auto& n : expected) {
    ASSERT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    EXPECT_NO_THROW(preset(n).validate(n));
  }
}

TEST(HwPresets, NumbersFromThePapers) {
  const HardwareSpec a = preset("nmp-4x8-10t25g");
  EXPECT_EQ(a.topology.nodes(), 32);
  EXPECT_DOUBLE_EQ(a.compute.peak_flops, 10e12);
  EXPECT_DOUBLE_EQ(a.topology.links[0].gbytes_per_s, 25.0);
  EXPECT_DOUBLE_EQ(a.memory.peak_gbytes_per_s, 625.0);
  EXPECT_DOUBLE_EQ(a.memory.interface_pj_per_bit, 0.88);
  EXPECT_EQ(a.noc_config().flit_bytes, 25u);  // 25 GB/s at 1 GHz: one 25-byte flit per cycle
  const HardwareSpec w = preset("wsc-6x6");
  EXPECT_EQ(w.topology.nodes(), 36);
  EXPECT_EQ(w.topology.dies(), 36);
  EXPECT_DOUBLE_EQ(w.compute.peak_flops, 2250e12);
  EXPECT_DOUBLE_EQ(w.memory.peak_gbytes_per_s, 8000.0);
  EXPECT_EQ(w.memory.capacity_bytes, 180'000'000'000ULL);
  const HardwareSpec m = preset("wsc-4wafer-8x8");
  EXPECT_EQ(m.topology.nodes(), 256);
  EXPECT_EQ(m.topology.wafers(), 4);
  // 9 TB/s bidirectional per border of 8 links: 562.5 GB/s per link per direction.
  EXPECT_DOUBLE_EQ(m.topology.links[2].gbytes_per_s * 2 * 8, 9000.0);
  EXPECT_DOUBLE_EQ(m.topology.links[2].pj_per_bit, 0.1);  // MoEntwine: 0.1 pJ/bit on every link
  // The other reading: 9 TB/s bidirectional on each border link.
  EXPECT_DOUBLE_EQ(preset("wsc-4wafer-8x8-wide-border").topology.links[2].gbytes_per_s * 2, 9000.0);
}

TEST(HwTopology, HierarchyQueries) {
  const HardwareSpec m = preset("wsc-4wafer-8x8");
  const auto& t = m.topology;
  EXPECT_EQ(t.wafer_of(t.id(7, 7)), 0);
  EXPECT_EQ(t.wafer_of(t.id(8, 0)), 1);
  EXPECT_EQ(t.wafer_of(t.id(0, 8)), 2);
  EXPECT_EQ(t.wafer_of(t.id(15, 15)), 3);
  EXPECT_TRUE(t.same_wafer(t.id(0, 0), t.id(7, 7)));
  EXPECT_FALSE(t.same_die(t.id(0, 0), t.id(1, 0)));
  EXPECT_EQ(t.link_level(t.id(7, 3), t.id(8, 3)), mapping::LinkLevel::kWaferToWafer);
  EXPECT_EQ(t.link_level(t.id(3, 7), t.id(3, 8)), mapping::LinkLevel::kWaferToWafer);
  EXPECT_EQ(t.link_level(t.id(3, 3), t.id(3, 4)), mapping::LinkLevel::kDieToDie);
  // The NoC sees the same boundaries: 64 directed wafer links at 562.5/4000 of a flit per cycle, 100 cycles.
  const noc::NocConfig nc = m.noc_config();
  int slow = 0;
  for (int n = 0; n < t.nodes(); ++n)
    for (int dir = 0; dir < noc::kNumMeshDirs; ++dir) {
      const int to = noc::MeshGeometry{nc.width, nc.height}.neighbour(n, dir);
      if (to < 0) continue;
      const noc::LinkSpec l = nc.link(n, dir);
      if (t.link_level(n, to) == mapping::LinkLevel::kWaferToWafer) {
        ++slow;
        EXPECT_DOUBLE_EQ(l.bandwidth_flits_per_cycle, 562.5 / 4000.0);
        EXPECT_EQ(l.latency_cycles, 100u);
      } else {
        EXPECT_DOUBLE_EQ(l.bandwidth_flits_per_cycle, 1.0);
        EXPECT_EQ(l.latency_cycles, 20u);
      }
    }
  EXPECT_EQ(slow, 64);
}

TEST(HwPresets, DescribeNamesThePortsAndHowCollectivesRun) {
  // The presets' choices of docs/MODEL.md "Preset numbers and their sources": four NI ports per die,
  // one per NMP PE; fused adds, auto collectives and grouped experts everywhere.
  const std::string wafer = preset("wsc-4x4").describe(), nmp = preset("nmp-4x8-5t50g").describe();
  EXPECT_NE(wafer.find(", 4 NI ports, "), std::string::npos) << wafer;
  EXPECT_NE(nmp.find(", 1 NI port, "), std::string::npos) << nmp;
  for (const std::string& d : {wafer, nmp})
    EXPECT_NE(d.find("collectives: auto, adds fused, expert pieces in one grouped kernel, pipeline chunks 1"),
              std::string::npos)
        << d;
  EXPECT_EQ(preset("wsc-4x4").noc_config().ni_ports, 4);
  EXPECT_EQ(preset("nmp-4x8-5t50g").noc_config().ni_ports, 1);
}

TEST(HwJson, RoundTripsEveryPreset) {
  for (const auto& name : preset_names()) {
    const HardwareSpec a = preset(name);
    const HardwareSpec b = hardware_from_json(to_json(a), "roundtrip");
    EXPECT_EQ(a.describe(), b.describe()) << name;
    EXPECT_EQ(to_json(a), to_json(b)) << name;
  }
}

using testing::error_of;

TEST(HwJson, BadInputGivesOneLineErrorNamingTheField) {
  const nlohmann::json good = to_json(preset("nmp-4x4-5t50g"));
  ASSERT_EQ(error_of(good), "");
  auto expect = [&](nlohmann::json j, const std::string& needle) {
    const std::string e = error_of(j);
    EXPECT_NE(e.find(needle), std::string::npos) << "got: " << e;
    EXPECT_EQ(e.rfind("hw.json: ", 0), 0u) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  };
  nlohmann::json j = good;
  j["memory"].erase("peak_gbytes_per_s");
  expect(j, "memory.peak_gbytes_per_s: missing");
  j = good;
  j["links"]["on_die"]["gbytes_per_s"] = -5;
  expect(j, "links.on_die.gbytes_per_s: must be in [0.001, 1e+06] GB/s (got -5)");
  j = good;
  j["compute"]["peak_tflops"] = "fast";
  expect(j, "compute.peak_tflops: expected a number");
  j = good;
  j["mesh"]["width"] = 0;
  expect(j, "mesh.width: must be in [1, 256]");
  j = good;
  j["memroy"] = j["memory"];
  expect(j, "memroy: unknown field");
  j = good;
  j["wafer"] = {{"width", 3}, {"height", 4}};
  j["die"] = {{"width", 3}, {"height", 4}};
  expect(j, "whole number of wafers");
  j = good;
  j["noc"]["flit_bytes"] = 16;
  expect(j, "more than one 16-byte flit per cycle");
  j = good;
  j["memory"]["refresh_overhead"] = 1.5;
  expect(j, "memory.refresh_overhead");
  j = good;
  j["node_kind"] = "gpu";
  expect(j, "node_kind");
  j = good;
  j["die"] = {{"width", 2}, {"height", 2}};
  j["links"].erase("die_to_die");
  expect(j, "links.die_to_die: missing");
}

TEST(HwJson, FilesAndPresetNames) {
  EXPECT_THROW(preset("hdmoe-3x3-5t50g"), SpecError);
  try {
    load_hardware("no-such-preset");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown hardware preset 'no-such-preset'"), std::string::npos);
  }
  const std::string path = ::testing::TempDir() + "/bad_hw.json";
  std::ofstream(path) << "{ \"mesh\": { \"width\": 4, ";
  try {
    load_hardware(path);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": malformed JSON"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_hardware("/nonexistent/hw.json"), SpecError);
  const std::string ok = ::testing::TempDir() + "/ok_hw.json";
  std::ofstream(ok) << to_json(preset("wsc-4x4")).dump();
  EXPECT_EQ(load_hardware(ok).describe(), preset("wsc-4x4").describe());
}

}  // namespace
}  // namespace nmpsim::hw
