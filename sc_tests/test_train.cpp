// Training steps (docs/MODEL.md "Training step"): the backward's FLOPs and all-to-all bytes against
// the forward's, the gradient synchronisation's bytes against a ring all-reduce's closed form, the
// optimizer's DRAM bytes and a node's parameters and training memory, all by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "mapping_test_util.h"
#include "nmpsim/mapping/layer_plan.h"
#include "nmpsim/mapping/placement.h"
#include "nmpsim/mapping/train_step.h"

namespace nmpsim::mapping {
namespace {

/// testing::hand_model with a dense layer of FFN width 4 before its MoE layer.
ModelSpec dense_hand_model() {
  ModelSpec m = testing::hand_model();
  m.dense_layers = 1;
  m.dense_intermediate = 4;
  return m;
}

/// Sum of the FLOPs of a schedule's compute ops, the fused adds left out (`reductions` false).
double compute_flops(const LayerSchedule& s, bool reductions = false) {
  double f = 0;
  for (const Op& o : s.ops())
    if (o.kind == OpKind::kCompute && (reductions || !o.reducer)) f += o.flops;
  return f;
}

/// A trace of `tokens` tokens, `layers` layers, top-k experts from a fixed pseudo-random sequence.
RoutingTrace trace(int layers, int experts, int top_k, size_t tokens) {
  RoutingTrace tr(layers, experts, top_k, tokens, "test");
  uint32_t x = 12345;
  for (int l = 0; l < layers; ++l)
    for (size_t t = 0; t < tokens; ++t) {
      uint16_t* e = tr.mutable_experts_of(l, t);
      for (int k = 0; k < top_k; ++k) {
        x = x * 1103515245u + 12345u;
        e[k] = static_cast<uint16_t>((x >> 16) % static_cast<uint32_t>(experts));
        if (k > 0 && e[k] == e[0]) e[k] = static_cast<uint16_t>((e[0] + 1) % experts);
      }
    }
  return tr;
}

LayerBuild fused() {
  LayerBuild b;
  b.reduce = ReduceMode::kFused;
  return b;
}

TEST(TrainStep, ForwardFlopsOfASmallDenseAndMoeModelByHand) {
  const ModelSpec m = dense_hand_model();
  StepTokens step;
  step.segments = {Segment{1, 3, 0, true}};
  // Per layer attention: projections 2 x 192 x 3 = 1152, scores and values 2 x 2 heads x (4 + 4) x 6
  // pairs = 192. Dense FFN: 3 tokens x 2 x (3 x 8 x 4) = 576. MoE: gate 3 x 2 x 16 = 96, experts
  // (top-1) 3 x 2 x 96 = 576. Two layers of attention: 2688. Total 3936.
  EXPECT_DOUBLE_EQ(forward_flops(m, step), 3936.0);
}

TEST(TrainStep, BackwardHasTwiceTheForwardsFlopsAndRecomputationOnceMore) {
  const ModelSpec m = dense_hand_model();
  const Topology t = testing::mesh(2, 2);
  const RoutingTrace tr = trace(1, m.experts, m.top_k, 64);
  const Groups g = make_groups(t, 2);
  StepTokens step;
  step.segments = {Segment{2, 3, 0, true}};
  const auto shares = physical_shares(make_ep(m, 4));
  double fwd = 0, bwd = 0, rec = 0;
  for (int l = 0; l < m.layers(); ++l) {
    const std::vector<LayerPlan> plans{plan_layer(m, shares, l, tr, 0, g, step)};
    fwd += compute_flops(build_moe_layer(m, plans, g, fused()));
    bwd += compute_flops(build_moe_layer_backward(m, plans, g, fused(), BackwardBuild{}));
    BackwardBuild r;
    r.recompute = true;
    rec += compute_flops(build_moe_layer_backward(m, plans, g, fused(), r));
  }
  // Two requests of 3 tokens: twice the hand count of one.
  EXPECT_DOUBLE_EQ(fwd, 2 * 3936.0);
  // The training step's model FLOPs (forward and backward) are 3x the forward, 4x with recomputation.
  EXPECT_NEAR((fwd + bwd) / fwd, 3.0, 1e-12);
  EXPECT_NEAR((fwd + rec) / fwd, 4.0, 1e-12);
}

/// Payload of every directed link [node * 4 + dir] of the transfers of the named phases.
std::vector<double> link_bytes(const LayerSchedule& s, const Topology& t, const std::vector<std::string>& phases) {
  std::vector<double> links(static_cast<size_t>(t.nodes()) * 4, 0.0);
  for (const Op& o : s.ops()) {
    if (o.kind != OpKind::kTransfer) continue;
    const std::string& name = s.phases()[static_cast<size_t>(o.phase)].name;
    if (std::find(phases.begin(), phases.end(), name) == phases.end()) continue;
    walk_xy(t, o.node.value(), o.peer.value(),
            [&](int from, int, LinkDir d) { links[static_cast<size_t>(from) * 4 + d] += o.bytes; });
  }
  return links;
}

TEST(TrainStep, BackwardAllToAllsPutTheForwardsBytesOnEveryLink) {
  ModelSpec m = model_preset("mixtral-8x7b");
  m.moe_layers = 1;
  const Topology t = testing::mesh(4, 4);
  const RoutingTrace tr = trace(1, m.experts, m.top_k, 256);
  const Groups g = make_groups(t, 4);
  StepTokens step;
  step.segments = {Segment{8, 16, 0, true}};
  const std::vector<LayerPlan> plans{plan_layer(m, physical_shares(make_ep(m, 16)), 0, tr, 0, g, step)};
  const LayerSchedule f = build_moe_layer(m, plans, g, fused());
  const LayerSchedule b = build_moe_layer_backward(m, plans, g, fused(), BackwardBuild{});
  // The combine's gradient travels home -> expert node, as the dispatch did; the dispatch's gradient
  // expert node -> home, as the combine did (XY routes differ by direction, so a missing transpose
  // would put the bytes on other links).
  const auto dispatch = link_bytes(f, t, {"dispatch"}), combine = link_bytes(f, t, {"combine"});
  const auto bwd_combine = link_bytes(b, t, {"bwd_combine"}), bwd_dispatch = link_bytes(b, t, {"bwd_dispatch"});
  double total = 0, asymmetric = 0;
  for (size_t i = 0; i < dispatch.size(); ++i) {
    EXPECT_DOUBLE_EQ(bwd_combine[i], dispatch[i]) << "link " << i;
    EXPECT_DOUBLE_EQ(bwd_dispatch[i], combine[i]) << "link " << i;
    total += dispatch[i];
    asymmetric += std::abs(dispatch[i] - combine[i]);
  }
  EXPECT_GT(total, 0.0);
  EXPECT_GT(asymmetric, 0.0) << "dispatch and combine load the same links: the test could not tell them apart";
}

TEST(TrainStep, BackwardMirrorsARelayedExchangeStageByStage) {
  // A hand-made plan of 3 nodes in a row with a two-stage relayed exchange: stage "a" moves tokens
  // 0 -> 1 (dispatch) and back (combine, summed at node 0), the last stage 1 -> 2 and back (summed at 1).
  ModelSpec m = testing::hand_model();
  const Topology t = testing::mesh(3, 1);
  const Groups g = make_groups(t, 1);
  LayerPlan p;
  p.nodes = 3;
  p.home = {0};
  for (auto* v : {&p.home_bytes, &p.attn_flops, &p.attn_bytes, &p.gate_flops, &p.gate_bytes, &p.shared_flops,
                  &p.shared_bytes, &p.partials, &p.reduce_flops, &p.routed_token_work})
    v->assign(3, 0.0);
  p.dispatch.assign(9, 0.0);
  p.combine.assign(9, 0.0);
  p.expert_work.assign(3, {});
  p.expert_work[2].push_back(ExpertWork{0, 1, 1, 96, 192});
  ExchangeStage a{"a", std::vector<double>(9, 0.0), std::vector<double>(9, 0.0), {5, 0, 0}};
  a.dispatch[0 * 3 + 1] = 16;
  a.combine[1 * 3 + 0] = 16;
  ExchangeStage last{"b", std::vector<double>(9, 0.0), std::vector<double>(9, 0.0), {0, 7, 0}};
  last.dispatch[1 * 3 + 2] = 16;
  last.combine[2 * 3 + 1] = 16;
  p.stages = {a, last};
  const LayerSchedule s = build_moe_layer_backward(m, {p}, g, fused(), BackwardBuild{});
  // Phases in the backward's order: the combine's gradient stage a first (the forward combined it
  // last), then the last stage, the experts, the dispatch's gradient last stage first, then stage a.
  std::vector<std::string> order;
  for (const Op& o : s.ops()) {
    const std::string& n = s.phases()[static_cast<size_t>(o.phase)].name;
    if (n.rfind("bwd_", 0) == 0 && (order.empty() || order.back() != n)) order.push_back(n);
  }
  const std::vector<std::string> moe(order.begin(), order.begin() + 5);
  EXPECT_EQ(
      moe, (std::vector<std::string>{"bwd_combine_a", "bwd_combine", "bwd_experts", "bwd_dispatch", "bwd_dispatch_a"}));
  // Where the bytes go and where the sums run: the gradient of a fan-out is summed where the forward's
  // combine summed it (node 1 after the last stage, node 0 after stage a).
  std::map<std::string, std::vector<std::pair<int, int>>> moves;
  std::map<std::string, std::map<int, double>> sums;
  for (const Op& o : s.ops()) {
    const std::string& n = s.phases()[static_cast<size_t>(o.phase)].name;
    if (o.kind == OpKind::kTransfer) moves[n].push_back({o.node.value(), o.peer.value()});
    if (o.kind == OpKind::kCompute && o.reducer) sums[n][o.node.value()] += o.flops;
  }
  EXPECT_EQ(moves["bwd_combine_a"], (std::vector<std::pair<int, int>>{{0, 1}}));
  EXPECT_EQ(moves["bwd_combine"], (std::vector<std::pair<int, int>>{{1, 2}}));
  EXPECT_EQ(moves["bwd_dispatch"], (std::vector<std::pair<int, int>>{{2, 1}}));
  EXPECT_EQ(moves["bwd_dispatch_a"], (std::vector<std::pair<int, int>>{{1, 0}}));
  EXPECT_TRUE(sums["bwd_combine"].empty() && sums["bwd_combine_a"].empty()) << "the gradient of a sum is a copy";
  EXPECT_EQ(sums["bwd_dispatch"], (std::map<int, double>{{1, 7.0}}));
  EXPECT_EQ(sums["bwd_dispatch_a"], (std::map<int, double>{{0, 5.0}}));
}

TEST(TrainStep, GradientSyncOfEveryNodeIsARingAllReducesBytes) {
  const ModelSpec m = dense_hand_model();
  const Topology t = testing::mesh(4, 4);
  const RoutingTrace tr = trace(1, m.experts, m.top_k, 64);
  const Groups g = make_groups(t, 4);  // 4 groups of 4
  StepTokens step;
  step.segments = {Segment{4, 4, 0, true}};  // one request per group, a token on every node: all homes
  const std::vector<LayerPlan> plans{plan_layer(m, physical_shares(make_ep(m, 16)), 1, tr, 0, g, step)};
  BackwardBuild b;
  b.all_nodes_ring = ring_order(t, 0, 0, 4, 4);
  std::vector<OpId> joins;
  const LayerSchedule s = build_moe_layer_backward(m, plans, g, fused(), b, &joins);
  EXPECT_FALSE(joins.empty());
  const int ph = s.find_phase("grad_sync");
  ASSERT_GE(ph, 0);
  EXPECT_EQ(s.phases()[static_cast<size_t>(ph)].stream, 1);  // in the background
  std::map<int, double> sent;
  for (const Op& o : s.ops()) {
    if (o.phase != ph) continue;
    if (o.kind == OpKind::kTransfer) sent[o.node.value()] += o.bytes;
    if (o.kind == OpKind::kCompute) {
      EXPECT_TRUE(o.reducer);
    }
  }
  // Each node: its attention shard (192 weights / 4 x 2 B = 96 B) over the 4 groups, 2 x 3/4 x 96 = 144,
  // and the gate (16 x 2 B = 32 B) over the 16 homes, 2 x 15/16 x 32 = 60.
  ASSERT_EQ(sent.size(), 16u);
  for (const auto& [v, bytes] : sent) EXPECT_NEAR(bytes, 144.0 + 60.0, 1e-9) << "node " << v;
}

TEST(TrainStep, OptimizerStreamsEachParametersStateOnceByHand) {
  ModelSpec m = dense_hand_model();
  m.weight_bytes = 1;  // INT8 weights: an FP32 master copy too
  // Read gradient 1, master 4, m 4, v 4; write master 4, m 4, v 4, weight 1: 26 B per parameter.
  EXPECT_DOUBLE_EQ(optimizer_dram_bytes(m), 26.0);
  m.weight_bytes = 4;  // FP32: no master copy; read w, g, m, v (16), write w, m, v (12)
  EXPECT_DOUBLE_EQ(optimizer_dram_bytes(m), 28.0);
  m.weight_bytes = 2;
  const LayerSchedule s = build_optimizer_step(m, {100, 0, 50}, {});
  std::map<int, std::pair<double, double>> work;
  for (const Op& o : s.ops())
    if (o.kind == OpKind::kCompute) work[o.node.value()] = {o.flops, o.bytes};
  ASSERT_EQ(work.size(), 2u);  // node 1 holds nothing
  EXPECT_DOUBLE_EQ(work[0].first, 1600.0);
  EXPECT_DOUBLE_EQ(work[0].second, 2800.0);
  EXPECT_DOUBLE_EQ(work[2].second, 1400.0);
}

TEST(TrainStep, ParametersAndTrainingMemoryOfANodeByHand) {
  const ModelSpec m = dense_hand_model();
  const Placement tp = make_tp(m, 2);
  const Groups g = make_groups(testing::mesh(2, 1), 2);
  // Attention 192 x 2 layers / 2, dense FFN 96 / 2, gate 16, experts 2 x 96 / 2: 192 + 48 + 16 + 96.
  const std::vector<double> p = node_parameters(m, physical_shares(tp), g);
  EXPECT_DOUBLE_EQ(p[0], 352.0);
  EXPECT_DOUBLE_EQ(p[1], 352.0);
  RunShape shape;
  shape.kind = StepKind::kTrain;
  shape.batch = 1;
  shape.prompt_tokens = 4;
  const MemoryDemand d = memory_demand(tp, m, 2, shape);
  // Weights 352 x 2 B = 704; gradients 704; optimizer state 352 x 12 = 4224. Activations per token
  // and layer: 7.5 x 8 x 2 = 120 plus the dense FFN (8 + 3 x 4) x 2 = 40 or the expert (top-1) 40:
  // 2 layers x 160 = 320 per token, 4 tokens over 2 nodes: 640.
  EXPECT_DOUBLE_EQ(d.gradient_bytes, 704.0);
  EXPECT_DOUBLE_EQ(d.optimizer_bytes, 4224.0);
  EXPECT_DOUBLE_EQ(d.activation_bytes, 640.0);
  EXPECT_DOUBLE_EQ(d.max_bytes, 704.0 + 704.0 + 4224.0 + 640.0);
  // With recomputation: the inputs (8 x 2 B per layer and token) and one layer's full set, 2 tokens.
  shape.recompute = true;
  EXPECT_DOUBLE_EQ(memory_demand(tp, m, 2, shape).activation_bytes, 2 * (2 * 16.0 + 160.0));
}

}  // namespace
}  // namespace nmpsim::mapping
