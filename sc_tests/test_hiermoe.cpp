// HierMoE (plain C++): the hierarchy's ranks and levels, duplicate-free counts and duplication rates
// against hand cases, the closed form and the paper's Table II, the alpha-beta time of HDd and its
// optimal dimension by hand, and the level fit on our NoC model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "mapping_test_util.h"
#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/layer_runner.h"
#include "nmpsim/methods/common/hierarchy.h"
#include "nmpsim/methods/common/level_fit.h"
#include "nmpsim/methods/hiermoe/alltoall_policy.h"
#include "nmpsim/methods/hiermoe/dedup.h"
#include "nmpsim/methods/hiermoe/hier_alltoall.h"
#include "nmpsim/methods/hiermoe/swap.h"

namespace nmpsim::methods::hiermoe {
namespace {

using namespace nmpsim::methods::common;  // the hierarchy and its fitted costs

using mapping::testing::wafers;

/// Every group of `level` is a set of nodes with one value of `key`.
void expect_groups_are(const methods::common::Hierarchy& h, int level, const std::function<int(int)>& key) {
  for (int g = 0; g < h.nodes() / h.group_size(level); ++g) {
    std::set<int> keys;
    for (int pos = 0; pos < h.group_size(level); ++pos) keys.insert(key(h.member(level, g, pos)));
    EXPECT_EQ(keys.size(), 1u) << "level " << level << " group " << g;
  }
}

TEST(Hierarchy, FourWafersGiveAWaferLevelAndQuadrantsInsideThem) {
  const mapping::Topology t = wafers(16, 16, 8, 8);
  const methods::common::Hierarchy h0 = methods::common::make_hierarchy(t, 0);
  ASSERT_EQ(h0.levels.size(), 1u);
  EXPECT_EQ(h0.levels[0].name, "wafer");
  EXPECT_EQ(h0.levels[0].groups, 4);
  EXPECT_EQ(h0.dimensions(), 2);
  EXPECT_EQ(h0.rank_of[static_cast<size_t>(t.id(8, 0))], 64);  // wafer 1 starts at rank 64
  EXPECT_EQ(h0.rank_of[static_cast<size_t>(t.id(1, 0))], 1);   // row-major inside a wafer
  EXPECT_EQ(h0.rank_of[static_cast<size_t>(t.id(0, 1))], 8);
  expect_groups_are(h0, 1, [&](int v) { return t.wafer_of(v); });
  const methods::common::Hierarchy h1 = methods::common::make_hierarchy(t, 1);
  ASSERT_EQ(h1.levels.size(), 2u);
  EXPECT_EQ(h1.levels[1].name, "quadrant-1");
  EXPECT_EQ(h1.levels[1].groups, 16);
  expect_groups_are(h1, 2, [&](int v) { return (t.y(v) / 4) * 4 + t.x(v) / 4; });  // 4x4 blocks
  // One 8x8 wafer has no real level; two quadrant levels make 4 and 16 groups.
  const methods::common::Hierarchy one = methods::common::make_hierarchy(wafers(8, 8, 8, 8), 2);
  ASSERT_EQ(one.levels.size(), 2u);
  EXPECT_EQ(one.levels[0].groups, 4);
  EXPECT_EQ(one.levels[1].groups, 16);
  EXPECT_TRUE(methods::common::make_hierarchy(wafers(8, 8, 8, 8), 0).levels.empty());
}

TEST(Hierarchy, AnNmpChipHasVirtualLevelsOnlyAndBadSplitsAreInputErrors) {
  const mapping::Topology t = mapping::testing::mesh(4, 8);  // one die of 4x8 PEs
  EXPECT_TRUE(methods::common::make_hierarchy(t, 0).levels.empty());
  const methods::common::Hierarchy h = methods::common::make_hierarchy(t, 2);
  ASSERT_EQ(h.levels.size(), 2u);
  EXPECT_EQ(h.levels[0].groups, 4);   // 2x4 quadrants
  EXPECT_EQ(h.levels[1].groups, 16);  // 1x2 quadrants of those
  expect_groups_are(h, 1, [&](int v) { return (t.y(v) / 4) * 2 + t.x(v) / 2; });
  EXPECT_THROW(methods::common::make_hierarchy(t, 3), mapping::InputError);  // 4 columns do not halve 3 times
}

Routing routing(int experts, int top_k, const std::vector<std::vector<int>>& tokens) {
  Routing r{experts, top_k, {}};
  for (const auto& t : tokens)
    for (int e : t) r.ids.push_back(static_cast<uint16_t>(e));
  return r;
}

TEST(HierDedup, CountsAndRatesByHand) {
  // 4 experts, top-2, groups {0, 1} and {2, 3}: tokens {0, 1}, {1, 2}, {2, 3} reach groups
  // {0}, {0, 1}, {1}: p = [2, 2]; 4 distinct copies of 6: rate 1/3. Per expert (4 groups) nothing saves.
  const Routing r = routing(4, 2, {{0, 1}, {1, 2}, {2, 3}});
  EXPECT_EQ(group_counts(r, 2), (std::vector<double>{2, 2}));
  EXPECT_DOUBLE_EQ(duplication_rate(r, 2), 1.0 / 3);
  EXPECT_DOUBLE_EQ(duplication_rate(r, 4), 0.0);
  EXPECT_EQ(group_counts(r, 1), (std::vector<double>{3}));
  EXPECT_THROW(group_counts(r, 3), mapping::InputError);
}

TEST(HierDedup, UniformClosedFormMatchesThePapersTableTwo) {
  // Table II (K x R, in %): rows R = 32, 16, 8, 4; columns K = 2, 4, 6, 8. With 256 experts the
  // closed form gives the table to within 1.5 points.
  const int R[4] = {32, 16, 8, 4}, K[4] = {2, 4, 6, 8};
  const double table[4][4] = {{2, 4, 7, 9}, {3, 9, 14, 18}, {6, 17, 27, 34}, {12, 32, 46, 55}};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_NEAR(100 * uniform_duplication_rate(256, K[j], R[i]), table[i][j], 1.5) << "R " << R[i] << " K " << K[j];
  // And a uniform synthetic trace measures it (64 experts, top-6, 8 groups, 8192 tokens).
  mapping::SyntheticTraceConfig c;
  c.layers = 1;
  c.experts = 64;
  c.top_k = 6;
  c.tokens = 8192;
  c.zipf_s = 0;
  c.coactivation = 0;
  c.layer_correlation = 0;
  const mapping::RoutingTrace tr = mapping::synthetic_trace(c);
  Routing r{64, 6, {}};
  for (size_t t = 0; t < tr.tokens(); ++t)
    for (int k = 0; k < 6; ++k) r.ids.push_back(tr.experts_of(0, t)[k]);
  EXPECT_NEAR(duplication_rate(r, 8), uniform_duplication_rate(64, 6, 8), 0.01);
}

TEST(HierDedup, HdTimeAndOptimalDimensionByHand) {
  // 8 nodes on a 4x2 mesh of two 2x2 wafers: one inter level (wafer, U = 2). 8 experts (one per
  // node, in rank order), top-2, 4 tokens: {0, 1}, {0, 4}, {1, 5}, {4, 5}.
  const methods::common::Hierarchy h = methods::common::make_hierarchy(wafers(4, 2, 2, 2), 0);
  ASSERT_EQ(h.dimensions(), 2);
  const Routing r = routing(8, 2, {{0, 1}, {0, 4}, {1, 5}, {4, 5}});
  HierarchyCosts c;
  c.flat = {1e-6, 1e-9};
  c.inter = {{2e-6, 4e-9}};
  c.intra = {{0.5e-6, 0.5e-9}};
  const double M = 100;  // bytes per token
  // d = 1: per node p = [2, 2, 0, 0, 2, 2, 0, 0] (experts 0, 1, 4, 5 on ranks 0, 1, 4, 5): 8 x 2 x 100.
  EXPECT_NEAR(hd_seconds(h, c, r, 1, M), 1e-6 + 8 * 2 * M * 1e-9, 1e-15);
  // d = 2: per wafer p = [3, 3]: inter 2 / 1 x 3 x 100; intra 8 / 2 x 2 x 100.
  const double t2 = 2e-6 + 2 * 3 * M * 4e-9 + 0.5e-6 + 4 * 2 * M * 0.5e-9;
  EXPECT_NEAR(hd_seconds(h, c, r, 2, M), t2, 1e-15);
  EXPECT_EQ(optimal_dimension(h, c, r, M), 1);  // 5.3 us against 2.6 us
  // Cheap inter and intra start-ups and a cheap border: 0.2 + 0.06 + 0.2 + 0.4 = 0.86 us < 2.6 us.
  c.inter = {{0.2e-6, 0.1e-9}};
  c.intra = {{0.2e-6, 0.5e-9}};
  EXPECT_NEAR(hd_seconds(h, c, r, 2, M), 0.86e-6, 1e-15);
  EXPECT_EQ(optimal_dimension(h, c, r, M), 2);
  EXPECT_THROW(hd_seconds(h, c, r, 3, M), mapping::InputError);
}

TEST(HierFit, ALineIsFittedExactlyAndTheWaferBorderCostsMore) {
  double r2 = 0;
  const LinkCost l = fit_line({{1, 3}, {2, 5}, {4, 9}}, &r2);
  EXPECT_NEAR(l.alpha_s, 1, 1e-12);
  EXPECT_NEAR(l.beta_s_per_byte, 2, 1e-12);
  EXPECT_NEAR(r2, 1, 1e-12);
  // Two 2x2 wafers side by side with a slow border: the inter-wafer all-to-all pays more per byte.
  mapping::AnalyticalHardware hw = mapping::testing::nmp_hardware(4, 2, 10, 100);
  hw.topology = wafers(4, 2, 2, 2);
  hw.topology.links[0].gbytes_per_s = hw.topology.links[1].gbytes_per_s = 100;
  hw.topology.links[2].gbytes_per_s = 10;
  for (auto& l2 : hw.topology.links) l2.latency_ns = 1;
  const LevelFit f = fit_levels(hw, methods::common::make_hierarchy(hw.topology, 0));
  ASSERT_EQ(f.kinds.size(), 3u);  // flat, inter-wafer, intra-wafer
  for (const KindFit& k : f.kinds) EXPECT_GT(k.r2, 0.99) << k.kind;
  EXPECT_EQ(f.kinds[1].kind, "inter-wafer");
  EXPECT_EQ(f.kinds[1].participants, 2);
  EXPECT_EQ(f.kinds[2].participants, 4);
  EXPECT_GT(f.costs.inter[0].beta_s_per_byte, f.costs.intra[0].beta_s_per_byte);
}

}  // namespace
}  // namespace nmpsim::methods::hiermoe

namespace nmpsim::methods::hiermoe {
namespace {

using namespace nmpsim::methods::common;  // the hierarchy and its fitted costs

TEST(HierAlltoall, StagesOfOneTokenByHand) {
  // Two 2x2 wafers side by side (ranks 0-3 on wafer 0, 4-7 on wafer 1). A token at rank 0 whose
  // experts sit on ranks 5 and 6 (one each): with dedup, one copy crosses to rank 4 (rank 0's position
  // in wafer 1), which forwards to 5 and 6 and sums their two partials before sending one back.
  const methods::common::Hierarchy h = methods::common::make_hierarchy(wafers(4, 2, 2, 2), 0);
  const int r0 = h.node_at[0], r4 = h.node_at[4], r5 = h.node_at[5], r6 = h.node_at[6];
  const double M = 10, hidden = 5;
  const auto at = [&](const std::vector<double>& m, int a, int b) { return m[static_cast<size_t>(a) * 8 + b]; };
  const auto dedup = hierarchical_stages(h, 2, true, {r0}, {{{r5, 1}, {r6, 1}}}, M, hidden);
  ASSERT_EQ(dedup.size(), 2u);
  EXPECT_EQ(dedup[0].name, "inter_wafer");
  EXPECT_EQ(dedup[1].name, "intra");
  EXPECT_EQ(at(dedup[0].dispatch, r0, r4), M);
  EXPECT_EQ(at(dedup[0].combine, r4, r0), M);
  EXPECT_EQ(at(dedup[1].dispatch, r4, r5), M);
  EXPECT_EQ(at(dedup[1].dispatch, r4, r6), M);
  EXPECT_EQ(dedup[1].reduce_flops[static_cast<size_t>(r4)], 2 * hidden);  // sums the two partials
  EXPECT_EQ(dedup[0].reduce_flops[static_cast<size_t>(r0)], hidden);
  double total = 0;
  for (const auto& s : dedup)
    for (double b : s.dispatch) total += b;
  EXPECT_EQ(total, 3 * M);
  // Without dedup (2DH) both expert copies cross the border.
  const auto plain = hierarchical_stages(h, 2, false, {r0}, {{{r5, 1}, {r6, 1}}}, M, hidden);
  EXPECT_EQ(at(plain[0].dispatch, r0, r4), 2 * M);
  EXPECT_THROW(hierarchical_stages(h, 3, true, {r0}, {{{r5, 1}}}, M, hidden), mapping::InputError);
}

}  // namespace
}  // namespace nmpsim::methods::hiermoe

namespace nmpsim::methods::hiermoe {
namespace {

using namespace nmpsim::methods::common;  // the hierarchy and its fitted costs

/// DeepSeek-V2-Lite (64 experts, top-6) cut to 2 MoE layers, without dense layers or shared experts.
mapping::ModelSpec lite_two_layers() {
  mapping::ModelSpec m = mapping::model_preset("deepseek-v2-lite");
  m.moe_layers = 2;
  m.dense_layers = 0;
  m.shared_experts = 0;
  return m;
}

/// EP on 8 nodes by hierarchical rank: experts [8 r, 8 r + 8) on the node of rank r.
mapping::Placement ep_by_rank_blocks(const mapping::ModelSpec& m, const methods::common::Hierarchy& h) {
  mapping::Placement p("hier", m.experts, 8, m.moe_layers);
  for (int l = 0; l < m.moe_layers; ++l)
    for (int e = 0; e < m.experts; ++e) p.at(l, e, e / 8) = 1.0;
  for (int r = 0; r < 8; ++r)
    p.node_map[static_cast<size_t>(r)] = mapping::PhysicalNode(h.node_at[static_cast<size_t>(r)]);
  return p;
}

/// One decode step of 256 tokens (trace_for(m, 0.5, 1024)) under the policy "hiermoe" at dimension d
/// (0: d* per layer), on the flow executor.
mapping::StrategyResult run_hier(const mapping::AnalyticalHardware& hw, const mapping::ModelSpec& m,
                                 const mapping::Placement& p, int attn_tp, int d, bool dedup, bool by_flow = false) {
  const mapping::RoutingTrace tr = mapping::testing::trace_for(m, 0.5, 1024);
  mapping::RunConfig cfg;
  cfg.shape = {256, 256};
  cfg.steps = 1;
  cfg.attn_tp = attn_tp;
  mapping::PolicyList pl;
  pl.emplace_back("hiermoe", std::make_unique<AlltoallPolicy>(AlltoallOptions{0, d, dedup, by_flow, {}}));
  flow::FlowExecutor ex(hw);
  return mapping::run_placement(ex, mapping::RunInputs{m, tr, hw, cfg}, p, pl);
}

TEST(HierAlltoall, DedupCutsTheBorderTrafficAndLosesNoToken) {
  // DeepSeek-V2-Lite (64 experts, top-6) on two 2x2 wafers with a slow border, EP by rank.
  const mapping::ModelSpec m = lite_two_layers();
  mapping::AnalyticalHardware hw = mapping::testing::nmp_hardware(4, 2, 10, 100);
  hw.topology = wafers(4, 2, 2, 2);
  for (auto& l : hw.topology.links) {
    l.gbytes_per_s = 100;
    l.latency_ns = 1;
  }
  hw.topology.links[2].gbytes_per_s = 10;
  const methods::common::Hierarchy h = methods::common::make_hierarchy(hw.topology, 0);
  const mapping::Placement p = ep_by_rank_blocks(m, h);
  auto run = [&](int d, bool dedup, bool by_flow = false) { return run_hier(hw, m, p, 4, d, dedup, by_flow); };
  const mapping::StrategyResult flat = run(1, true), hd2 = run(2, true), dh2 = run(2, false), best = run(0, true);
  auto border = [&](const mapping::StrategyResult& r) {
    double b = 0;
    const auto& comm = r.family_link_bytes[static_cast<size_t>(mapping::PhaseFamily::kMoeComm)];
    for (int v = 0; v < 8; ++v)
      for (int dir : {mapping::kEast, mapping::kWest}) {
        const int x = hw.topology.x(v) + (dir == mapping::kEast ? 1 : -1);
        if (x >= 0 && x < 4 && hw.topology.wafer_of(v) != hw.topology.wafer_of(hw.topology.id(x, hw.topology.y(v))))
          b += comm[static_cast<size_t>(v) * 4 + dir];
      }
    return b;
  };
  EXPECT_LT(border(hd2), border(flat));
  EXPECT_LT(border(hd2), border(dh2));
  for (const auto* r : {&flat, &hd2, &dh2, &best}) {
    double work = 0;
    for (double w : r->node_token_work) work += w;
    EXPECT_NEAR(work, 256.0 * m.top_k * m.moe_layers, 1e-6);  // every token met its experts
  }
  EXPECT_GE(hd2.find_phase("dispatch_inter_wafer"), 0);
  EXPECT_GE(hd2.find_phase("combine_inter_wafer"), 0);
  EXPECT_LT(flat.find_phase("dispatch_inter_wafer"), 0);
  const auto d_star = best.policies["hiermoe"]["d_star_per_layer"].get<std::vector<int>>();
  ASSERT_EQ(d_star.size(), 2u);
  // d* picks the faster of the two on the fitted model; the border is 10x slower, so the hierarchy.
  EXPECT_EQ(d_star[0], 2);
  EXPECT_LE(best.mean_family_s(mapping::PhaseFamily::kMoeComm), flat.mean_family_s(mapping::PhaseFamily::kMoeComm));
  // Chosen on the flow model, every layer is as fast as the faster of d = 1 and d = 2 (same executor).
  const mapping::StrategyResult by_flow = run(0, true, true);
  EXPECT_LE(by_flow.mean_tbt_s(), std::min(flat.mean_tbt_s(), hd2.mean_tbt_s()) * (1 + 1e-9));
}

TEST(HierAlltoall, MegatronSendsATokenOncePerExpertTheFlatOneOncePerNode) {
  // DeepSeek-V2-Lite (64 experts, top-6) on 8 nodes, 8 experts per node by rank, attention TP 1: token
  // i's home is node i mod 8. Expected payloads counted from the trace by hand.
  const mapping::ModelSpec m = lite_two_layers();
  mapping::AnalyticalHardware hw = mapping::testing::nmp_hardware(4, 2, 10, 100);
  const methods::common::Hierarchy h = methods::common::make_hierarchy(hw.topology, 0);
  const mapping::Placement p = ep_by_rank_blocks(m, h);
  const mapping::RoutingTrace tr = mapping::testing::trace_for(m, 0.5, 1024);  // run_hier's trace
  double copies = 0, nodes = 0;
  for (int l = 0; l < m.moe_layers; ++l)
    for (int i = 0; i < 256; ++i) {
      const uint16_t* ex = tr.experts_of(l, static_cast<size_t>(i));
      std::set<int> away;
      for (int k = 0; k < m.top_k; ++k) {
        const int v = h.node_at[static_cast<size_t>(ex[k] / 8)];
        if (v == i % 8) continue;
        copies += 1;
        away.insert(v);
      }
      nodes += static_cast<double>(away.size());
    }
  ASSERT_GT(copies, nodes);  // the trace has tokens with two experts on one node
  const mapping::StrategyResult flat = run_hier(hw, m, p, 1, 1, true), megatron = run_hier(hw, m, p, 1, 1, false);
  EXPECT_DOUBLE_EQ(flat.bytes_of("dispatch"), nodes * m.token_bytes());
  EXPECT_DOUBLE_EQ(megatron.bytes_of("dispatch"), copies * m.token_bytes());
  EXPECT_DOUBLE_EQ(megatron.bytes_of("combine"), copies * m.token_bytes());
}

}  // namespace
}  // namespace nmpsim::methods::hiermoe

namespace nmpsim::methods::hiermoe {
namespace {

using namespace nmpsim::methods::common;  // the hierarchy and its fitted costs

/// A random routing of `tokens` tokens, top-k distinct experts out of E (a fixed LCG).
Routing random_routing(int E, int K, int tokens, uint32_t seed) {
  Routing r{E, K, {}};
  for (int t = 0; t < tokens; ++t) {
    std::vector<int> pick;
    while (static_cast<int>(pick.size()) < K) {
      seed = seed * 1664525u + 1013904223u;
      const int e = static_cast<int>((seed >> 8) % static_cast<uint32_t>(E));
      if (std::find(pick.begin(), pick.end(), e) == pick.end()) pick.push_back(e);
    }
    for (int e : pick) r.ids.push_back(static_cast<uint16_t>(e));
  }
  return r;
}

/// The routing with slots a and b exchanged.
Routing swapped(Routing r, int a, int b) {
  for (uint16_t& id : r.ids) id = static_cast<uint16_t>(id == a ? b : id == b ? a : id);
  return r;
}

TEST(HierSwap, IncrementalCountsEqualRecountingEverySwap) {
  const Routing r = random_routing(12, 3, 60, 7);
  for (int groups : {2, 3, 6}) {
    const std::vector<float> own = swap_counts(r, groups);
    const std::vector<double> now = group_counts(r, groups);
    const int per = 12 / groups;
    for (int a = 0; a < 12; ++a)
      for (int b = 0; b < 12; ++b) {
        const std::vector<double> p = group_counts(swapped(r, a, b), groups);
        const int ga = a / per, gb = b / per;
        ASSERT_EQ(own[static_cast<size_t>(a) * 12 + b], p[static_cast<size_t>(ga)])
            << "groups " << groups << " swap " << a << "," << b;
        ASSERT_EQ(own[static_cast<size_t>(b) * 12 + a], p[static_cast<size_t>(gb)])
            << "groups " << groups << " swap " << a << "," << b;
        for (int g = 0; g < groups; ++g) {  // a swap changes its two groups only
          if (g == ga || g == gb) continue;
          ASSERT_EQ(p[static_cast<size_t>(g)], now[static_cast<size_t>(g)]);
        }
      }
  }
}

TEST(HierSwap, SmoothMaxAndTheBestSwapByExhaustiveSearch) {
  const float two[2] = {1, 1}, one[3] = {0, 4, 0};
  EXPECT_NEAR(smooth_max(two, 2, 10), std::pow(2.0, 0.1), 1e-12);
  EXPECT_NEAR(smooth_max(one, 3, 10), 4.0, 1e-12);
  // 16 experts on two 2x2 wafers (8 nodes, 2 experts each), top-2, a skewed routing: experts 0 and 1
  // (both on rank 0) are hot. The best swap's predicted time is the least over all pairs recounted.
  const methods::common::Hierarchy h = methods::common::make_hierarchy(wafers(4, 2, 2, 2), 0);
  Routing r = random_routing(16, 2, 200, 3);
  for (size_t i = 0; i < r.ids.size(); i += 4) r.ids[i] = static_cast<uint16_t>(i % 8 == 0 ? 0 : 1);
  for (size_t t = 0; t < r.tokens(); ++t)
    if (r.ids[2 * t] == r.ids[2 * t + 1]) r.ids[2 * t + 1] = static_cast<uint16_t>(2 + t % 14);
  HierarchyCosts c;
  c.flat = {1e-6, 1e-9};
  c.inter = {{1e-6, 4e-9}};
  c.intra = {{1e-6, 1e-9}};
  const double M = 1000;
  // Every gamma: low, the paper's 10, and 1000 (nearly the plain max, where the largest group
  // dominates every sum and the O(1) update must not lose the others).
  for (double g : {2.0, 1000.0}) {
    auto recount = [&](const Routing& x) {
      const auto wafer = group_counts(x, 2), node = group_counts(x, 8);
      const std::vector<float> w(wafer.begin(), wafer.end()), n(node.begin(), node.end());
      return c.inter[0].seconds(2 * smooth_max(w.data(), 2, g) * M) +
             c.intra[0].seconds(4 * smooth_max(n.data(), 8, g) * M);
    };
    const SwapChoice sg = best_swap(h, c, r, 2, M, g);
    double least_g = 1e9;
    for (int a = 0; a < 16; ++a)
      for (int b = a + 1; b < 16; ++b)
        if (a / 2 != b / 2) least_g = std::min(least_g, recount(swapped(r, a, b)));
    EXPECT_NEAR(sg.current_s, recount(r), 1e-9 * recount(r)) << "gamma " << g;
    EXPECT_NEAR(sg.seconds, least_g, 1e-9 * least_g) << "gamma " << g;
  }
  const double gamma = 10;
  auto predicted = [&](const Routing& x) {  // Eq. 8-9 with smooth-max, recounted
    const auto wafer = group_counts(x, 2), node = group_counts(x, 8);
    const std::vector<float> w(wafer.begin(), wafer.end()), n(node.begin(), node.end());
    return c.inter[0].seconds(2 * smooth_max(w.data(), 2, gamma) * M) +
           c.intra[0].seconds(4 * smooth_max(n.data(), 8, gamma) * M);
  };
  const SwapChoice s = best_swap(h, c, r, 2, M, gamma);
  EXPECT_NEAR(s.current_s, predicted(r), 1e-12);
  double least = 1e9;
  for (int a = 0; a < 16; ++a)
    for (int b = a + 1; b < 16; ++b)
      if (a / 2 != b / 2) least = std::min(least, predicted(swapped(r, a, b)));
  EXPECT_NEAR(s.seconds, least, 1e-12);
  EXPECT_LT(s.seconds, s.current_s);  // moving a hot expert off rank 0 helps
  std::vector<int> slot_of(16);
  for (int e = 0; e < 16; ++e) slot_of[static_cast<size_t>(e)] = e;
  const int swaps = expert_swap(h, c, r, M, gamma, 4, slot_of);
  EXPECT_GE(swaps, 1);
  std::vector<int> sorted = slot_of;
  std::sort(sorted.begin(), sorted.end());
  for (int e = 0; e < 16; ++e) EXPECT_EQ(sorted[static_cast<size_t>(e)], e);  // still a permutation
  Routing after = r;
  for (uint16_t& id : after.ids) id = static_cast<uint16_t>(slot_of[id]);
  EXPECT_LT(predicted(after), predicted(r));
}

}  // namespace
}  // namespace nmpsim::methods::hiermoe
