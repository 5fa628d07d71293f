// HD-MoE node balance at full size: the closed-form relaxation bound, the wrap-around start, and
// branch and bound on DeepSeek-V2-Lite and Qwen2 instances (plain C++).
#include <gtest/gtest.h>

#include "mapping_test_util.h"
#include "nmpsim/base/rng.h"
#include "nmpsim/methods/hdmoe/hdmoe_strategy.h"

namespace nmpsim::methods::hdmoe {
namespace {

using namespace nmpsim::mapping;

/// Three experts on two nodes, memory-light and compute-bound: unit times 0.6, 0.3 and 0.1 ms.
NodeBalanceProblem tiny() {
  NodeBalanceProblem pb;
  pb.experts = 3;
  pb.nodes = 2;
  pb.top_k = 1;
  pb.batch = 100;
  pb.freq = {0.6, 0.3, 0.1};
  pb.groups.experts = {{0}, {1}};
  pb.groups.freq = {0.6, 0.3};
  pb.groups.residual = {0, 0, 0.1};
  pb.expert_flops_per_token = 1e7;  // 0.6 x 100 x 1e7 / 1e12 = 0.6 ms
  pb.expert_bytes = 1e3;
  pb.token_bytes = 2e4;
  pb.peak_flops = 1e12;
  pb.memory_bytes_per_s = 1e11;
  pb.link_bytes_per_s = 1e9;
  pb.workload_bound = false;
  return pb;
}

TEST(HdmoeMilp, MatchesABruteForceOptimumOnATinyInstance) {
  // 3 experts on 2 nodes: every placement is (x0, x1, x2) = expert i's share on node 0.
  NodeBalanceProblem pb = tiny();
  pb.groups.experts = {{0}, {1}, {2}};
  pb.groups.freq = {0.6, 0.3, 0.1};
  pb.groups.residual = {0, 0, 0};
  pb.expert_flops_per_token = 1e9;  // compute 60, 30 and 10 ms against 2 ms of traffic per group
  pb.expert_bytes = 1e6;
  std::vector<double> warm = {1, 0, 0, 1, 1, 0};  // expert 0 on node 0, experts 1 and 2 on node 1
  const NodeBalanceResult r = solve_node_balance(pb, warm, 10.0);
  EXPECT_TRUE(r.optimal);
  double brute = 1e30;
  const int steps = 200;
  for (int a = 0; a <= steps; ++a)
    for (int b = 0; b <= steps; ++b)
      for (int c = 0; c <= steps; ++c) {
        const double x0 = double(a) / steps, x1 = double(b) / steps, x2 = double(c) / steps;
        brute = std::min(brute, evaluate(pb, {x0, 1 - x0, x1, 1 - x1, x2, 1 - x2}).objective);
      }
  // The MILP is exact over continuous shares; the grid can only be as good or slightly worse.
  EXPECT_LE(r.eval.objective, brute + 1e-12);
  EXPECT_NEAR(r.eval.objective, brute, 0.01 * brute);
}

TEST(HdmoeBound, IsTheMeanNodeByHand) {
  const NodeBalanceProblem pb = tiny();
  // t_comp >= (0.6 + 0.3 + 0.1) ms / 2; t_comm >= (0.6 + 0.3 + 0.1) x 2e4 B x 100 / 1e9 B/s / 2 = 1 ms.
  EXPECT_NEAR(averaging_bound(pb), 0.5e-3 + 2 * 1e-3, 1e-12);
}

/// Layer `layer` of a preset model on nmp-4x8-5t50g at batch 64, profiled on a synthetic trace.
NodeBalanceProblem layer_problem(const ModelSpec& m, double skew, int layer) {
  const RoutingTrace tr = testing::trace_for(m, skew, 2048);
  HdmoeOptions opt;
  opt.batch = 64;
  return node_balance_problem(m, testing::nmp_hardware(4, 8, 5, 50), tr, layer, opt);
}

TEST(HdmoeBound, NoPlacementBeatsIt) {
  const ModelSpec m = model_preset("deepseek-v2-lite");
  const NodeBalanceProblem pb = layer_problem(m, 0.8, 2);
  const double bound = averaging_bound(pb);
  Rng rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> P(static_cast<size_t>(pb.experts) * pb.nodes, 0.0);
    for (int i = 0; i < pb.experts; ++i) {  // each expert split over 1-3 random nodes
      const int parts = 1 + static_cast<int>(rng.uniform() * 3);
      for (int p = 0; p < parts; ++p)
        P[static_cast<size_t>(i) * pb.nodes + static_cast<int>(rng.uniform() * pb.nodes)] += 1.0 / parts;
    }
    EXPECT_GE(evaluate(pb, P).objective, bound * (1 - 1e-12));
  }
  EXPECT_GE(evaluate(pb, make_tp(m, pb.nodes).share[2]).objective, bound);
}

TEST(HdmoeWrap, FillsNodesInOrderAndSplitsAtTheirEnds) {
  NodeBalanceProblem pb = tiny();
  pb.freq = {0.4, 0.35, 0.25};  // unit times 0.4, 0.35, 0.25 ms: target 0.5 ms per node
  const std::vector<double> P = wrap_around_split(pb);
  // Order heaviest, lightest, next: expert 0 (0.4) and 0.1/0.25 of expert 2 on node 0; the rest of
  // expert 2 and expert 1 on node 1.
  const std::vector<double> want = {1, 0, 0, 1, 0.4, 0.6};
  for (size_t j = 0; j < want.size(); ++j) EXPECT_NEAR(P[j], want[j], 1e-12) << j;
}

TEST(HdmoeApportion, GivesEachFurtherNodeToTheBusiestExpertPerNode) {
  NodeBalanceProblem pb = tiny();
  pb.nodes = 6;
  // One node each; then per node 0.5 > 0.3 > 0.2: expert 0 gets a second node (0.25 per node); then
  // 0.3 > 0.25: expert 1 a second (0.15); then 0.25 > 0.2: expert 0 a third.
  pb.freq = {0.5, 0.3, 0.2};
  const std::vector<double> P = apportioned_start(pb);
  const std::vector<double> want = {1. / 3, 1. / 3, 1. / 3, 0,   0,   0,  // expert 0 on nodes 0-2
                                    0,      0,      0,      0.5, 0.5, 0,  // expert 1 on nodes 3-4
                                    0,      0,      0,      0,   0,   1};
  for (size_t j = 0; j < want.size(); ++j) EXPECT_NEAR(P[j], want[j], 1e-12) << j;
}

TEST(HdmoeApportion, PacksWholeExpertsHeaviestFirstWhenNodesAreFewer) {
  NodeBalanceProblem pb = tiny();
  pb.experts = 4;
  pb.freq = {0.1, 0.4, 0.2, 0.3};  // heaviest first: 0.4 -> node 0, 0.3 -> node 1, 0.2 -> node 1, 0.1 -> node 0
  pb.max_shares_per_node = 4;
  const std::vector<double> P = apportioned_start(pb);
  const std::vector<double> want = {1, 0, 1, 0, 0, 1, 0, 1};
  for (size_t j = 0; j < want.size(); ++j) EXPECT_NEAR(P[j], want[j], 1e-12) << j;
  pb.max_shares_per_node = 1;  // four whole experts do not fit on two nodes of one share each
  EXPECT_TRUE(apportioned_start(pb).empty());
}

TEST(HdmoeWrap, BalancesTheMeanBatchWithFewerThanDSplits) {
  const NodeBalanceProblem pb = layer_problem(model_preset("qwen2-57b-a14b"), 0.6, 0);
  const std::vector<double> P = wrap_around_split(pb);
  const int E = pb.experts, D = pb.nodes;
  std::vector<double> w(static_cast<size_t>(E), 0.0);
  double total = 0, largest = 0;
  for (const auto& f : pb.scenarios())
    for (int i = 0; i < E; ++i) w[i] += pb.unit_compute(i, f) / pb.scenarios().size();
  int split = 0;
  for (int i = 0; i < E; ++i) {
    total += w[i];
    largest = std::max(largest, w[i]);
    int holders = 0;
    double sum = 0;
    for (int c = 0; c < D; ++c) {
      holders += P[static_cast<size_t>(i) * D + c] > 0;
      sum += P[static_cast<size_t>(i) * D + c];
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
    split += holders > 1;
  }
  EXPECT_LT(split, D);  // McNaughton: at most D - 1 experts cross a node's end
  for (int c = 0; c < D; ++c) {
    double load = 0;
    for (int i = 0; i < E; ++i) load += P[static_cast<size_t>(i) * D + c] * w[i];
    EXPECT_LE(load, std::max(total / D, largest) * (1 + 1e-9)) << "node " << c;
  }
}

TEST(HdmoeMilp, BranchAndBoundRunsOnTheLargeModels) {
  // 64 experts on 32 nodes: the neighbourhood model, searched by CBC; Mixtral's 8: the full model.
  for (const char* name : {"deepseek-v2-lite", "qwen2-57b-a14b", "mixtral-8x7b"}) {
    const ModelSpec m = model_preset(name);
    const NodeBalanceProblem pb = layer_problem(m, 0.6, 1);
    const std::vector<double> ep = make_ep(m, pb.nodes).share[1];
    // A generous limit: under the sanitizers the LP alone takes a good part of a second.
    const NodeBalanceResult r = solve_node_balance(pb, ep, 5.0);
    EXPECT_TRUE(r.used_cbc) << name;
    EXPECT_EQ(r.full_model, m.experts == 8) << name;
    EXPECT_LT(r.variables, 4000) << name;
    EXPECT_GE(r.best_bound, averaging_bound(pb) * (1 - 1e-12)) << name;
    EXPECT_GE(r.eval.objective, r.best_bound * (1 - 1e-12)) << name;
    EXPECT_LE(r.eval.objective, evaluate(pb, wrap_around_split(pb)).objective * (1 + 1e-12)) << name;
    EXPECT_LT(r.eval.objective, 0.9 * r.warm_objective) << name;  // skewed: EP's hot nodes
    EXPECT_LE(r.search_gap, 1.0);
  }
}

}  // namespace
}  // namespace nmpsim::methods::hdmoe
