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

/// A one-layer Mixtral-8x7B, written next to the test's outputs.
std::string one_layer_model() {
  const std::string path = ::testing::TempDir() + "nmpsim_router_model.json";
  const CliRun r = run_nmpsim({"model", "--model", "mixtral-8x7b", "--print-json"});
  nlohmann::json m = nlohmann::json::parse(r.stdout_text);
  m["moe_layers"] = 1;
  m["dense_layers"] = 0;
  std::ofstream(path) << m.dump();
  return path;
}

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
                               "hdmoe-4x4-5t50g",
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

TEST(CliNocLookahead, RouterOptionsThatDoNotFitAreOneLineErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--router-kind", "lookahead", "--router", "engine"}, "has no engine model"},
      {{"--router", "rtl:foo"}, "no RTL router named 'foo' (registered: nmp, la)"},
      {{"--router-kind", "vc", "--router", "rtl:la"},
       "that RTL is a lookahead router but the mesh's router kind is vc"},
      {{"--router-kind", "lookahead", "--vcs", "2"}, "the look-ahead router has no virtual channels"},
      {{"--router-kind", "wormhole"}, "unknown router kind 'wormhole'"},
      {{"--router", "rtl:la", "--vcd", "/tmp/x.vcd"}, "only the rtl:nmp router writes a VCD"},
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
}

}  // namespace
}  // namespace nmpsim::testing
