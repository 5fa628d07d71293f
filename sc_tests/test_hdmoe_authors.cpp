// The HD-MoE authors' accounting against the hand-checked rows of data/reference/hdmoe/ACCOUNTING.md
// and hand-computed store-and-forward schedules.
#include <gtest/gtest.h>

#include "mapping_test_util.h"
#include "nmpsim/mapping/trace.h"
#include "nmpsim/methods/hdmoe/authors_accounting.h"
#include "nmpsim/methods/hdmoe/authors_link_balance.h"

namespace nmpsim::methods::hdmoe {
namespace {

using namespace nmpsim::mapping;

TEST(HdmoeAuthors, DeepSeekTpRowOfTheTable) {
  // ds, 4x8, 10 TFLOP/s, 25 GB/s, B = 16: 272.63 + 44.98 + 616.39 = 934.00 us (ACCOUNTING.md).
  const ModelSpec m = model_preset("deepseek-v2-lite");
  const RoutingTrace tr = testing::trace_for(m, 0.3, 512);
  AuthorsConfig cfg;
  cfg.batch = 16;
  const AuthorsResult r = authors_account(make_tp(m, 32), m, testing::nmp_hardware(4, 8, 10, 25), tr, cfg);
  EXPECT_NEAR(r.comm_s() * 1e6, 272.63, 0.005);
  EXPECT_NEAR(r.compute_s() * 1e6, 44.98, 0.005);
  EXPECT_NEAR(r.constant_s * 26 * 1e6, 616.39, 0.005);
  EXPECT_NEAR(r.latency_s() * 1e6, 934.00, 0.01);
  for (const AuthorsLayer& l : r.layers) EXPECT_TRUE(l.analytic_tp);
}

TEST(HdmoeAuthors, MixtralRowOnTheRealReasoningTrace) {
  // Mixtral, 4x8, 10 / 25, B = 16: TP 671.09 + 375.94 + 1947.05 = 2994.08 us; EP computation 523.12 us.
  const ModelSpec m = model_preset("mixtral-8x7b");
  const RoutingTrace tr = load_trace("mtbench-reasoning", m.experts, m.top_k);
  AuthorsConfig cfg;
  cfg.batch = 16;
  const AnalyticalHardware hw = testing::nmp_hardware(4, 8, 10, 25);
  const AuthorsResult tp = authors_account(make_tp(m, 32), m, hw, tr, cfg);
  EXPECT_NEAR(tp.comm_s() * 1e6, 671.09, 0.005);
  EXPECT_NEAR(tp.compute_s() * 1e6, 375.94, 0.005);
  EXPECT_NEAR(tp.constant_s * 32 * 1e6, 1947.05, 0.005);
  EXPECT_NEAR(tp.latency_s() * 1e6, 2994.08, 0.01);
  cfg.random_mesh = true;
  const AuthorsResult ep = authors_account(make_ep(m, 32), m, hw, tr, cfg);
  EXPECT_NEAR(ep.compute_s() * 1e6, 523.12, 0.005);
}

TEST(HdmoeAuthors, QwenEvaluatesWithTheDenseIntermediate) {
  // qwen, 4x8, 10 / 25, B = 128, IS = 18944 when evaluating: latency 30495.63 us.
  const ModelSpec m = model_preset("qwen2-57b-a14b");
  AuthorsConfig cfg;
  cfg.batch = 128;
  cfg.eval_intermediate = 18944;
  const AuthorsResult r =
      authors_account(make_tp(m, 32), m, testing::nmp_hardware(4, 8, 10, 25), testing::trace_for(m, 0.6, 512), cfg);
  EXPECT_NEAR(r.latency_s() * 1e6, 30495.63, 0.01);
}

TEST(HdmoeAuthors, StoreAndForwardFillsIdleGapsFirstFitAndSplits) {
  // A line of 4 cells, 1 byte/s. A: 0 -> 2, 2 B: link 0->1 [0, 2), link 1->2 [2, 4). B: 1 -> 2, 1 B:
  // fits before A on 1->2, [0, 1). C: 0 -> 1, 3 B: after A on 0->1, [2, 5). D: 1 -> 3, 2 B: 1->2 has
  // the gap [1, 2) then is busy to 4, so [1, 2) + [4, 5); then 2->3 [5, 7). Makespan 7.
  const AnalyticalHardware hw = testing::nmp_hardware(4, 1, 1, 1e-9);
  EXPECT_DOUBLE_EQ(store_and_forward_makespan(hw.topology, {{0, 2, 2}}, 1), 4);
  EXPECT_DOUBLE_EQ(store_and_forward_makespan(hw.topology, {{0, 2, 2}, {1, 2, 1}}, 1), 4);
  EXPECT_DOUBLE_EQ(store_and_forward_makespan(hw.topology, {{0, 2, 2}, {1, 2, 1}, {0, 1, 3}}, 1), 5);
  EXPECT_DOUBLE_EQ(store_and_forward_makespan(hw.topology, {{0, 2, 2}, {1, 2, 1}, {0, 1, 3}, {1, 3, 2}}, 1), 7);
  // Opposite directions do not share a link.
  EXPECT_DOUBLE_EQ(store_and_forward_makespan(hw.topology, {{0, 1, 2}, {1, 0, 2}}, 1), 2);
}

TEST(HdmoeAuthors, EveryHolderOfAGroupSendsToTheAggregator) {
  // Experts 0 (whole on device 1) and 1 (halves on 0 and 2); group {0, 1} with phi 0.5, B h = 4 * 10.
  // Aggregator: device 1 if expert 0 is drawn, device 0 if expert 1 is (its lowest holder).
  const std::vector<double> P = {0, 1, 0, 0.5, 0, 0.5};
  AuthorsGroups g;
  g.experts = {{0, 1}};
  g.phi = {0.5};
  Rng rng(7);
  for (int draw = 0; draw < 20; ++draw) {
    const auto msgs = authors_messages(P, 3, g, 4, 10, {0, 1, 2}, rng);
    ASSERT_EQ(msgs.size(), 2u);
    const int agg = msgs[0].dst;
    EXPECT_TRUE(agg == 0 || agg == 1);
    for (const auto& msg : msgs) {
      EXPECT_EQ(msg.dst, agg);
      EXPECT_NE(msg.src, agg);
      EXPECT_DOUBLE_EQ(msg.bytes, 20);
    }
  }
}

namespace {
/// Two nodes on a line; two experts, top-1; the first 4 tokens choose expert 0, the last 4 expert 1,
/// except token 7 (expert 0): whole-trace loads f = (5/8, 3/8).
struct Toy {
  ModelSpec m;
  AnalyticalHardware hw = testing::nmp_hardware(2, 1, 1e-6, 1);  // 1 MFLOP/s, 1 GB/s
  RoutingTrace tr{1, 2, 1, 8, "toy"};
  Placement ep{"ep", 2, 2, 1};
  Toy() {
    m.experts = 2;
    m.top_k = 1;
    m.moe_layers = 1;
    m.hidden = 10;
    m.intermediate = 20;
    m.shared_experts = 1;
    m.shared_intermediate = 40;
    for (size_t t = 0; t < 8; ++t) tr.mutable_experts_of(0, t)[0] = t < 4 || t == 7 ? 0 : 1;
    ep.share[0] = {1, 0, 0, 1};
  }
  AuthorsLayer layer(const Placement& p, const AuthorsToggles& tg) const {
    AuthorsConfig cfg;
    cfg.batch = 4;
    cfg.toggles = tg;
    return authors_account(p, m, hw, tr, cfg).layers.at(0);
  }
};
}  // namespace

TEST(HdmoeAuthors, ToggleMatricesSharedExpertsAndTpBytes) {
  const Toy toy;
  // One matrix: 2 h IS = 400 FLOPs per token; node 0 has 5/8 x 4 tokens = 2.5 tokens: 1000 FLOPs at 1e6.
  AuthorsToggles tg;
  EXPECT_NEAR(toy.layer(toy.ep, tg).compute_s, 1000 / 1e6, 1e-15);
  tg.matrices = 3;
  EXPECT_NEAR(toy.layer(toy.ep, tg).compute_s, 3000 / 1e6, 1e-15);
  // The shared expert: 3 matrices x 2 x 10 x 40 x 4 tokens = 9600 FLOPs, half on each node.
  tg.shared_experts = true;
  EXPECT_NEAR(toy.layer(toy.ep, tg).compute_s, (3000 + 4800) / 1e6, 1e-15);
  // TP's exchange: tp_bytes B h / W per direction.
  Placement tp("tp", 2, 2, 1);
  tp.share[0] = {0.5, 0.5, 0.5, 0.5};
  AuthorsToggles two;
  EXPECT_NEAR(toy.layer(tp, two).comm_s, 4.0 * 4 * 10 / 1e9, 1e-18);
  two.tp_bytes = 2;
  EXPECT_NEAR(toy.layer(tp, two).comm_s, 2.0 * 4 * 10 / 1e9, 1e-18);
}

TEST(HdmoeAuthors, ToggleSampledLoadsAndDramStreaming) {
  const Toy toy;
  // Sampled: batches [0, 4) (all expert 0) and [4, 8) (three expert 1, one expert 0): busiest node 4
  // tokens, then 3 tokens: mean 3.5 x 400 = 1400 FLOPs (expected loads: 2.5 tokens, 1000).
  AuthorsToggles tg;
  tg.sampled_batches = 2;
  EXPECT_NEAR(toy.layer(toy.ep, tg).compute_s, 1400 / 1e6, 1e-15);
  // DRAM: each node reads its whole expert, 3 matrices x 10 x 20 x weight bytes, at the node's DRAM
  // bandwidth; the node's time is the larger of that and its FLOPs (here at 1 PFLOP/s, so the read).
  Toy fast;
  fast.hw.peak_flops = 1e15;
  AuthorsToggles d;
  d.dram = true;
  const double bytes = 3.0 * 10 * 20 * toy.m.weight_bytes;
  ASSERT_GT(bytes / fast.hw.memory_bytes_per_s, 1000 / 1e15);
  EXPECT_NEAR(fast.layer(fast.ep, d).compute_s, bytes / fast.hw.memory_bytes_per_s, 1e-18);
  AuthorsConfig cfg;
  cfg.batch = 4;
  cfg.toggles = d;
  // C loses the read of two matrices of every expert at 625 GB/s split over the nodes: 2 E IS h / (D 625e9).
  const double c_theirs = authors_constant_s(toy.m, 20, 4, 1024, 2, 1e6);
  EXPECT_NEAR(authors_account(toy.ep, toy.m, toy.hw, toy.tr, cfg).constant_s,
              c_theirs - 2.0 * 2 * 20 * 10 / (2 * 625e9), 1e-18);
}

TEST(HdmoeAuthors, PerLayerLinkBalanceBringsTheHoldersTogetherAndLeavesTpLayers) {
  // A line of 4 cells at 1 GB/s. Layer 0: expert 0 whole on cell 0, expert 1 whole on cell 3; every
  // token chooses both (one group, phi 1), so whichever expert is drawn, one message of B h bytes
  // crosses 3 links store-and-forward: 3 B h / W. Adjacent holders make it one link: B h / W. Layer 1
  // is TP-shaped: left as it is.
  ModelSpec m;
  m.experts = 2;
  m.top_k = 2;
  m.moe_layers = 2;
  m.hidden = 1000;
  const AnalyticalHardware hw = testing::nmp_hardware(4, 1, 1, 1);
  RoutingTrace tr(2, 2, 2, 16, "both experts");
  for (int l = 0; l < 2; ++l)
    for (size_t t = 0; t < tr.tokens(); ++t) {
      tr.mutable_experts_of(l, t)[0] = 0;
      tr.mutable_experts_of(l, t)[1] = 1;
    }
  Placement p("hdmoe-node", 2, 4, 2);
  p.share[0] = {1, 0, 0, 0, 0, 0, 0, 1};
  p.share[1] = std::vector<double>(8, 0.25);
  HdmoeOptions opt;
  opt.batch = 8;
  opt.evaluations = 24;  // all 4! maps are 24; BO finds one of the 12 with adjacent holders
  const double one_hop_s = 8.0 * 1000 / 1e9;
  EXPECT_NEAR(authors_layer_comm_s(p.share[0], {0, 1, 2, 3}, m, hw, tr, 0, opt), 3 * one_hop_s, 1e-15);
  const Placement out = with_authors_link_balance(p, m, hw, tr, opt);
  EXPECT_EQ(out.strategy, "hdmoe");
  const auto& lb = out.solver.at("link_balance");
  EXPECT_EQ(lb.at("layers_searched").get<int>(), 1);
  EXPECT_NEAR(lb.at("identity_cost_us").get<double>(), 3 * one_hop_s * 1e6, 1e-9);
  EXPECT_NEAR(lb.at("best_cost_us").get<double>(), one_hop_s * 1e6, 1e-9);
  // Each expert still wholly on one cell, the two cells adjacent; the node map stays the identity.
  int c0 = -1, c1 = -1;
  for (int c = 0; c < 4; ++c) {
    if (out.share[0][static_cast<size_t>(c)] == 1) c0 = c;
    if (out.share[0][static_cast<size_t>(4 + c)] == 1) c1 = c;
  }
  ASSERT_GE(c0, 0);
  ASSERT_GE(c1, 0);
  EXPECT_EQ(std::abs(c0 - c1), 1);
  EXPECT_EQ(out.share[1], p.share[1]);
  for (int n = 0; n < 4; ++n) EXPECT_EQ(out.node_map[static_cast<size_t>(n)].value(), n);
}

}  // namespace
}  // namespace nmpsim::methods::hdmoe
