// MoEntwine's balancer at run time (plain C++, flow fidelity): greedy EPLB and the migration stages
// against hand computation, and the policy's replicas, windows and pauses against conservation laws.
#include <gtest/gtest.h>

#include <numeric>

#include "mapping_test_util.h"
#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/layer_runner.h"
#include "nmpsim/methods/moentwine/ftd_layout.h"
#include "nmpsim/methods/moentwine/ni_balancer.h"
#include "nmpsim/methods/moentwine/token_domain_dispatch.h"

namespace nmpsim::methods::moentwine {
namespace {

using mapping::testing::mesh;

TEST(MoentwineBalancer, GreedyOnALineOfFourAsComputedByHand) {
  // The same line as Algorithm 1's test: expert d native on device d, one shadow slot each, loads
  // [10, 4, 3, 1]. Greedy takes the expert of highest load per copy to the coldest free device:
  // 1. e0 (10) to d3 (heat 1), from its native d0: heats 5 4 3 6.
  // 2. e0 (10/2 = 5) to d2 (3; d1 has 4): heats 10/3, 4, 3 + 10/3, 1 + 10/3.
  // 3. e1 (4 > 10/3) to d0 (10/3, the only other free device): heats 10/3 + 2, 2, 3 + 10/3, 1 + 10/3.
  // 4. e0 (10/3) to d1, the last free slot: heats 4.5 4.5 5.5 3.5. No slot left: stop.
  // The same final heats as Algorithm 1 but 3 + 2 + 1 + 1 = 7 hops of copies against its 4.
  ExpertCopies c = native_copies(4, 4, 1);
  const std::vector<double> load{10, 4, 3, 1};
  const std::vector<Move> moves = greedy_balance(c, load);
  ASSERT_EQ(moves.size(), 4u);
  const int expected[4][3] = {{0, 0, 3}, {0, 0, 2}, {1, 1, 0}, {0, 0, 1}};
  int hops = 0;
  for (size_t i = 0; i < moves.size(); ++i) {
    EXPECT_EQ(moves[i].expert, expected[i][0]) << i;
    EXPECT_EQ(moves[i].from, expected[i][1]) << i;
    EXPECT_EQ(moves[i].to, expected[i][2]) << i;
    hops += std::abs(moves[i].to - moves[i].from);
  }
  EXPECT_EQ(hops, 7);
  const std::vector<double> h = heats(c, load, 4);
  const double want[4] = {4.5, 4.5, 5.5, 3.5};
  for (int d = 0; d < 4; ++d) EXPECT_NEAR(h[static_cast<size_t>(d)], want[d], 1e-12) << d;
}

TEST(MoentwineBalancer, Algorithm1KeepsAReplicaThatStillServes) {
  // Loads [10, 4, 3, 1] on the line; a replica of e0 already serves on d2. Algorithm 1's first move
  // would put e0 on d1 (nearest to d0); with the serving set, d2 qualifies (3 + 5 < 10) and costs nothing.
  ExpertCopies now = native_copies(4, 4, 1);
  now.holders[0].push_back(2);
  ExpertCopies c = native_copies(4, 4, 1);
  const std::vector<Move> moves = topology_aware_balance(mesh(4, 1), c, {10, 4, 3, 1}, &now);
  ASSERT_FALSE(moves.empty());
  EXPECT_EQ(moves[0].expert, 0);
  EXPECT_EQ(moves[0].to, 2);
}

TEST(MoentwineBalancer, CopiesOfAPausedRoundFormChains) {
  // Algorithm 1's four moves on the line (e0 0->1, 1->2, 2->3; e1 1->0): e0 is one stream 0 -> 1 -> 2
  // -> 3, e1 another. A second copy from node 1 (1 -> 5) cannot extend the chain past 1: it starts
  // from 1 once the first chain is done.
  const std::vector<CopyChain> c = copy_chains({{0, 1, -1}, {1, 2, 0}, {2, 3, 1}, {1, 0, -1}, {1, 5, 0}});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].src, 0);
  EXPECT_EQ(c[0].nodes, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(c[0].wait_for, -1);
  EXPECT_EQ(c[1].src, 1);
  EXPECT_EQ(c[1].nodes, (std::vector<int>{0}));
  EXPECT_EQ(c[2].src, 1);
  EXPECT_EQ(c[2].nodes, (std::vector<int>{5}));
  EXPECT_EQ(c[2].wait_for, 0);
}

TEST(MoentwineBalancer, StagesCutThePathWhereItEntersOrLeavesADomain) {
  // 4x4 with ER's 2x2 domains (TP 4): node 0 to node 15 runs x first: 0-1 inside domain 0, 1-2 into
  // domain 1, 2-3 inside it, then y: 3-7 inside domain 1, 7-11 into domain 3, 11-15 inside it.
  const mapping::Topology t = mesh(4, 4);
  const TokenDomains d = token_domains(t, 4, Mapping::kEntwined);
  const std::vector<Stage> st = migration_stages(t, d.ftd_of, 0, 15);
  const int want[5][4] = {{0, 1, 1, 0}, {1, 2, 1, 1}, {2, 7, 2, 0}, {7, 11, 1, 1}, {11, 15, 1, 0}};
  ASSERT_EQ(st.size(), 5u);
  for (size_t i = 0; i < st.size(); ++i) {
    EXPECT_EQ(st[i].src, want[i][0]) << i;
    EXPECT_EQ(st[i].dst, want[i][1]) << i;
    EXPECT_EQ(st[i].hops, want[i][2]) << i;
    EXPECT_EQ(st[i].global, want[i][3] == 1) << i;
  }
  const std::vector<Stage> one = migration_stages(t, {}, 0, 15);  // no domains: one local stage
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].hops, 6);
  EXPECT_FALSE(one[0].global);
  EXPECT_TRUE(migration_stages(t, d.ftd_of, 5, 5).empty());
}

/// DeepSeek-V2-Lite (64 experts, 4 per device) on a 4x4 wafer-like mesh with ER's layout, TP 4.
struct Fixture {
  mapping::ModelSpec m = mapping::model_preset("deepseek-v2-lite");
  mapping::AnalyticalHardware hw = mapping::testing::nmp_hardware(4, 4, 50, 400);
  mapping::RoutingTrace tr;
  mapping::Placement p;
  mapping::RunConfig cfg;
  std::vector<int> domain_of;
  std::unique_ptr<mapping::DispatchPlanner> planner;
  Fixture() {
    m.moe_layers = 3;
    m.dense_layers = 0;
    tr = mapping::testing::trace_for(m, 1.2, 4096);
    const TokenDomains d = token_domains(hw.topology, 4, Mapping::kEntwined);
    p = mapping::make_ep(m, 16);
    p.strategy = "moentwine-er";
    p.tp_rings = d.tp.ring;
    p.dispatch = token_domain_dispatch_json(d.ftd_of, d.token_rings);
    domain_of = d.ftd_of;
    planner = token_domain_planner().create(p.dispatch.at("options"), hw.topology,
                                            mapping::groups_for(p, hw.topology, 4), "test");
    cfg.shape = {256, 256};
    cfg.steps = 5;
    cfg.attn_tp = 4;
  }
  mapping::StrategyResult run(const std::string& options) {
    mapping::PolicyList policies;
    if (!options.empty())
      policies.emplace_back("moentwine-balancer",
                            std::make_unique<BalancerPolicy>(balancer_options(nlohmann::json::parse(options), "test")));
    flow::FlowExecutor ex(hw);
    return mapping::run_placement(ex, mapping::RunInputs{m, tr, hw, cfg, planner.get()}, p, policies);
  }
};

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(MoentwineBalancerPolicy, NoSlotsChangesNothingAndFreeReplicasBalanceWithoutLosingAToken) {
  Fixture f;
  const mapping::StrategyResult none = f.run(""), zero = f.run(R"({"slots": 0})");
  EXPECT_DOUBLE_EQ(zero.mean_tbt_s(), none.mean_tbt_s());
  EXPECT_EQ(zero.policies["moentwine-balancer"]["replicas_landed"], 0);
  const mapping::StrategyResult free = f.run(R"({"migrate": "free", "alpha": 0})");
  const nlohmann::json& st = free.policies["moentwine-balancer"];
  const auto ratio = st["peak_to_mean_load_per_step"].get<std::vector<double>>();
  const auto base = zero.policies["moentwine-balancer"]["peak_to_mean_load_per_step"].get<std::vector<double>>();
  ASSERT_EQ(ratio.size(), 5u);
  EXPECT_DOUBLE_EQ(ratio[0], base[0]);                                          // no history yet: no replica in step 0
  for (size_t s = 1; s < ratio.size(); ++s) EXPECT_LT(ratio[s], base[s]) << s;  // replicas from step 1 on
  EXPECT_DOUBLE_EQ(st["migration_link_bytes_local"].get<double>() + st["migration_link_bytes_paused"].get<double>(),
                   0.0);
  // Every routed token still meets its experts once per layer, and what goes out comes back.
  EXPECT_NEAR(sum(free.node_token_work), 256.0 * f.m.top_k * f.m.moe_layers * 5, 1e-6);
  EXPECT_DOUBLE_EQ(free.bytes_of("dispatch"), free.bytes_of("combine"));
}

TEST(MoentwineBalancerPolicy, StagedReplicasServeFromTheStepAfterTheyLandAndStagesUseTheirLinks) {
  Fixture f;
  const mapping::StrategyResult r = f.run(R"({"migrate": "staged", "alpha": 0})");
  const nlohmann::json& st = r.policies["moentwine-balancer"];
  const auto serving = st["replicas_serving_per_step"].get<std::vector<int>>();
  // Step 0 has no history; step 1 plans and moves; the first replicas serve in step 2.
  EXPECT_EQ(serving[0], 0);
  EXPECT_EQ(serving[1], 0);
  EXPECT_GT(st["replicas_landed"].get<int>(), 0);
  EXPECT_DOUBLE_EQ(st["replica_bytes"].get<double>(), st["replicas_landed"].get<int>() * f.m.expert_bytes());
  // The migration's payload on the links (the schedules' own record, XY routes) is what the stages
  // sent times their hops: local stages on links inside a domain, global ones on links between domains.
  const auto& other = r.family_link_bytes[static_cast<size_t>(mapping::PhaseFamily::kOther)];
  const mapping::Topology& t = f.hw.topology;
  double inside = 0, across = 0;
  for (int v = 0; v < t.nodes(); ++v)
    for (int d = 0; d < 4; ++d) {
      const double b = other[static_cast<size_t>(v) * 4 + d];
      if (b == 0) continue;
      const int dx = d == mapping::kEast ? 1 : d == mapping::kWest ? -1 : 0;
      const int dy = d == mapping::kSouth ? 1 : d == mapping::kNorth ? -1 : 0;
      const int u = t.id(t.x(v) + dx, t.y(v) + dy);
      (f.domain_of[static_cast<size_t>(v)] == f.domain_of[static_cast<size_t>(u)] ? inside : across) += b;
    }
  EXPECT_NEAR(inside, st["migration_link_bytes_local"].get<double>(), 1.0);
  EXPECT_NEAR(across, st["migration_link_bytes_global"].get<double>(), 1.0);
  EXPECT_GT(across, 0);
  EXPECT_GT(st["segments_cancelled"].get<int>(), 0);  // windows closed on unfinished stages
}

TEST(MoentwineBalancerPolicy, PausedMigrationStopsTheStepForAtLeastOneCopy) {
  Fixture f;
  const mapping::StrategyResult free = f.run(R"({"migrate": "free", "alpha": 0, "beta": 2})");
  const mapping::StrategyResult paused = f.run(R"({"migrate": "paused", "alpha": 0, "beta": 2})");
  const nlohmann::json& st = paused.policies["moentwine-balancer"];
  EXPECT_GT(st["replicas_landed"].get<int>(), 0);
  // The pause is in the time between tokens: at least one expert over one link per round.
  const double one_copy_s = f.m.expert_bytes() / (f.hw.topology.links[0].gbytes_per_s * 1e9);
  const double pause_s = paused.mean_family_s(mapping::PhaseFamily::kOther) * 5;
  EXPECT_GE(pause_s, st["rounds"].get<int>() * one_copy_s);
  EXPECT_GT(paused.mean_tbt_s(), free.mean_tbt_s());
  // Same plans as the free reference (same trigger), so the same replicas serve.
  EXPECT_EQ(st["replicas_serving_per_step"], free.policies["moentwine-balancer"]["replicas_serving_per_step"]);
}

TEST(MoentwineBalancerPolicy, SplitExpertsAndBadOptionsAreInputErrors) {
  Fixture f;
  f.p = mapping::make_tp(f.m, 16);
  f.p.strategy = "tp";
  f.cfg.attn_tp = 4;
  EXPECT_THROW(f.run("{}"), mapping::InputError);
  EXPECT_THROW(balancer_options(nlohmann::json::parse(R"({"migrate": "teleport"})"), "x"), mapping::InputError);
  EXPECT_THROW(balancer_options(nlohmann::json::parse(R"({"gain": 1})"), "x"), mapping::InputError);
  EXPECT_THROW(balancer_options(nlohmann::json::parse(R"({"slot": 1})"), "x"), mapping::InputError);
}

}  // namespace
}  // namespace nmpsim::methods::moentwine
