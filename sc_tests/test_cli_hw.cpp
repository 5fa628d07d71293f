// `nmpsim noc --router` and `nmpsim hw`: router implementations, presets, descriptions, method
// reports, the exercise and its outputs.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace {

using nmpsim::testing::CliRun;
using nmpsim::testing::lines;
using nmpsim::testing::nmpsim;

TEST(CliNocRouter, EveryRouterImplementationGivesTheEngineResults) {
  const std::string base = "noc --mesh 4x4 --warmup-cycles 500 --cycles 3000 --injection-rate 0.25 --quiet --json ";
  auto run = [&](const std::string& router, const std::string& extra = "") {
    const std::string path = ::testing::TempDir() + "nmpsim_noc_" + router + ".json";
    const CliRun r = nmpsim(base + path + " --router " + router + " " + extra);
    EXPECT_EQ(r.code, 0) << router << ": " << r.out;
    std::ifstream in(path);
    return nlohmann::json::parse(in);
  };
  const nlohmann::json engine = run("engine");
  ASSERT_GT(engine["measured_packets"].get<int>(), 500);
  for (const std::string router : {"sc", "rtl", "mixed"}) {
    const nlohmann::json j = run(router, router == "mixed" ? "--rtl-nodes 0,5,6,15" : "");
    EXPECT_EQ(j["config"]["router"], router);
    for (const char* key : {"avg_packet_latency_cycles", "p99_packet_latency_cycles", "max_packet_latency_cycles",
                            "measured_packets", "accepted_flits_per_node_cycle", "ejected_flits", "link_utilisation"})
      EXPECT_EQ(j[key], engine[key]) << router << " " << key;
    EXPECT_TRUE(j["conservation_ok"].get<bool>());
  }
  EXPECT_EQ(run("mixed", "--rtl-nodes 0,5,6,15")["config"]["rtl_nodes"], nlohmann::json::parse("[0,5,6,15]"));
  // A clock whose period is an odd number of picoseconds (3 GHz: 333 ps) runs the same cycles.
  EXPECT_EQ(run("rtl", "--clock-ghz 3")["avg_packet_latency_cycles"], engine["avg_packet_latency_cycles"]);
  EXPECT_EQ(run("rtl")["config"]["rtl_nodes"].size(), 16u);
}

TEST(CliNocRouter, VcdOfAnRtlRouter) {
  const std::string path = ::testing::TempDir() + "nmpsim_cli_router.vcd";
  std::remove(path.c_str());
  const CliRun r = nmpsim("noc --mesh 3x3 --warmup-cycles 0 --cycles 500 --router mixed --rtl-nodes 4 --vcd " + path);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("RTL router 4 signals written to"), std::string::npos) << r.out;
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("$enddefinitions"), std::string::npos);
  EXPECT_NE(text.find("out_flit_w"), std::string::npos);
  std::ifstream partial(path + ".partial");
  EXPECT_FALSE(partial.good()) << "temporary VCD left behind";
}

TEST(CliNocRouter, BadRouterOptionsAreOneLineExitTwo) {
  for (const char* args :
       {"noc --router verilog", "noc --router rtl --vcs 8", "noc --router rtl --buffer-flits 1000",
        "noc --router sc --rtl-nodes 1", "noc --router mixed --rtl-nodes 1,,2", "noc --router mixed --rtl-nodes 64",
        "noc --router sc --vcd x.vcd", "noc --router mixed --rtl-nodes 0 --vcd x.vcd --vcd-node 1",
        "noc --router rtl --vcd /no/such/dir/x.vcd", "noc --vcd-node 2"}) {
    const CliRun r = nmpsim(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << args << ": " << r.out;
    EXPECT_NE(r.out.find("error"), std::string::npos) << args;
  }
}

TEST(CliHw, ListsPresetsOnePerLineNameFirst) {
  const CliRun r = nmpsim("hw --list-presets");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(lines(r.out), 18);
  EXPECT_EQ(r.out.rfind("gpu-cluster-32 ", 0), 0u);  // sorted by name
  EXPECT_NE(r.out.find("\nwsc-4wafer-8x8 "), std::string::npos);
}

TEST(CliHw, DescribesAPreset) {
  const CliRun r = nmpsim("hw --preset nmp-4x8-5t50g --describe");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("32 x nmp-pe on a 4x8 mesh"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("100 FLOP per byte of one link"), std::string::npos) << r.out;  // 5e12 / 50e9
  const CliRun h = nmpsim("hw --preset nmp-4x8-5t50g --report hierarchy");             // a method's report
  EXPECT_EQ(h.code, 0) << h.out;
  EXPECT_NE(h.out.find("hierarchy: D = 1 (no level"), std::string::npos) << h.out;
  EXPECT_EQ(h.out.find("100 FLOP per byte"), std::string::npos) << h.out;  // --report alone: no description
  const CliRun list = nmpsim("hw --list-reports");
  EXPECT_EQ(list.code, 0) << list.out;
  EXPECT_NE(list.out.find("  hierarchy: "), std::string::npos) << list.out;
}

TEST(CliHw, ShowsTheHierarchyAndFitsItsAllToAllCosts) {
  const CliRun r =
      nmpsim("hw --preset wsc-4wafer-8x8 --report hierarchy --report-opt virtual_levels=1 --report-opt fit=true");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("hierarchy: D = 3; wafer: 4 groups of 64 nodes; quadrant-1: 16 groups of 16 nodes"),
            std::string::npos)
      << r.out;
  for (const char* kind : {"flat ", "inter-wafer ", "intra-wafer ", "inter-quadrant-1 ", "intra-quadrant-1 "})
    EXPECT_NE(r.out.find(kind), std::string::npos) << kind << r.out;
  const CliRun bad = nmpsim("hw --preset wsc-4x4 --report hierarchy --report-opt virtual_levels=3");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_EQ(lines(bad.out), 1) << bad.out;
  EXPECT_NE(bad.out.find("--report hierarchy: virtual_levels: 3 virtual levels do not split a 4x4 wafer"),
            std::string::npos)
      << bad.out;
}

TEST(CliHw, BadInputIsOneLineExitTwo) {
  const std::string bad = ::testing::TempDir() + "/cli_bad_hw.json";
  { std::ofstream(bad) << "{\"mesh\": {\"width\": 4, \"height\": 4}}"; }
  for (const std::string& args :
       {std::string("hw --preset nope"), "hw --hw " + bad, std::string("hw"),
        std::string("hw --preset wsc-4x4 --hw x.json"), std::string("hw --hw /no/such/file.json")}) {
    const CliRun r = nmpsim(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << args << ": " << r.out;
  }
  EXPECT_NE(nmpsim("hw --hw " + bad).out.find("compute: missing"), std::string::npos);
}

TEST(CliHw, AHierarchyOfAnyDepthIsDescribedSetAndChecked) {
  const CliRun r = nmpsim("hw --hw gpu-cluster-32 --set levels.4.link.gbytes_per_s=4");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("levels (finest first): 32 x gpu of 1x1, 16 x pair of 2x1, 8 x socket of 2x2, 4 x node of 4x2"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("links node-to-node: 24 directed, 4 GB/s each way"), std::string::npos) << r.out;
  const std::map<std::string, std::string> bad = {
      {"--set levels.9.width=2", "--set levels.9.width: it has 5 levels (0 to 4)"},
      {"--set die.width=2", "--set die.width: this hardware describes its hierarchy as \"levels\""},
      {"--set levels.1.width=3", "levels.1: a socket (2x2 nodes) must hold a whole number of pair groups (3x1)"},
      {"--set levels.1.link.foo=3", "--set levels.1.link.foo: no such field of a level"},
      {"--set levels.0.link.gbytes_per_s=9", "does not apply to this hardware (its mesh has no on-gpu links)"}};
  for (const auto& [args, message] : bad) {
    const CliRun b = nmpsim("hw --hw gpu-cluster-32 " + args);
    EXPECT_EQ(b.code, 2) << args << ": " << b.out;
    EXPECT_EQ(lines(b.out), 1) << args << ": " << b.out;
    EXPECT_NE(b.out.find(message), std::string::npos) << args << ": " << b.out;
  }
  const CliRun classic = nmpsim("hw --hw wsc-4x4 --set levels.1.width=2");
  EXPECT_EQ(classic.code, 2) << classic.out;
  EXPECT_NE(classic.out.find("has no \"levels\" array"), std::string::npos) << classic.out;
}

TEST(CliHw, FieldsAreListedWithTheirValues) {
  const CliRun r = nmpsim("hw --fields");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(lines(r.out), 2 + 71 + 6) << r.out;  // header, rule, one row per field, 6 per general level
  EXPECT_NE(r.out.find("| `noc.vcs` | integer | - | 2 | 1..8 |"), std::string::npos) << r.out;
  const CliRun v = nmpsim("hw --hw wsc-4x4 --set noc.vcs=4 --fields");
  EXPECT_EQ(v.code, 0) << v.out;
  EXPECT_NE(v.out.find("| virtual channels per input port | 4 |"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("| `compute.peak_tflops` | number | TFLOP/s | required | [0.001, 1e6] | peak per node | 2250 |"),
            std::string::npos)
      << v.out;
  EXPECT_EQ(v.out.find("FLOP per byte"), std::string::npos) << v.out;  // --fields alone: no description
  // A hierarchy of levels: each level's value, the finest first ("-": no size on the last, no on-gpu links).
  const CliRun g = nmpsim("hw --hw gpu-cluster-32 --set levels.2.link.gbytes_per_s=30 --fields");
  EXPECT_EQ(g.code, 0) << g.out;
  EXPECT_NE(g.out.find("| gpu, pair, socket, node, cluster |"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("| 1, 2, 2, 4, - |"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("| -, 56.25, 30, 5.54615, 4.16667 |"), std::string::npos) << g.out;
  const CliRun bad = nmpsim("hw --fields --set noc.vcs=4");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--fields with --set needs --hw"), std::string::npos) << bad.out;
}

/// --set is checked against the field table: path, type and range, before the description is read.
TEST(CliHw, SetIsCheckedAgainstTheFieldTable) {
  const std::string hw = "hw --hw nmp-4x4-5t50g --print-json --set ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"compute.nope=1", "--set compute.nope: no such field in the hardware description (nmpsim hw --fields"},
      {"noc.vcs=two", "--set noc.vcs: expected a number, got 'two'"},
      {"noc.vcs=1.5", "--set noc.vcs: expected an integer, got the number 1.5"},
      {"noc.vcs=9", "--set noc.vcs: must be in [1, 8] (got 9)"},
      {"noc.replay_sessions=1", "--set noc.replay_sessions: expected true or false, got '1'"},
      {"noc.router_kind=wormhole", "--set noc.router_kind: must be \"vc\" or \"lookahead\", got the string"},
      {"memory.row_bytes=3000", "--set memory.row_bytes: must be a power of two (got 3000)"},
      {"links.die_to_die.latency_ns=5", "--set links.die_to_die.latency_ns: does not apply to this hardware"},
  };
  for (const auto& [set, message] : cases) {
    const CliRun r = nmpsim(hw + set);
    EXPECT_EQ(r.code, 2) << set << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << set << ": " << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << set << ": " << r.out;
  }
  // A field the file leaves out (no "noc" object at all) can be set: the table knows where it goes.
  const std::string file = ::testing::TempDir() + "/cli_minimal_hw.json";
  {
    std::ofstream(file) << R"({"mesh": {"width": 2, "height": 2}, "compute": {"peak_tflops": 1},
      "memory": {"capacity_bytes": 1073741824, "peak_gbytes_per_s": 100}, "links": {"on_die": {"gbytes_per_s": 10}}})";
  }
  const CliRun ok = nmpsim("hw --hw " + file + " --set noc.vcs=4 --set noc.router_kind=vc --print-json");
  EXPECT_EQ(ok.code, 0) << ok.out;
  const nlohmann::json j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["noc"]["vcs"], 4);
  EXPECT_EQ(j["noc"]["router_kind"], "vc");
}

TEST(CliHw, ExerciseWritesVcdAndEnergyJson) {
  const std::string vcd = ::testing::TempDir() + "/cli_hw.vcd", json = ::testing::TempDir() + "/cli_hw.json";
  const CliRun r =
      nmpsim("hw --preset nmp-4x4-5t50g --exercise --exercise-weight-mib 1 --vcd " + vcd + " --json " + json);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("Warning"), std::string::npos) << r.out.substr(0, 500);
  std::ifstream in(vcd);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("pe0_busy"), std::string::npos);
  EXPECT_NE(text.find("link_0_to_1_flits"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(json));
  EXPECT_GT(j["energy_pj"]["dram"].get<double>(), 0);
  EXPECT_GT(j["energy_pj"]["noc"].get<double>(), 0);
  EXPECT_NEAR(j["energy_pj"]["total"].get<double>(),
              j["energy_pj"]["dram"].get<double>() + j["energy_pj"]["noc"].get<double>() +
                  j["energy_pj"]["compute"].get<double>(),
              1e-6 * j["energy_pj"]["total"].get<double>());
  EXPECT_EQ(j["dram_bytes"].get<uint64_t>(), 16u << 20);  // 16 nodes x 1 MiB read
}

}  // namespace

namespace {}  // namespace

namespace nmpsim::testing {
namespace {

TEST(CliHw, SettingStaticPowerKeepsTheWattsItDoesNotName) {
  // wsc-4x4 per die, scaled: compute 100 W, memory 12 W, NoC buffers and PHYs.
  const CliRun figure = nmpsim("hw --hw wsc-4x4 --set compute.static_w=50");
  EXPECT_EQ(figure.code, 0) << figure.out;
  EXPECT_NE(figure.out.find("static power per node (fixed): 62 W (compute 50, SRAM 0, NoC 0, memory 12)"),
            std::string::npos)
      << figure.out;
  const CliRun fixed = nmpsim("hw --hw wsc-4x4 --set cost.static_power=fixed");
  EXPECT_NE(fixed.out.find("static power per node (fixed): 112 W (compute 100, SRAM 0, NoC 0, memory 12)"),
            std::string::npos)
      << fixed.out;
  const CliRun scaled = nmpsim("hw --hw gpu-cluster-32 --set cost.static_power=scaled");
  EXPECT_EQ(scaled.code, 0) << scaled.out;
  EXPECT_NE(scaled.out.find("static power per node (scaled):"), std::string::npos) << scaled.out;
}

}  // namespace
}  // namespace nmpsim::testing
