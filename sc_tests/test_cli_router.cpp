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
std::vector<std::string> deliveries(const std::string& router, const std::string& model) {
  const std::string out = ::testing::TempDir() + "nmpsim_router_" + router;
  std::filesystem::remove_all(out);
  const CliRun r =
      run_nmpsim({"run", "--hw", "hdmoe-4x4-5t50g", "--model", model, "--steps", "1", "--batch", "8", "--strategy",
                  "ep", "--router", router, "--message-log", "--out", out, "--no-plots", "--quiet"});
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
