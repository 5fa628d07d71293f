// `nmpsim run --router`: the MoE workload on the engine's routers and on pin-level SystemC and
// Verilated RTL routers delivers every message in the same cycle (a one-layer Mixtral on a 4x4 NMP
// chip, EP, one decode step), and the option's input errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_test_util.h"

namespace nmpsim::testing {
namespace {

/// Every delivered message as "src,dst,bytes,create_cycle,deliver_cycle", sorted. Ids and tags are
/// left out: deliveries of one cycle are reported in a different order by the engine and by a pin
/// mesh, so messages created in the same cycle may be numbered differently.
std::vector<std::string> deliveries(const std::string& router, const std::string& model,
                                    const std::string& router_kind = "vc") {
  std::string name = router;
  std::replace(name.begin(), name.end(), ':', '_');
  const std::string out = ::testing::TempDir() + "nmpsim_router_" + router_kind + "_" + name;
  std::filesystem::remove_all(out);
  const CliRun r = run_nmpsim({"run",
                               "--hw",
                               "nmp-4x4-5t50g",
                               "--set",
                               "noc.router_kind=" + router_kind,
                               "--model",
                               model,
                               "--steps",
                               "1",
                               "--batch",
                               "8",
                               "--strategy",
                               "ep",
                               "--router",
                               router,
                               "--message-log",
                               "--out",
                               out,
                               "--no-plots",
                               "--quiet"});
  EXPECT_EQ(r.code, 0) << router << ": " << r.out;
  std::ifstream in(out + "/messages-ep.csv");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "message_id,tag,src,dst,bytes,create_cycle,deliver_cycle");
  std::vector<std::string> rows;
  while (std::getline(in, line)) {
    size_t cut = line.find(',');
    cut = line.find(',', cut + 1);
    rows.push_back(line.substr(cut + 1));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST(CliRunRouter, EveryMessageIsDeliveredInTheSameCycleOnEngineScAndRtlRouters) {
  const std::string model = one_layer_model();
  const std::vector<std::string> engine = deliveries("engine", model);
  ASSERT_GT(engine.size(), 100u);
  for (const std::string router : {"sc", "rtl"}) {
    const std::vector<std::string> got = deliveries(router, model);
    ASSERT_EQ(got.size(), engine.size()) << router;
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], engine[i]) << router << " message " << i;
  }
}

TEST(CliRunRouter, TheLookaheadRouterRunsTheWorkloadIdenticallyAsModelAndRtl) {
  const std::string model = one_layer_model();
  const std::vector<std::string> sc = deliveries("sc", model, "lookahead");
  ASSERT_GT(sc.size(), 100u);
  EXPECT_EQ(deliveries("engine", model, "lookahead"), sc);  // no engine model: the same SystemC model
  EXPECT_EQ(deliveries("rtl:la", model, "lookahead"), sc);
  EXPECT_NE(deliveries("engine", model, "vc"), sc);  // a different micro-architecture, different timing
}

TEST(CliRunRouter, DescribedRoutersOfOtherProtocolsDeliverEveryMessageOfTheStep) {
  // la_vr and la_credit (valid/ready and credit shells with flit formats of their own, registered
  // from descriptions only) add their shells' cycles, so their timing is their own: every message
  // the look-ahead model delivers is delivered, with every check passing. (The out-of-tree router
  // pkt does the same in the test router_plugin_out_of_tree.)
  const std::string model = one_layer_model();
  const std::vector<std::string> sc = deliveries("sc", model, "lookahead");
  ASSERT_GT(sc.size(), 100u);
  for (const char* r : {"rtl:la_vr", "rtl:la_credit"})
    EXPECT_EQ(deliveries(r, model, "lookahead").size(), sc.size()) << r;
}

TEST(CliNocLookahead, ModelAndRtlMeshesGiveTheSameResults) {
  auto run = [](const std::string& router) {
    const std::string path = ::testing::TempDir() + "nmpsim_noc_la.json";
    const CliRun r =
        run_nmpsim({"noc", "--mesh", "4x3", "--router-kind", "lookahead", "--router", router, "--cycles", "3000",
                    "--warmup-cycles", "300", "--injection-rate", "0.35", "--quiet", "--json", path});
    EXPECT_EQ(r.code, 0) << router << ": " << r.out;
    return nlohmann::json::parse(read_all(path));
  };
  const nlohmann::json sc = run("sc");
  ASSERT_GT(sc["measured_packets"].get<int>(), 500);
  EXPECT_EQ(sc["config"]["router_kind"], "lookahead");
  EXPECT_EQ(sc["config"]["vcs"], 1);
  for (const std::string router : {"rtl:la", "mixed"}) {
    const nlohmann::json j = run(router);
    for (const char* key : {"avg_packet_latency_cycles", "max_packet_latency_cycles", "measured_packets",
                            "ejected_flits", "link_utilisation"})
      EXPECT_EQ(j[key], sc[key]) << router << " " << key;
    EXPECT_TRUE(j["conservation_ok"].get<bool>());
    EXPECT_EQ(j["config"]["rtl_router"], "la");
  }
}

TEST(CliNocLookahead, RoutersRegisteredFromDescriptionsRunCheckedAndWriteAVcd) {
  // la_vr and la_credit come from rtl_checks/routers.cmake like a router of your own: the
  // look-ahead router inside a valid/ready and a credit shell. Below saturation neither shell adds
  // a cycle, so the results are the look-ahead router's.
  auto run = [](const std::string& router, const std::string& vcd) {
    const std::string path = ::testing::TempDir() + "nmpsim_noc_own.json";
    std::vector<std::string> argv = {
        "noc", "--mesh",           "3x3", "--router", router,   "--cycles", "1000", "--warmup-cycles",
        "100", "--injection-rate", "0.1", "--quiet",  "--json", path};
    if (!vcd.empty()) argv.insert(argv.end(), {"--vcd", vcd});
    const CliRun r = run_nmpsim(argv);
    EXPECT_EQ(r.code, 0) << router << ": " << r.out;
    return nlohmann::json::parse(read_all(path));
  };
  const nlohmann::json la = run("rtl:la", "");
  ASSERT_GT(la["measured_packets"].get<int>(), 100);
  for (const auto& [router, pin] : {std::pair<std::string, std::string>{"rtl:la_vr", "in_ready"},
                                    std::pair<std::string, std::string>{"rtl:la_credit", "out_credit"}}) {
    const std::string vcd = ::testing::TempDir() + "nmpsim_noc_own.vcd";
    std::filesystem::remove(vcd);
    const nlohmann::json j = run(router, vcd);
    EXPECT_TRUE(j["conservation_ok"].get<bool>()) << router;
    EXPECT_EQ(j["config"]["vcs"], 1) << router;
    for (const char* key : {"avg_packet_latency_cycles", "max_packet_latency_cycles", "measured_packets"})
      EXPECT_EQ(j[key], la[key]) << router << " " << key;
    const std::string text = read_all(vcd);
    EXPECT_NE(text.find("$enddefinitions"), std::string::npos) << router;
    EXPECT_NE(text.find(" " + pin + " "), std::string::npos) << router << ": no " << pin << " in the VCD";
    EXPECT_NE(text.find("\n#1999\n"), std::string::npos) << router << ": not every edge was dumped";
  }
}

TEST(CliNocLookahead, RouterOptionsThatDoNotFitAreOneLineErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--router-kind", "lookahead", "--router", "engine"}, "has no engine model"},
      {{"--router", "rtl:foo"}, "no RTL router named 'foo' (registered: nmp, la, la_vr, la_credit)"},
      {{"--router-kind", "vc", "--router", "rtl:la"},
       "that RTL is a lookahead router but the mesh's router kind is vc"},
      {{"--router-kind", "lookahead", "--vcs", "2"}, "the look-ahead router has no virtual channels"},
      {{"--router-kind", "wormhole"}, "unknown router kind 'wormhole'"},
      {{"--router", "rtl:la_credit", "--vcs", "2"}, "an RTL router of your own has no virtual channels: set --vcs 1"},
      {{"--router-kind", "lookahead", "--router", "sc", "--vcd", "/tmp/x.vcd"}, "--vcd dumps an RTL router"},
      {{"--router", "sc:la"}, "only rtl and mixed take an RTL router's name"},
  };
  for (const auto& [args, want] : cases) {
    std::vector<std::string> argv = {"noc", "--mesh", "2x2", "--cycles", "10"};
    argv.insert(argv.end(), args.begin(), args.end());
    const CliRun r = run_nmpsim(argv);
    EXPECT_EQ(r.code, 2) << want;
    EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
}

TEST(CliRunRouter, PinLevelRoutersNeedCycleFidelityAndAKnownKind) {
  const CliRun flow = run_nmpsim({"run", "--fidelity", "flow", "--router", "sc", "--strategy", "ep", "--quiet"});
  EXPECT_EQ(flow.code, 2);
  EXPECT_NE(flow.out.find("--router: needs --fidelity cycle"), std::string::npos) << flow.out;
  const CliRun bad = run_nmpsim({"run", "--router", "verilog", "--strategy", "ep", "--steps", "1", "--quiet"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("--router: unknown implementation 'verilog'"), std::string::npos) << bad.out;
  const CliRun nodes = run_nmpsim({"run", "--router", "sc", "--rtl-nodes", "1", "--strategy", "ep", "--quiet"});
  EXPECT_EQ(nodes.code, 2);
  EXPECT_NE(nodes.out.find("--rtl-nodes needs --router mixed"), std::string::npos) << nodes.out;
  // A credit router without link-speed straps on a system with slow wafer borders: refused up front.
  const CliRun slow =
      run_nmpsim({"run", "--hw", "wsc-4wafer-8x8", "--set", "noc.vcs=1", "--set", "noc.buffer_flits=32", "--set",
                  "noc.ni_ports=1", "--router", "rtl:la_credit", "--strategy", "ep", "--steps", "1", "--quiet"});
  EXPECT_EQ(slow.code, 2) << slow.out;
  EXPECT_NE(slow.out.find("'la_credit' (credit protocol) has no link-speed straps"), std::string::npos) << slow.out;
  EXPECT_EQ(std::count(slow.out.begin(), slow.out.end(), '\n'), 1) << slow.out;
}

}  // namespace
}  // namespace nmpsim::testing

namespace nmpsim::testing {
namespace {

TEST(CliNocCurve, AnRtlRouterBesideItsModelGivesTheSameCurveAsJsonAndPng) {
  const std::string json = ::testing::TempDir() + "nmpsim_curve.json", png = ::testing::TempDir() + "nmpsim_curve.png";
  std::filesystem::remove(json);
  std::filesystem::remove(png);
  const CliRun r = run_nmpsim({"noc", "--router", "rtl:la", "--mesh", "3x3", "--cycles", "1500", "--warmup-cycles",
                               "200", "--curve", "0.1:0.3:0.1", "--json", json, "--plot", png});
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("router rtl:la beside its model, sc"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(read_all(json));
  ASSERT_EQ(j["points"].size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    const nlohmann::json& p = j["points"][k];
    EXPECT_NEAR(p["offered_flits_per_node_cycle"].get<double>(), 0.1 * (k + 1), 1e-9);
    EXPECT_EQ(p["router"], p["model"]) << k;
    // Below saturation the mesh accepts what is offered (flits are conserved).
    EXPECT_NEAR(p["router"]["accepted_flits_per_node_cycle"].get<double>(), 0.1 * (k + 1), 0.015) << k;
  }
  const std::string image = read_all(png);
  ASSERT_GT(image.size(), 8u);
  EXPECT_EQ(image.substr(1, 3), "PNG");
}

TEST(CliNocCurve, BadCurveOptionsAreOneLineExitTwo) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--curve", "0.5:0.1:0.1"}, "needs FROM <= TO and STEP > 0"},
      {{"--curve", "0.1:abc:0.1"}, "--curve: expected a number, got 'abc'"},
      {{"--curve", "0.1,1.5"}, "'1.5' is not an offered load"},
      {{"--curve", "0:1:0.001"}, "gives more than 200 loads"},
      {{"--curve", "0.1", "--injection-rate", "0.2"}, "--curve replaces --injection-rate"},
      {{"--plot", "x.png"}, "--plot needs --curve"},
      {{"--curve", "0.1", "--router", "rtl", "--vcd", "x.vcd"}, "does not go with --curve"},
      {{"--curve", "0.1", "--plot", "/no/such/dir/x.png"}, "--plot"},
  };
  for (const auto& [args, want] : cases) {
    std::vector<std::string> argv = {"noc", "--mesh", "2x2", "--cycles", "10"};
    argv.insert(argv.end(), args.begin(), args.end());
    const CliRun r = run_nmpsim(argv);
    EXPECT_EQ(r.code, 2) << want << ": " << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
}

}  // namespace
}  // namespace nmpsim::testing

namespace nmpsim::testing {
namespace {

TEST(CliRtlPlugin, PluginOptionsThatAreWrongAreOneLineExitTwo) {
  const std::string missing = ::testing::TempDir() + "nmpsim_no_such_plugin.so";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"noc", "--rtl-plugin"}, "nmpsim noc: error: --rtl-plugin: the option needs a file"},
      {{"--rtl-plugin", missing, "noc"}, "nmpsim: error: --rtl-plugin " + missing + ": no such file"},
      {{"noc", "--rtl-plugin=" + missing}, "--rtl-plugin " + missing + ": no such file"},
      {{"noc", "--rtl-plugin", ::testing::TempDir()}, "not a regular file"},
      {{"noc", "--rtl-plugin", "a:b"}, "--rtl-plugin: 'a:b' is not a file name"},
  };
  for (const auto& [argv, want] : cases) {
    const CliRun r = run_nmpsim(argv);
    EXPECT_EQ(r.code, 2) << want;
    EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
}

TEST(CliRtlPlugin, APluginTheEnvironmentNamesIsLoadedOrNamedInTheError) {
  CliOptions o;
  o.env = {"NMPSIM_RTL_PLUGINS=/nonexistent/nmpsim_rtl_x.so"};
  const CliRun r = run_nmpsim({"noc", "--mesh", "2x2", "--cycles", "10"}, o);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("NMPSIM_RTL_PLUGINS: --rtl-plugin /nonexistent/nmpsim_rtl_x.so: no such file"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run_nmpsim({"--help"}, o).code, 0);  // help and the version load no plugin
  EXPECT_EQ(run_nmpsim({"--version"}, o).code, 0);
}

TEST(CliNocFailure, AStallIsAOneLineModelFailureWithExitCodeOne) {
  // A watchdog of one cycle with 8-cycle routers: nothing moves for a cycle soon after the start.
  const CliRun r = run_nmpsim({"noc", "--mesh", "3x3", "--cycles", "200", "--warmup-cycles", "0", "--watchdog-cycles",
                               "1", "--router-delay", "8", "--injection-rate", "0.01", "--quiet"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("nmpsim noc: model failure: noc: stall at cycle ", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("internal error"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

}  // namespace
}  // namespace nmpsim::testing
