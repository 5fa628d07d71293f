// HD-MoE: node-balance MILP, link-balance mappers, broadcast chunk size, gamma fit (plain C++).
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "mapping_test_util.h"
#include "nmpsim/base/rng.h"
#include "nmpsim/methods/hdmoe/hdmoe_strategy.h"
#include "nmpsim/methods/hdmoe/prebroadcast_admission.h"

namespace nmpsim::methods::hdmoe {
namespace {

using namespace nmpsim::mapping;

AnalyticalHardware nmp(int w, int h, double tflops, double gbps) { return testing::nmp_hardware(w, h, tflops, gbps); }

RoutingTrace trace_for(const ModelSpec& m, double skew, size_t tokens = 2048) {
  return mapping::testing::trace_for(m, skew, tokens);
}

void expect_satisfies_constraints(const NodeBalanceProblem& pb, const NodeBalanceResult& r) {
  const int E = pb.experts, D = pb.nodes;
  for (int i = 0; i < E; ++i) {
    double sum = 0;
    for (int c = 0; c < D; ++c) {
      const double p = r.P[static_cast<size_t>(i) * D + c];
      EXPECT_GE(p, 0.0);
      EXPECT_LE(p, 1.0);
      sum += p;
    }
    EXPECT_NEAR(sum, 1.0, 1e-9) << "expert " << i;  // (6)
  }
  for (int c = 0; c < D; ++c) {
    double load = 0, shares = 0;
    for (int i = 0; i < E; ++i) {
      load += r.P[static_cast<size_t>(i) * D + c] * pb.freq[i];
      shares += r.P[static_cast<size_t>(i) * D + c];
    }
    EXPECT_LE(load, r.workload_cap + 1e-6) << "node " << c;  // (9)
    EXPECT_LE(shares, pb.max_shares_per_node + 1e-6);        // memory
  }
}

TEST(HdmoeMilp, SatisfiesEveryConstraintAndBeatsItsEpWarmStart) {
  for (const char* name : {"mixtral-8x7b", "deepseek-v2-lite"}) {
    const ModelSpec m = model_preset(name);
    const AnalyticalHardware hw = nmp(4, 8, 5, 50);
    const RoutingTrace tr = trace_for(m, 1.0);
    HdmoeOptions opt;
    opt.batch = 64;
    opt.max_groups = 32;
    const Placement ep = make_ep(m, 32);
    for (int l : {0, 5}) {
      const NodeBalanceProblem pb = node_balance_problem(m, hw, tr, l, opt);
      const NodeBalanceResult r = solve_node_balance(pb, ep.share[l], 1.0);
      expect_satisfies_constraints(pb, r);
      EXPECT_LE(r.eval.objective, r.warm_objective + 1e-12) << name;
      EXPECT_NEAR(r.warm_objective, evaluate(pb, ep.share[l]).objective, 1e-12);
      EXPECT_GE(r.eval.objective, r.best_bound - 1e-9);  // the solver's bound is a lower bound
      // On this skewed trace the hot expert overloads its EP group: node balance must do strictly better.
      EXPECT_LT(r.eval.objective, 0.95 * r.warm_objective) << name << " layer " << l;
    }
  }
}

TEST(HdmoeGroups, KeepsTheMostFrequentAndFoldsTheRest) {
  const ModelSpec m = model_preset("deepseek-v2-lite");
  const RoutingTrace tr = trace_for(m, 0.8, 4000);
  const CoactivationGroups all = coactivation_groups(tr, 3, 1 << 20);
  EXPECT_GT(all.total_groups, 1000u);  // top-6 of 64: thousands of distinct groups
  EXPECT_NEAR(all.kept_mass, 1.0, 1e-9);
  const CoactivationGroups few = coactivation_groups(tr, 3, 50);
  EXPECT_EQ(few.experts.size(), 50u);
  for (size_t g = 1; g < few.freq.size(); ++g) EXPECT_LE(few.freq[g], few.freq[g - 1]);
  // Folded mass: every folded group's frequency counted once per member expert.
  const double folded = std::accumulate(few.residual.begin(), few.residual.end(), 0.0);
  EXPECT_NEAR(folded, (1.0 - few.kept_mass) * 6, 1e-9);
}

TEST(HdmoeLinkBalance, BayesianBeatsRandomOnAverageAndReturnsPermutations) {
  const ModelSpec m = model_preset("mixtral-8x7b");
  const AnalyticalHardware hw = nmp(4, 4, 5, 50);
  const RoutingTrace tr = trace_for(m, 1.2);
  const Placement ep = make_ep(m, 16);
  const auto phys = physical_shares(ep);
  const Groups g = make_groups(hw.topology, 0);
  std::vector<LayerPlan> plans;
  for (int s = 0; s < 3; ++s) plans.push_back(plan_layer(m, phys, s * 5, tr, s * 64, g, RunShape{64, 256}));
  const MappingCost cost(hw, plans);
  double bo = 0, rnd = 0, sa = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    for (const MappingResult& r :
         {map_bayesian(cost, 60, seed, hw.topology), map_random(cost, 60, seed), map_annealing(cost, 60, seed)}) {
      std::set<int> seen(r.node_map.begin(), r.node_map.end());
      EXPECT_EQ(seen.size(), 16u) << r.method;
      EXPECT_EQ(*seen.begin(), 0);
      EXPECT_EQ(*seen.rbegin(), 15);
      EXPECT_EQ(r.best_by_evaluation.size(), 60u);
      EXPECT_NEAR(r.cost, cost(r.node_map), 1e-15);  // the reported cost is the map's cost
      for (size_t e = 1; e < r.best_by_evaluation.size(); ++e)
        EXPECT_LE(r.best_by_evaluation[e], r.best_by_evaluation[e - 1]);
      EXPECT_LE(r.cost, r.identity_cost);
    }
    bo += map_bayesian(cost, 60, seed, hw.topology).cost;
    rnd += map_random(cost, 60, seed).cost;
    sa += map_annealing(cost, 60, seed).cost;
  }
  EXPECT_LT(bo, rnd);
}

TEST(HdmoeLinkBalance, AssignmentIsOptimalOnSmallMatrices) {
  Rng rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 5;
    std::vector<double> a(n * n);
    for (double& v : a) v = rng.uniform();
    const std::vector<int> got = assign_min_cost(a, n);
    std::vector<int> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    double best = 1e30;
    do {
      double c = 0;
      for (int i = 0; i < n; ++i) c += a[i * n + perm[i]];
      best = std::min(best, c);
    } while (std::next_permutation(perm.begin(), perm.end()));
    double c = 0;
    for (int i = 0; i < n; ++i) c += a[i * n + got[i]];
    EXPECT_NEAR(c, best, 1e-12);
  }
}

TEST(HdmoeBroadcast, OptimalChunkMinimisesEq16Numerically) {
  for (int k : {1, 2, 5})
    for (int D : {16, 32, 64}) {
      const double alpha = 3e-9, beta = 1.0 / 50e9, W = 17.3e6;
      double best_c = 0, best_t = 1e30;
      for (double c = 1e3; c < W; c *= 1.001) {
        const double t = prebroadcast_seconds(alpha, beta, W, D, k, c);
        if (t < best_t) {
          best_t = t;
          best_c = c;
        }
      }
      const double c18 = optimal_broadcast_chunk(alpha, beta, W, D, k);
      EXPECT_NEAR(best_c, c18, 0.002 * c18) << "k " << k << " D " << D;
      EXPECT_NEAR(prebroadcast_seconds(alpha, beta, W, D, k, c18), prebroadcast_lower_bound(alpha, beta, W, D, k),
                  1e-12 * best_t);
      EXPECT_LE(prebroadcast_lower_bound(alpha, beta, W, D, k), best_t + 1e-15);
    }
}

/// A gate (1 us on node 0, then its barrier) and the experts (1 ms of compute on node 0, no DRAM);
/// optionally a foreground transfer of `fg_bytes` from node 1 to node 0 after the gate.
LayerSchedule gate_then_experts(double fg_bytes) {
  LayerSchedule s;
  const int gate = s.phase("gate", PhaseFamily::kOther), experts = s.phase("experts", PhaseFamily::kMoeCompute);
  const OpId g = s.compute(gate, PhysicalNode(0), 1e6, 0);
  const OpId j = s.join(gate, {g});
  s.compute(experts, PhysicalNode(0), 1e9, 0, {j});
  if (fg_bytes > 0) s.transfer(experts, PhysicalNode(1), PhysicalNode(0), fg_bytes, {j});
  return s;
}

BroadcastPlan copy_to_node0(double bytes, double saving_s) {
  BroadcastPlan p;
  p.expert = 0;
  p.streams.push_back(BroadcastStream{1, {0}, bytes, std::min(bytes, 1e6)});
  p.holders = {0, 1};
  p.saving_s = saving_s;
  return p;
}

TEST(HdmoePrebroadcast, AdmitsWhatLandsInTimeAndSavesMoreThanItCosts) {
  AnalyticalHardware hw = testing::line_hardware(2);
  hw.peak_flops = 1e12;
  hw.startup_s = 0;
  const LayerSchedule s = gate_then_experts(0);
  // The layer takes 1 us + 1 ms; a 1 MB copy (20 us on the 50 GB/s link) lands long before and costs
  // the foreground nothing (node 0 computes without DRAM): admitted, net = its saving.
  const LayerForecast f = forecast_layer(hw, s, 0, {copy_to_node0(1e6, 100e-6)});
  EXPECT_NEAR(f.foreground_s, 1.001e-3, 1e-12);
  EXPECT_GT(f.landed_s, 20e-6);
  EXPECT_LT(f.landed_s, 30e-6);
  AdmissionResult a = admit_by_flow(hw, s, 0, {copy_to_node0(1e6, 100e-6)});
  ASSERT_EQ(a.admitted.size(), 1u);
  EXPECT_NEAR(a.predicted_net_s, 100e-6, 1e-12);
  // Only half of the predicted savings came true so far: half counts.
  EXPECT_NEAR(admit_by_flow(hw, s, 0, {copy_to_node0(1e6, 100e-6)}, 0.5).predicted_net_s, 50e-6, 1e-12);
  EXPECT_TRUE(admit_by_flow(hw, s, 0, {copy_to_node0(1e6, 100e-6)}, 0.0).admitted.empty());
  // Saves nothing: rejected. 100 MB take 2 ms and cannot land before the layer ends: rejected.
  EXPECT_TRUE(admit_by_flow(hw, s, 0, {copy_to_node0(1e6, 0.0)}).admitted.empty());
  EXPECT_TRUE(admit_by_flow(hw, s, 0, {copy_to_node0(100e6, 1.0)}).admitted.empty());
  // Greedy in priority order: the second candidate adds nothing to the first's (cumulative) saving.
  a = admit_by_flow(hw, s, 0, {copy_to_node0(1e6, 100e-6), copy_to_node0(1e6, 100e-6)});
  EXPECT_EQ(a.admitted.size(), 1u);
  EXPECT_EQ(a.considered, 2);
}

TEST(HdmoePrebroadcast, ACopyThatSlowsTheLayerMoreThanItSavesIsRejected) {
  AnalyticalHardware hw = testing::line_hardware(2);
  hw.peak_flops = 1e12;
  hw.startup_s = 0;
  // The layer now also moves 40 MB over the one link (800 us alone, on the critical path with the
  // 1 ms compute in parallel: the layer ends at 1.001 ms). A 40 MB copy shares that link, so the
  // transfer takes more than 1 ms and the layer grows by more than 100 us.
  const LayerSchedule s = gate_then_experts(40e6);
  const double base = forecast_layer(hw, s, 0, {}).foreground_s;
  EXPECT_NEAR(base, 1.001e-3, 1e-9);
  const LayerForecast f = forecast_layer(hw, s, 0, {copy_to_node0(40e6, 0)});
  EXPECT_GT(f.foreground_s - base, 100e-6);
  EXPECT_TRUE(admit_by_flow(hw, s, 0, {copy_to_node0(40e6, 100e-6)}).admitted.empty());
}

TEST(HdmoeGamma, LeastSquaresThroughTheOrigin) {
  const LinearFit exact = fit_through_origin({1, 2, 3, 4}, {2.5, 5, 7.5, 10});
  EXPECT_DOUBLE_EQ(exact.gamma, 2.5);
  EXPECT_DOUBLE_EQ(exact.r2, 1.0);
  const LinearFit noisy = fit_through_origin({1, 2, 3, 4}, {2, 5.5, 7, 10.5});
  // gamma = sum(xy) / sum(x^2) = (2 + 11 + 21 + 42) / 30.
  EXPECT_NEAR(noisy.gamma, 76.0 / 30, 1e-12);
  EXPECT_LT(noisy.r2, 1.0);
  EXPECT_GT(noisy.r2, 0.9);
}

}  // namespace
}  // namespace nmpsim::methods::hdmoe
