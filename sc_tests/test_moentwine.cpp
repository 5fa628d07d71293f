// MoEntwine's token domains (plain C++): block shapes, the baseline and entwined-ring mappings, and
// their figures against hand computation (issue 14).
#include <gtest/gtest.h>

#include <set>

#include "mapping_test_util.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/layer_runner.h"
#include "nmpsim/mapping/moe_layer.h"
#include "nmpsim/methods/moentwine/balancer.h"
#include "nmpsim/methods/moentwine/ftd_layout.h"
#include "nmpsim/methods/moentwine/token_domain_dispatch.h"

namespace nmpsim::methods::moentwine {
namespace {

using mapping::testing::mesh;

TEST(MoentwineBlocks, AsSquareAsPossibleThenAnEvenBlockGridThenWider) {
  EXPECT_EQ(block_shape(4, 4, 4).w, 2);
  EXPECT_EQ(block_shape(4, 4, 4).h, 2);
  EXPECT_EQ(block_shape(8, 8, 16).w, 4);
  EXPECT_EQ(block_shape(6, 6, 9).w, 3);  // 3x3 blocks, a 2x2 grid
  // 6 nodes on 6x6: 2x3 and 3x2 are equally square and both grids have an even side: the wider one.
  EXPECT_EQ(block_shape(6, 6, 6).w, 3);
  EXPECT_EQ(block_shape(6, 6, 6).h, 2);
  // 4 nodes on 12x2: 2x2 (grid 6x1) is squarer than 4x1; on 6x2 2x2 gives a 3x1 grid, still squarest.
  EXPECT_EQ(block_shape(12, 2, 4).w, 2);
  EXPECT_EQ(block_shape(6, 2, 4).w, 2);
  EXPECT_THROW(block_shape(4, 4, 3), mapping::InputError);
  EXPECT_THROW(token_domains(mesh(4, 4), 5, Mapping::kEntwined), mapping::InputError);
}

void expect_partition(const mapping::Topology& t, const TokenDomains& d, int tp) {
  const int n = t.nodes();
  ASSERT_EQ(static_cast<int>(d.tp.ring.size()), n / tp);
  ASSERT_EQ(static_cast<int>(d.ftd.size()), tp);
  std::set<int> seen;
  for (const auto& g : d.tp.ring) {
    EXPECT_EQ(static_cast<int>(g.size()), tp);
    seen.insert(g.begin(), g.end());
  }
  EXPECT_EQ(static_cast<int>(seen.size()), n);
  // An FTD holds exactly one member of every TP group (so together they hold every group's tokens).
  for (const auto& f : d.ftd) {
    std::set<int> groups;
    for (int v : f) groups.insert(d.tp.group_of[static_cast<size_t>(v)]);
    EXPECT_EQ(static_cast<int>(groups.size()), n / tp);
    EXPECT_EQ(static_cast<int>(f.size()), n / tp);
  }
}

/// The hand-computed figures of one mapping (max_link_pair_loads < 0: not checked).
void expect_stats(const FtdStats& s, int area, double avg_hops, bool overlap, int max_link, int ring_step) {
  EXPECT_EQ(s.area, area);
  EXPECT_DOUBLE_EQ(s.avg_hops, avg_hops);
  EXPECT_EQ(s.overlap, overlap);
  if (max_link >= 0) {
    EXPECT_EQ(s.max_link_pair_loads, max_link);
  }
  EXPECT_EQ(s.ring_step_hops, ring_step);
  // Entwined FTDs are disjoint blocks: no all-to-all hop leaves an FTD's members.
  if (overlap) {
    EXPECT_GT(s.pair_hops_through_other_ftds, 0);
  } else {
    EXPECT_EQ(s.pair_hops_through_other_ftds, 0);
  }
}

TEST(MoentwineDomains, FourByFourWithTpFourAsComputedByHand) {
  const mapping::Topology t = mesh(4, 4);
  // Baseline: TP groups are the 2x2 quadrants; FTD j = offset j of every quadrant, e.g. nodes (0,0),
  // (2,0), (0,2), (2,2): a 3x3 box, every member 2, 2 and 4 hops from the others (8/3), boxes overlap.
  // Busiest link: (1,0) -> (2,0) east carries (0,0)->(2,0), (0,0)->(2,2) of one FTD and (1,0)->(3,0),
  // (1,0)->(3,2) of the next: 4 messages. Rings are 1-hop.
  const TokenDomains base = token_domains(t, 4, Mapping::kBaseline);
  expect_partition(t, base, 4);
  expect_stats(ftd_stats(t, base), 9, 8.0 / 3, true, 4, 1);
  // ER: FTDs are the 2x2 quadrants (each member 1, 1 and 2 hops from the others: 4/3), disjoint; a
  // link inside a quadrant carries 2 messages ((0,0)->(1,0) and (0,0)->(1,1) on (0,0) -> (1,0));
  // TP group j = offset j of every quadrant, a ring through the 2x2 grid of quadrants: 2-hop steps.
  const TokenDomains er = token_domains(t, 4, Mapping::kEntwined);
  expect_partition(t, er, 4);
  expect_stats(ftd_stats(t, er), 4, 4.0 / 3, false, 2, 2);
}

TEST(MoentwineDomains, SixBySixWithTpFourAsComputedByHand) {
  const mapping::Topology t = mesh(6, 6);
  // Baseline: 9 TP groups, each a 2x2 block, the blocks in a 3x3 grid; FTD j = offset j of every block:
  // a 3x3 lattice of stride 2, a 5x5 box. On a 3x3 lattice the ordered pairs of distinct points (72) sum
  // to 144 lattice steps (per axis: 8 over the 9 ordered pairs of {0,1,2}, times 9 for the other axis),
  // 2 steps on average: 4 hops at stride 2. Rings are 1-hop.
  const TokenDomains base = token_domains(t, 4, Mapping::kBaseline);
  expect_partition(t, base, 4);
  expect_stats(ftd_stats(t, base), 25, 4.0, true, -1, 1);
  // ER: FTDs are 3x3 blocks of 9 (one member of each group), 2 hops on average by the same count at
  // stride 1, disjoint; TP group j = offset j of each of the 4 blocks, a ring through the 2x2 block grid:
  // 3-hop steps.
  const TokenDomains er = token_domains(t, 4, Mapping::kEntwined);
  expect_partition(t, er, 4);
  expect_stats(ftd_stats(t, er), 9, 2.0, false, -1, 3);
}

TEST(MoentwineDomains, EightByEightWithTpSixteen) {
  const mapping::Topology t = mesh(8, 8);
  // Baseline: TP blocks 4x4 in a 2x2 grid; an FTD's members are 4 apart: a 5x5 box, 4, 4, 8 hops.
  expect_stats(ftd_stats(t, token_domains(t, 16, Mapping::kBaseline)), 25, 16.0 / 3, true, -1, 1);
  // ER: DP = 4, FTDs 2x2 in a 4x4 grid (even: a Hamiltonian ring of 2-hop steps).
  const TokenDomains er = token_domains(t, 16, Mapping::kEntwined);
  expect_partition(t, er, 16);
  expect_stats(ftd_stats(t, er), 4, 4.0 / 3, false, 2, 2);
}

TEST(MoentwineBalancer, Algorithm1OnALineOfFourAsComputedByHand) {
  // A 1x4 line, expert d native on device d, one shadow slot each, predicted loads [10, 4, 3, 1].
  // 1. Peak 10 on d0: e0 to the nearest qualifying device d1 (4 + 10/2 = 9 < 10): heats 5 9 3 1.
  // 2. Peak 9 on d1: its most popular expert is e0; d0 holds it, d2 is nearest (3 + 10/3 < 9), copied
  //    from d1, the holder nearest d2: heats 10/3, 4 + 10/3, 3 + 10/3, 1.
  // 3. Peak 22/3 on d1: e0 again; d3 (1 + 10/4 = 3.5 < 22/3), copied from d2: heats 2.5 6.5 5.5 3.5.
  // 4. Peak 6.5 on d1: no free slot for e0 (only d0's, and d0 holds it); e1 to d0 (2.5 + 4/2 = 4.5 <
  //    6.5): heats 4.5 4.5 5.5 3.5.
  // 5. Peak 5.5 on d2: no shadow slot is free: stop.
  mapping::Topology t = mesh(4, 1);
  ExpertCopies c = native_copies(4, 4, 1);
  const std::vector<double> load{10, 4, 3, 1};
  EXPECT_NEAR(imbalance(heats(c, load, 4)), (10 - 4.5) / 4.5, 1e-12);
  const std::vector<Move> moves = topology_aware_balance(t, c, load);
  ASSERT_EQ(moves.size(), 4u);
  const int expected[4][3] = {{0, 0, 1}, {0, 1, 2}, {0, 2, 3}, {1, 1, 0}};
  for (size_t i = 0; i < moves.size(); ++i) {
    EXPECT_EQ(moves[i].expert, expected[i][0]) << i;
    EXPECT_EQ(moves[i].from, expected[i][1]) << i;
    EXPECT_EQ(moves[i].to, expected[i][2]) << i;
  }
  const std::vector<double> h = heats(c, load, 4);
  const double want[4] = {4.5, 4.5, 5.5, 3.5};
  for (int d = 0; d < 4; ++d) EXPECT_NEAR(h[static_cast<size_t>(d)], want[d], 1e-12) << d;
  EXPECT_NEAR(imbalance(h), 1.0 / 4.5, 1e-12);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(c.free_shadow[static_cast<size_t>(d)], 0);
}

TEST(MoentwineBalancer, PredictorAndTrigger) {
  LoadPredictor window(1, 2);
  EXPECT_TRUE(window.predict(0).empty());
  for (double v : {1.0, 3.0, 5.0}) window.observe(0, {v});
  EXPECT_DOUBLE_EQ(window.predict(0)[0], 4.0);  // mean of the last 2 steps
  LoadPredictor ema(1, 8, 0.5);
  for (double v : {1.0, 3.0, 5.0}) ema.observe(0, {v});
  EXPECT_DOUBLE_EQ(ema.predict(0)[0], 3.5);  // 1, then 0.5 x 3 + 0.5 x 1 = 2, then 0.5 x 5 + 0.5 x 2
  EXPECT_TRUE(should_migrate({0.2, 0.3}, 0.4, 0, 0));
  EXPECT_FALSE(should_migrate({0.2, 0.3}, 0.6, 0, 0));
  EXPECT_FALSE(should_migrate({0.2, 0.3}, 0.4, 2, 3));  // invasive: beta steps must pass
  EXPECT_TRUE(should_migrate({0.2, 0.3}, 0.4, 3, 3));
}

/// A placement with MoEntwine's layout: EP experts, the mapping's TP rings and token domains.
mapping::Placement laid_out(const mapping::ModelSpec& m, const mapping::Topology& t, int tp, Mapping mp) {
  const TokenDomains d = token_domains(t, tp, mp);
  mapping::Placement p = mapping::make_ep(m, t.nodes());
  p.tp_rings = d.tp.ring;
  p.dispatch = token_domain_dispatch_json(d.ftd_of, d.token_rings);
  return p;
}

/// The placement's token-domain planner for the groups of a run.
TokenDomainDispatch planner_of(const mapping::Placement& p, const mapping::Groups& g) {
  const auto made = token_domain_planner().create(p.dispatch.at("options"), mesh(4, 4), g, "test");
  return *dynamic_cast<const TokenDomainDispatch*>(made.get());
}

TEST(MoentwineDomains, HerKeepsTpInsideAWaferAndGathersTokensAcrossWafers) {
  // Two 2x2 wafers side by side (a 4x2 mesh), TP 2. Inside a wafer ER cuts 2x1 rows as domains, so
  // the TP groups are its columns: {0, 4}, {1, 5} on wafer 0 and {2, 6}, {3, 7} on wafer 1. Every
  // wafer is one domain; the token all-gather pairs each die with the same position on the other
  // wafer: {0, 2}, {1, 3}, {4, 6}, {5, 7}.
  mapping::Topology t = mesh(4, 2);
  t.wafer().width = 2;
  t.wafer().height = 2;
  const TokenDomains d = token_domains(t, 2, Mapping::kHierarchical);
  const std::vector<std::vector<int>> tp{{0, 4}, {1, 5}, {2, 6}, {3, 7}}, token{{0, 2}, {1, 3}, {4, 6}, {5, 7}};
  EXPECT_EQ(d.tp.ring, tp);
  EXPECT_EQ(d.token_rings, token);
  EXPECT_EQ(d.ftd_of, (std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1}));
  EXPECT_THROW(token_domains(t, 8, Mapping::kHierarchical), mapping::InputError);  // TP larger than a wafer
}

TEST(MoentwineLayer, TokensReachExpertsFromTheirGroupsMemberInTheExpertsDomain) {
  mapping::ModelSpec m = mapping::model_preset("qwen3-235b-a22b");
  m.moe_layers = 2;
  m.dense_layers = 0;
  const mapping::RoutingTrace tr = mapping::testing::trace_for(m, 0.0, 256);
  mapping::Topology t = mesh(4, 4);
  t.wafer().width = 2;  // four 2x2 wafers, for HER
  t.wafer().height = 2;
  for (Mapping mp : {Mapping::kBaseline, Mapping::kEntwined, Mapping::kHierarchical}) {
    const mapping::Placement p = laid_out(m, t, 4, mp);
    const mapping::Groups g = mapping::groups_for(p, t, 4);
    const TokenDomainDispatch domains = planner_of(p, g);
    const std::vector<int>& domain_of = domains.domain_of();
    const mapping::LayerPlan plan =
        mapping::plan_layer(m, mapping::physical_shares(p), 0, tr, 0, g, mapping::RunShape{256, 1024}, &domains);
    // Every dispatch message stays inside one domain (for HER: one wafer).
    double partials = 0;
    for (int h = 0; h < 16; ++h)
      for (int v = 0; v < 16; ++v)
        if (plan.dispatch[static_cast<size_t>(h) * 16 + v] > 0) {
          EXPECT_EQ(domain_of[h], domain_of[v]) << h << v;
        }
    for (double x : plan.partials) partials += x;
    // Each token meets each distinct node of its experts once (EP: expert e on node e mod 16).
    double pairs = 0;
    for (int i = 0; i < 256; ++i) {
      std::set<int> nodes;
      for (int k = 0; k < m.top_k; ++k) nodes.insert(tr.experts_of(0, static_cast<size_t>(i))[k] % 16);
      pairs += static_cast<double>(nodes.size());
    }
    EXPECT_DOUBLE_EQ(partials, pairs);
    EXPECT_DOUBLE_EQ(plan.dispatch_total(), plan.combine_total());
    // The layer gathers the group's tokens before dispatch and reduces the partials after combine.
    const mapping::LayerSchedule s = mapping::build_moe_layer(m, plan, g, 2);
    EXPECT_GE(s.find_phase(mapping::phase_names::kTokenAllGather), 0);
    EXPECT_GT(s.find_phase(mapping::phase_names::kPartialReduceScatter), s.find_phase(mapping::phase_names::kCombine));
  }
  // Without a layout, neither phase.
  const mapping::Groups plain = mapping::make_groups(t, 4);
  const mapping::Placement ep = mapping::make_ep(m, 16);
  const mapping::LayerSchedule s = mapping::build_moe_layer(
      m, mapping::plan_layer(m, mapping::physical_shares(ep), 0, tr, 0, plain, mapping::RunShape{256, 1024}), plain, 2);
  EXPECT_LT(s.find_phase(mapping::phase_names::kTokenAllGather), 0);
}

TEST(MoentwineLayer, LayoutsAreCheckedAndSurviveTheFile) {
  mapping::ModelSpec m = mapping::model_preset("qwen3-235b-a22b");
  m.moe_layers = 1;
  const mapping::Topology t = mesh(4, 4);
  mapping::Placement p = laid_out(m, t, 4, Mapping::kEntwined);
  const mapping::Placement back = mapping::placement_from_json(mapping::placement_to_json(p), "p.json");
  EXPECT_EQ(back.tp_rings, p.tp_rings);
  EXPECT_EQ(back.dispatch, p.dispatch);
  EXPECT_THROW(mapping::groups_for(p, t, 8), mapping::InputError);  // the run's --attn-tp differs
  mapping::Topology wafers = t;                                     // HER's token rings survive too
  wafers.wafer().width = wafers.wafer().height = 2;
  const mapping::Placement her = laid_out(m, wafers, 4, Mapping::kHierarchical);
  ASSERT_TRUE(her.dispatch.at("options").contains("token_rings"));
  EXPECT_EQ(mapping::placement_from_json(mapping::placement_to_json(her), "h.json").dispatch, her.dispatch);
  ASSERT_EQ(p.tp_rings[0][1], 2);  // nodes 0 and 2: one TP group, two domains
  nlohmann::json& domain = p.dispatch["options"]["token_domain"];
  domain[2] = domain[0];
  const mapping::Groups g = mapping::groups_for(p, t, 4);
  EXPECT_THROW(planner_of(p, g), mapping::InputError);
  // The registry makes the planner a placement names, and refuses a name it does not know.
  mapping::Registry r;
  r.add(token_domain_planner());
  EXPECT_EQ(r.make_planner(laid_out(m, t, 4, Mapping::kEntwined), t, g)->token_rings()->size(), 4u);
  EXPECT_EQ(r.make_planner(mapping::make_ep(m, 16), t, g), nullptr);
  p.dispatch["name"] = "no-such-planner";
  EXPECT_THROW(r.make_planner(p, t, g), mapping::InputError);
}

}  // namespace
}  // namespace nmpsim::methods::moentwine
