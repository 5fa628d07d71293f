// docs/EXTENDING.md's worked example (examples/extending/): a new strategy and a new policy, registered
// through the public API, run through the unchanged pipeline at both fidelities.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "lpt_strategy.h"
#include "mapping_test_util.h"
#include "nearest_member/nearest_member.h"
#include "nmpsim/apps/experiment.h"
#include "nmpsim/mapping/moe_layer.h"
#include "nmpsim/methods/register_all.h"
#include "register.h"

namespace nmpsim {
namespace {

using methods::extending_example::lpt_assign;

TEST(Extending, LptPutsTheHeaviestFirstOnTheLeastLoadedNode) {
  // 5 -> A; 4 -> B; 3 -> B (4 < 5); 3 -> A (5 < 7); 3 -> B (7 < 8): A = {0, 3} = 8, B = {1, 2, 4} = 10.
  EXPECT_EQ(lpt_assign({5, 4, 3, 3, 3}, 2), (std::vector<int>{0, 1, 1, 0, 1}));
  EXPECT_EQ(lpt_assign({1, 1, 1}, 3), (std::vector<int>{0, 1, 2}));
}

mapping::Registry registry_with_example() {
  mapping::Registry r;
  methods::register_all(r);
  methods::extending_example::register_methods(r);  // the folder's one registration call
  return r;
}

apps::RunSpec example_spec(mapping::Fidelity f, bool telemetry) {
  apps::RunSpec s;
  s.hardware = "nmp-4x4-5t50g";
  s.model = "deepseek-v2-lite";  // 64 experts on 16 nodes: LPT has a real choice to make
  s.batch = 16;
  s.steps = 1;
  s.fidelity = f;
  s.all_strategies = false;
  s.strategies = {apps::StrategySpec::named("ep"), apps::StrategySpec::named("ep-lpt")};
  if (telemetry) s.policies = {apps::PolicySpec::named("telemetry")};
  return s;
}

void expect_example_results(const apps::Experiment& x) {
  const mapping::ModelSpec& m = x.prepared.model;
  ASSERT_EQ(x.reports.size(), 2u);
  const mapping::StrategyResult& r = x.reports[1].result;
  EXPECT_EQ(r.strategy, "ep-lpt");
  // Whole experts: every expert on exactly one node.
  const mapping::Placement& p = x.prepared.placements[1];
  for (int e = 0; e < m.experts; ++e) {
    int holders = 0;
    for (int n = 0; n < p.nodes; ++n) holders += p.at(0, e, n) > 0;
    EXPECT_EQ(holders, 1) << e;
  }
  // The policy's phase reached the results without any reporter knowing it: one 64-byte message from
  // each of the 15 other nodes after every MoE layer's combine, on a background stream.
  const int t = r.find_phase("telemetry");
  ASSERT_GE(t, 0);
  EXPECT_EQ(r.phases[static_cast<size_t>(t)].stream, 1);
  EXPECT_EQ(r.phase_bytes[static_cast<size_t>(t)], 15.0 * 64 * m.moe_layers);
  EXPECT_EQ(r.policies["telemetry"]["messages"], 15 * m.moe_layers);
  for (const auto& layer : r.steps[0]) EXPECT_EQ(r.phase_s(layer, "telemetry"), 0.0);  // nothing waits for it
  EXPECT_NE(apps::summary_json(x.prepared, x.reports)["strategies"]["ep-lpt"].dump().find("telemetry"),
            std::string::npos);
}

TEST(Extending, ANewStrategyAndPolicyRunThroughTheUnchangedPipelineAtFlowFidelity) {
  const mapping::Registry r = registry_with_example();
  apps::ExperimentOptions opt;
  opt.registry = &r;
  const apps::Experiment x = apps::run_experiment(example_spec(mapping::Fidelity::kFlow, true), opt);
  expect_example_results(x);
  // The telemetry messages share links and network interfaces with the layer's own traffic, so the
  // TBT can only grow, and by little: 15 one-flit messages per layer against megabytes of MoE traffic.
  const apps::Experiment plain = apps::run_experiment(example_spec(mapping::Fidelity::kFlow, false), opt);
  const double with_policy = x.reports[1].result.mean_tbt_s(), without = plain.reports[1].result.mean_tbt_s();
  EXPECT_GE(with_policy, without);
  EXPECT_LE(with_policy - without, 0.01 * without);
  // LPT's guarantee on the profile it was built from: no node's load exceeds the mean by more than
  // the heaviest expert.
  const mapping::Placement& p = x.prepared.placements[1];
  for (int l = 0; l < p.layers(); ++l) {
    const std::vector<double> f = x.prepared.profile.frequencies(l);
    std::vector<double> load(static_cast<size_t>(p.nodes), 0.0);
    for (int e = 0; e < p.experts; ++e)
      for (int n = 0; n < p.nodes; ++n) load[static_cast<size_t>(n)] += p.at(l, e, n) * f[static_cast<size_t>(e)];
    const double mean = x.prepared.model.top_k / double(p.nodes);
    EXPECT_LE(*std::max_element(load.begin(), load.end()), mean + *std::max_element(f.begin(), f.end()) + 1e-12) << l;
  }
}

TEST(Extending, TheSameRunsAtCycleFidelity) {
  const mapping::Registry r = registry_with_example();
  apps::ExperimentOptions opt;
  opt.registry = &r;
  const apps::Experiment x = apps::run_experiment(example_spec(mapping::Fidelity::kCycle, true), opt);
  expect_example_results(x);
  EXPECT_TRUE(x.reports[1].energy.has_value());
}

namespace nm = methods::nearest_member;

TEST(ExtendingPlanner, TokensLeaveFromTheGroupMemberNearestTheirExpert) {
  // A 4x4 mesh in four 2x2 attention groups: {0, 1, 4, 5} is the first. A token of home 0 reaches a
  // node of its own group from that node itself, node 15 (3,3) from 5 (1,1), node 3 (3,0) from 1 (1,0)
  // and node 12 (0,3) from 4 (0,1): in each case one member is strictly nearest.
  const mapping::Topology t = mapping::testing::mesh(4, 4);
  const mapping::Groups g = mapping::make_groups(t, 4);
  ASSERT_EQ(std::set<int>(g.ring[0].begin(), g.ring[0].end()), (std::set<int>{0, 1, 4, 5}));
  const nm::NearestMemberDispatch d(t, g);
  for (int v : {0, 1, 4, 5}) EXPECT_EQ(d.source(0, v), v);
  EXPECT_EQ(d.source(0, 15), 5);
  EXPECT_EQ(d.source(0, 3), 1);
  EXPECT_EQ(d.source(0, 12), 4);
  EXPECT_EQ(d.source(5, 15), 5);  // any home of the group: the same member
  ASSERT_NE(d.token_rings(), nullptr);
  EXPECT_EQ(*d.token_rings(), g.ring);
}

TEST(ExtendingPlanner, OneGroupOverTheMeshSendsNoTokenAcrossIt) {
  // With the whole mesh one attention group, every node gathers every token first, so the dispatch
  // and the combine carry nothing; each token still meets each distinct node of its experts once.
  mapping::ModelSpec m = mapping::model_preset("deepseek-v2-lite");
  m.dense_layers = 0;
  const mapping::RoutingTrace tr = mapping::testing::trace_for(m, 0.5, 64);
  const mapping::Topology t = mapping::testing::mesh(4, 4);
  const mapping::Groups g = mapping::make_groups(t, 0);
  const nm::NearestMemberDispatch d(t, g);
  const mapping::Placement ep = mapping::make_ep(m, 16);
  const mapping::LayerPlan plan =
      mapping::plan_layer(m, mapping::physical_shares(ep), 0, tr, 0, g, mapping::RunShape{64, 128}, &d);
  EXPECT_EQ(plan.dispatch_total(), 0.0);
  EXPECT_EQ(plan.combine_total(), 0.0);
  double partials = 0, pairs = 0;
  for (double x : plan.partials) partials += x;
  for (int i = 0; i < 64; ++i) {
    std::set<int> nodes;  // EP on 16 nodes: expert e on node e mod 16
    for (int k = 0; k < m.top_k; ++k) nodes.insert(tr.experts_of(0, static_cast<size_t>(i))[k] % 16);
    pairs += static_cast<double>(nodes.size());
  }
  EXPECT_EQ(partials, pairs);
  const mapping::LayerSchedule s = mapping::build_moe_layer(m, plan, g, 2);
  EXPECT_GE(s.find_phase(mapping::phase_names::kTokenAllGather), 0);
  EXPECT_GE(s.find_phase(mapping::phase_names::kPartialReduceScatter), 0);
}

TEST(ExtendingPlanner, APlacementNamingThePlannerRunsWithItOnceRegistered) {
  // EP with the planner named in the placement file: its dispatch bytes are EP's less the tokens whose
  // nearest member is the expert's node itself, and the gather and reduce phases appear.
  mapping::Registry r;
  methods::register_all(r);
  const std::string file = ::testing::TempDir() + "/nearest_ep.json";
  mapping::ModelSpec m = mapping::model_preset("deepseek-v2-lite");
  mapping::Placement p = mapping::make_ep(m, 16);
  p.strategy = "ep-nearest";
  p.dispatch = {{"name", "nearest-member"}, {"options", nlohmann::json::object()}};
  std::ofstream(file) << mapping::placement_to_json(p).dump();
  apps::RunSpec s = example_spec(mapping::Fidelity::kFlow, false);
  s.attn_tp = 4;
  s.strategies = {apps::StrategySpec::named("ep"), apps::StrategySpec::file(file)};
  apps::ExperimentOptions opt;
  opt.registry = &r;
  EXPECT_THROW(apps::run_experiment(s, opt), mapping::InputError);  // not registered yet: a one-line error
  nm::register_methods(r);                                          // the folder's one registration call
  const apps::Experiment x = apps::run_experiment(s, opt);
  ASSERT_EQ(x.reports.size(), 2u);
  const mapping::StrategyResult &ep = x.reports[0].result, &near = x.reports[1].result;
  EXPECT_LT(near.phase_bytes[static_cast<size_t>(near.find_phase("dispatch"))],
            ep.phase_bytes[static_cast<size_t>(ep.find_phase("dispatch"))]);
  EXPECT_GE(near.find_phase(mapping::phase_names::kTokenAllGather), 0);
  EXPECT_LT(ep.find_phase(mapping::phase_names::kTokenAllGather), 0);
  std::remove(file.c_str());
}

}  // namespace
}  // namespace nmpsim
