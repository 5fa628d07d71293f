// Hierarchies of any depth (mapping::Topology's levels, hw/hardware_levels.h): link levels, group
// orders and errors against hand-counted cases on the 32-GPU cluster preset (issue 37).
#include <gtest/gtest.h>

#include <array>

#include "hw_test_util.h"
#include "nmpsim/hw/hardware_spec.h"
#include "nmpsim/methods/common/hierarchy.h"

namespace nmpsim::hw {
namespace {

using json = nlohmann::json;

using testing::error_of;

/// A two-node-by-two-node description: gpu 1x1, board 2x1, system 4x2.
json small() {
  return {{"mesh", {{"width", 4}, {"height", 2}}},
          {"compute", {{"peak_tflops", 5}}},
          {"memory", {{"capacity_bytes", 1 << 30}, {"peak_gbytes_per_s", 100}}},
          {"levels",
           {{{"name", "gpu"}, {"width", 1}, {"height", 1}},
            {{"name", "board"}, {"width", 2}, {"height", 1}, {"link", {{"gbytes_per_s", 50}}}},
            {{"name", "system"}, {"link", {{"gbytes_per_s", 10}, {"latency_ns", 500}}}}}}};
}

TEST(HwLevels, TheClusterPresetsLinksByLevelAsCountedByHand) {
  const mapping::Topology t = preset("gpu-cluster-32").topology;
  ASSERT_EQ(t.num_levels(), 5);
  EXPECT_FALSE(t.classic);
  // 8x4 mesh: pairs 2x1, sockets 2x2, nodes 4x2. Along a row the x boundaries are pair, socket, pair,
  // node, pair, socket, pair; along a column the y boundaries are pair-to-pair, node, pair-to-pair.
  EXPECT_EQ(t.level_of_link(t.id(0, 0), t.id(1, 0)), 1);  // NVLink inside a pair
  EXPECT_EQ(t.level_of_link(t.id(1, 0), t.id(2, 0)), 3);  // across sockets of a node
  EXPECT_EQ(t.level_of_link(t.id(0, 0), t.id(0, 1)), 2);  // across pairs of a socket
  EXPECT_EQ(t.level_of_link(t.id(3, 0), t.id(4, 0)), 4);  // across nodes
  EXPECT_EQ(t.level_of_link(t.id(5, 1), t.id(5, 2)), 4);
  std::array<int, 5> directed{};
  for (int n = 0; n < t.nodes(); ++n)
    for (int d = 0; d < 4; ++d)
      if (const int m = mapping::neighbour(t, n, d); m >= 0) ++directed[static_cast<size_t>(t.level_of_link(n, m))];
  // Rows: 4 pair + 2 socket + 1 node boundaries, x 4 rows; columns: 2 pair-to-pair + 1 node, x 8; x 2 ways.
  EXPECT_EQ(directed, (std::array<int, 5>{0, 32, 32, 16, 24}));
  EXPECT_EQ(t.link_name(1), "gpu-to-gpu");
  EXPECT_EQ(t.link_name(4), "node-to-node");
  EXPECT_EQ(t.link_key(0), "on_gpu");
  EXPECT_DOUBLE_EQ(t.link(t.id(0, 0), t.id(1, 0)).gbytes_per_s, 56.25);     // 112.5 GB/s both ways
  EXPECT_DOUBLE_EQ(t.link(t.id(3, 0), t.id(4, 0)).gbytes_per_s, 25.0 / 6);  // 200 Gb/s over 6 links
}

TEST(HwLevels, TheDataCentrePresetsLinksAsCountedByHand) {
  // HybridEP's Cluster-L: 4 data centres of 4x2 GPUs laid 2x2 on an 8x4 mesh. Rows: one DC border of 4
  // rows; columns: one of 8 columns; x 2 ways = 24 directed dc-to-dc links, the other 104 - 24 = 80
  // inside the DCs. A DC has 2 + 4 border links sharing its 10 Gb/s; PCIe 3.0 x16 is 8 GT/s x 16 lanes x
  // 128/130 / 8 bits.
  const mapping::Topology t = preset("xdc-4x8-a800").topology;
  std::array<int, 3> directed{};
  for (int n = 0; n < t.nodes(); ++n)
    for (int d = 0; d < 4; ++d)
      if (const int m = mapping::neighbour(t, n, d); m >= 0) ++directed[static_cast<size_t>(t.level_of_link(n, m))];
  EXPECT_EQ(directed, (std::array<int, 3>{0, 80, 24}));
  EXPECT_EQ(t.link_name(2), "dc-to-dc");
  EXPECT_DOUBLE_EQ(t.link(t.id(0, 0), t.id(1, 0)).gbytes_per_s, 8.0 * 16 * 128 / 130 / 8);
  EXPECT_DOUBLE_EQ(t.link(t.id(3, 0), t.id(4, 0)).gbytes_per_s, 1.25 / 6);
  EXPECT_DOUBLE_EQ(t.link(t.id(0, 1), t.id(0, 2)).gbytes_per_s, 1.25 / 6);
  // Fig. 17's 1000 one-GPU data centres: 40x25, 2 (39 x 25 + 40 x 24) = 3870 directed links, each a
  // quarter of a DC's 10 Gb/s.
  const HardwareSpec k = preset("xdc-1000");
  EXPECT_EQ(k.topology.nodes(), 1000);
  int links = 0;
  for (int n = 0; n < k.topology.nodes(); ++n)
    for (int d = 0; d < 4; ++d) links += mapping::neighbour(k.topology, n, d) >= 0;
  EXPECT_EQ(links, 3870);
  EXPECT_DOUBLE_EQ(k.topology.link(0, 1).gbytes_per_s, 1.25 / 4);
  EXPECT_EQ(k.collectives.gradients, mapping::RingAlgorithm::kAuto);
}

TEST(HwLevels, HierMoEsGroupsOnTheClusterAreThePapers) {
  // HierMoE Sec. IV: U[1] = 4 nodes, U[2] = 8 (QPI halves), U[3] = 16 (NVLink pairs).
  const methods::common::Hierarchy h = methods::common::make_hierarchy(preset("gpu-cluster-32").topology, 0, "test");
  ASSERT_EQ(h.levels.size(), 3u);
  EXPECT_EQ(h.levels[0].name, "node");
  EXPECT_EQ(h.levels[0].groups, 4);
  EXPECT_EQ(h.levels[1].groups, 8);
  EXPECT_EQ(h.levels[2].groups, 16);
  // Ranks: a pair's two GPUs are adjacent, a socket's four, a node's eight.
  const mapping::Topology& t = preset("gpu-cluster-32").topology;
  for (int r = 0; r < 32; ++r) {
    const int v = h.node_at[static_cast<size_t>(r)];
    EXPECT_EQ(t.group_of(v, 1), t.group_of(h.node_at[static_cast<size_t>(r / 2 * 2)], 1)) << r;
    EXPECT_EQ(t.group_of(v, 3), t.group_of(h.node_at[static_cast<size_t>(r / 8 * 8)], 3)) << r;
  }
}

TEST(HwLevels, ADescriptionRoundTripsAndReadsItsDefaults) {
  const HardwareSpec s = hardware_from_json(small(), "small.json");
  EXPECT_EQ(s.topology.num_levels(), 3);
  EXPECT_DOUBLE_EQ(s.topology.links[2].latency_ns, 500);
  EXPECT_DOUBLE_EQ(s.topology.links[1].latency_ns, 2);  // the default, as in the classic links.*
  const HardwareSpec again = hardware_from_json(to_json(s), "again.json");
  EXPECT_EQ(to_json(again), to_json(s));
  EXPECT_EQ(again.describe(), s.describe());
  EXPECT_NE(s.describe().find("levels (finest first): 8 x gpu of 1x1, 4 x board of 2x1, 1 x system of 4x2"),
            std::string::npos)
      << s.describe();
  // 4x2 mesh of 2x1 boards: per row one board boundary, per column one: 2 + 4 links, both ways.
  EXPECT_NE(s.describe().find("links gpu-to-gpu: 8 directed, 50 GB/s"), std::string::npos) << s.describe();
  EXPECT_NE(s.describe().find("links board-to-board: 12 directed, 10 GB/s each way, 500 ns"), std::string::npos)
      << s.describe();
  for (const char* preset_name : {"gpu-cluster-32", "wsc-4wafer-8x8-levels"}) {
    const HardwareSpec p = preset(preset_name);
    EXPECT_EQ(to_json(hardware_from_json(to_json(p), "p.json")), to_json(p)) << preset_name;
  }
}

TEST(HwLevels, BadLevelsAreOneLineErrorsNamingTheField) {
  auto with = [](auto&& edit) {
    json j = small();
    edit(j);
    return error_of(j);
  };
  EXPECT_EQ(with([](json& j) { j["levels"][1]["width"] = 3; }),
            "hw.json: levels.1: the mesh (4x2) must hold a whole number of board groups (3x1)");
  EXPECT_EQ(with([](json& j) {
              j["levels"][0]["width"] = 2;
              j["levels"][1]["width"] = 3;
            }),
            "hw.json: levels.0: a board (3x1 nodes) must hold a whole number of gpu groups (2x1)");
  EXPECT_EQ(with([](json& j) {
              for (int i = 0; i < 4; ++i) j["levels"].insert(j["levels"].begin(), j["levels"][0]);
            }),
            "hw.json: levels: 7 levels; give 2 to 5 (the finest first, the whole system last)");
  EXPECT_EQ(with([](json& j) { j["levels"][1]["name"] = "gpu"; }),
            "hw.json: levels.1.name: 'gpu' is used by level 0 too");
  EXPECT_EQ(with([](json& j) { j["levels"][1]["name"] = "Board 1"; }),
            "hw.json: levels.1.name: 'Board 1' may hold only a-z, 0-9 and '-'");
  EXPECT_EQ(with([](json& j) {
              j["die"] = {{"width", 1}};
            }),
            "hw.json: die: give either \"levels\" or the classic die / wafer / links, not both");
  EXPECT_EQ(with([](json& j) { j["levels"][2]["width"] = 4; }),
            "hw.json: levels.2.width: the last level is the whole mesh: give mesh.width/height");
  EXPECT_EQ(with([](json& j) { j["levels"][1].erase("link"); }),
            "hw.json: levels.1.link: missing (required: the mesh has links at this level)");
  EXPECT_EQ(with([](json& j) { j["levels"][1]["link"]["gbytes_per_s"] = -1; }),
            "hw.json: levels.1.link.gbytes_per_s: must be in [0.001, 1e+06] GB/s (got -1)");
  EXPECT_EQ(with([](json& j) { j["levels"][1]["depth"] = 1; }), "hw.json: levels.1.depth: unknown field");
  EXPECT_EQ(with([](json& j) { j["levels"] = 3; }), "hw.json: levels: expected an array of levels, the finest first");
}

TEST(HwLevels, ACoarserLevelFasterThanAFinerOneIsAWarningNotAnError) {
  EXPECT_TRUE(preset("gpu-cluster-32").warnings().empty());
  EXPECT_TRUE(preset("wsc-4wafer-8x8").warnings().empty());
  const auto w = preset("wsc-4wafer-8x8-wide-border").warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("links.wafer_to_wafer.gbytes_per_s: the wafer-to-wafer links (4500 GB/s) are faster than "
                      "the finer die-to-die links (4000 GB/s)"),
            std::string::npos)
      << w[0];
}

TEST(HwLevels, TheClassicFormKeepsItsLevelsAndNames) {
  const mapping::Topology t = preset("wsc-4wafer-8x8").topology;
  EXPECT_TRUE(t.classic);
  EXPECT_EQ(t.num_levels(), 3);
  EXPECT_EQ(t.link_name(0), "on-die");
  EXPECT_EQ(t.link_name(1), "die-to-die");
  EXPECT_EQ(t.link_name(2), "wafer-to-wafer");
  EXPECT_EQ(t.link_key(2), "wafer_to_wafer");
  EXPECT_EQ(t.wafers(), 4);
  EXPECT_EQ(t.dies(), 256);
}

}  // namespace
}  // namespace nmpsim::hw
