// Steps that carry prompts (prefill, mixed): the segments of a step, their closed forms (FLOPs and
// bytes of one layer, computed by hand), the homes of a request's tokens, and the capacity a step
// needs. docs/MODEL.md "Steps: decode, prefill, mixed".
#include <gtest/gtest.h>

#include <numeric>

#include "mapping_test_util.h"
#include "nmpsim/mapping/layer_plan.h"
#include "nmpsim/mapping/placement.h"

namespace nmpsim::mapping {
namespace {

using testing::hand_model;

TEST(Segments, PairsAndTiledKvReadsByHand) {
  // A prompt of 3 from scratch: pairs 1 + 2 + 3 = 6; tiles of 2 queries read keys 2 then 3.
  EXPECT_DOUBLE_EQ((Segment{1, 3, 0, true}.pairs()), 6.0);
  EXPECT_DOUBLE_EQ((Segment{1, 3, 0, true}.kv_read_tokens(2)), 5.0);
  // A chunk of 5 after 10 cached tokens: pairs 11 + 12 + 13 + 14 + 15 = 65; tiles of 2 read 12, 14, 15.
  EXPECT_DOUBLE_EQ((Segment{1, 5, 10, true}.pairs()), 65.0);
  EXPECT_DOUBLE_EQ((Segment{1, 5, 10, true}.kv_read_tokens(2)), 41.0);
  // One tile covering the chunk reads every key once: 15.
  EXPECT_DOUBLE_EQ((Segment{1, 5, 10, true}.kv_read_tokens(128)), 15.0);
  // A decode token over a context of 1024 attends 1024 keys and reads them once.
  EXPECT_DOUBLE_EQ((Segment{64, 1, 1023, false}.pairs()), 1024.0);
  EXPECT_DOUBLE_EQ((Segment{64, 1, 1023, false}.kv_read_tokens(128)), 1024.0);
}

TEST(Segments, StepsOfEachPhase) {
  const StepTokens decode = RunShape{64, 1024}.step(5);
  ASSERT_EQ(decode.segments.size(), 1u);
  EXPECT_EQ(decode.segments[0].requests, 64);
  EXPECT_EQ(decode.segments[0].kv_before, 1023);
  EXPECT_EQ(decode.tokens(), 64);

  RunShape prefill;
  prefill.kind = StepKind::kPrefill;
  prefill.batch = 8;
  prefill.prompt_tokens = 2048;
  EXPECT_EQ(prefill.step(0).tokens(), 8 * 2048);
  EXPECT_EQ(prefill.step(0).prompt_tokens(), 8 * 2048);
  EXPECT_EQ(prefill.prompt_steps(), 1);

  // 4 decode tokens and a prompt of 10 in chunks of 4: chunks 4, 4, 2 after 0, 4, 8 tokens, then decode only.
  RunShape mixed{4, 100};
  mixed.kind = StepKind::kMixed;
  mixed.prompt_tokens = 10;
  mixed.prefill_chunk = 4;
  EXPECT_EQ(mixed.prompt_steps(), 3);
  const int chunk[] = {4, 4, 2}, before[] = {0, 4, 8};
  for (int s = 0; s < 3; ++s) {
    const StepTokens st = mixed.step(s);
    ASSERT_EQ(st.segments.size(), 2u);
    EXPECT_EQ(st.segments[1].tokens, chunk[s]);
    EXPECT_EQ(st.segments[1].kv_before, before[s]);
    EXPECT_EQ(st.tokens(), 4 + chunk[s]);
  }
  EXPECT_EQ(mixed.step(3).segments.size(), 1u);
}

TEST(Prefill, OneLayerByHand) {
  const ModelSpec m = hand_model();
  // Attention weights: q and o 8 x 2 x 4 each, k and v 8 x 1 x 4 each: 192. KV per token 2 x 4 x 2 B = 16.
  ASSERT_DOUBLE_EQ(m.attention_params(), 192.0);
  ASSERT_DOUBLE_EQ(m.kv_bytes_per_token(), 16.0);
  RoutingTrace tr(1, 2, 1, 3, "hand");
  const uint16_t route[] = {0, 1, 0};  // tokens 0 and 2 choose expert 0, token 1 expert 1
  for (size_t t = 0; t < 3; ++t) *tr.mutable_experts_of(0, t) = route[t];
  const Topology one = testing::mesh(1, 1);
  StepTokens step;
  step.segments = {Segment{1, 3, 0, true}};
  step.attention_tile_tokens = 2;
  const LayerPlan p = plan_layer(m, physical_shares(make_ep(m, 1)), 0, tr, 0, make_groups(one, 0), step);
  // Projections 2 x 192 x 3 = 1152 FLOPs; scores and values 2 x 2 heads x (4 + 4) x 6 pairs = 192.
  EXPECT_DOUBLE_EQ(p.attn_flops[0], 1152.0 + 192.0);
  // Weights 192 x 2 B; KV read 5 x 16, written 3 x 16; activations in and out 2 x 3 x 8 x 2 B.
  EXPECT_DOUBLE_EQ(p.attn_bytes[0], 384.0 + 80.0 + 48.0 + 96.0);
  // Gate: 2 x 8 x 2 FLOPs per token; its weights 16 x 2 B and the 3 tokens' inputs 3 x 16 B.
  EXPECT_DOUBLE_EQ(p.gate_flops[0], 3 * 32.0);
  EXPECT_DOUBLE_EQ(p.gate_bytes[0], 32.0 + 48.0);
  // Experts: 3 x 8 x 4 weights each (192 B); expert 0 has 2 tokens, expert 1 one; each piece reads
  // its tokens' inputs and writes their outputs (2 x 16 B per token).
  ASSERT_EQ(p.expert_work[0].size(), 2u);
  for (const ExpertWork& w : p.expert_work[0]) {
    const double tokens = w.expert == 0 ? 2 : 1;
    EXPECT_DOUBLE_EQ(w.tokens, tokens);
    EXPECT_DOUBLE_EQ(w.flops, tokens * 2 * 96.0);
    EXPECT_DOUBLE_EQ(w.bytes, 192.0 + tokens * 32.0);
  }
}

TEST(Prefill, DecodeStepsKeepTheirClosedForm) {
  // A decode step: per token 2 P_attn + 2 H (d_qk + d_v) context FLOPs, the weights once and context x
  // KV bytes per token; no activations through DRAM.
  const ModelSpec m = hand_model();
  RoutingTrace tr(1, 2, 1, 4, "hand");
  const LayerPlan p =
      plan_layer(m, physical_shares(make_ep(m, 1)), 0, tr, 0, make_groups(testing::mesh(1, 1), 0), RunShape{4, 10});
  EXPECT_DOUBLE_EQ(p.attn_flops[0], 4 * (2 * 192.0 + 2 * 2 * 8 * 10.0));
  EXPECT_DOUBLE_EQ(p.attn_bytes[0], 384.0 + 4 * 10 * 16.0);
  EXPECT_DOUBLE_EQ(p.gate_bytes[0], 32.0);
}

TEST(Prefill, RequestsKeepTheirTokensInTheirGroup) {
  // A 2x2 mesh in two groups of 2; 3 prompts of 4: request r in group r mod 2, its tokens round the
  // group's ring from position ((r / 2) x 4) mod 2.
  const ModelSpec m = hand_model();
  const Groups g = make_groups(testing::mesh(2, 2), 2);
  RunShape shape;
  shape.kind = StepKind::kPrefill;
  shape.batch = 3;
  shape.prompt_tokens = 4;
  RoutingTrace tr(1, 2, 1, 12, "hand");
  const LayerPlan p = plan_layer(m, physical_shares(make_ep(m, 4)), 0, tr, 0, g, shape);
  ASSERT_EQ(p.home.size(), 12u);
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 4; ++j) {
      const auto& ring = g.ring[static_cast<size_t>(r % 2)];
      EXPECT_EQ(p.home[static_cast<size_t>(r * 4 + j)], ring[static_cast<size_t>(((r / 2) * 4 + j) % 2)]);
    }
  // Group 0 carries requests 0 and 2 (8 tokens, 2 x 10 pairs), group 1 request 1; each node does half.
  const double per_request = 2 * 192.0 * 4 + 2 * 2 * 8 * 10.0;
  EXPECT_DOUBLE_EQ(p.attn_flops[static_cast<size_t>(g.ring[0][0])], 2 * per_request / 2);
  EXPECT_DOUBLE_EQ(p.attn_flops[static_cast<size_t>(g.ring[1][1])], per_request / 2);
  const double homes = std::accumulate(p.home_bytes.begin(), p.home_bytes.end(), 0.0);
  EXPECT_DOUBLE_EQ(homes, 12 * m.token_bytes());
}

TEST(MicroBatches, KeepTheStepsHomesAndAttentionWork) {
  // 4 prompts of 8 on 4 groups of 4 (a 4x4 mesh), in 2 micro-batches: every request keeps its group and
  // ring positions, so per node the micro-batches' homes and attention FLOPs add up to the whole step's.
  const ModelSpec m = hand_model();
  const Groups g = make_groups(testing::mesh(4, 4), 4);
  RoutingTrace tr(1, 2, 1, 32, "hand");
  StepTokens whole;
  whole.segments = {Segment{4, 8, 0, true}};
  const auto shares = physical_shares(make_ep(m, 16));
  const LayerPlan one = plan_layer(m, shares, 0, tr, 0, g, whole);
  const std::vector<StepTokens> mb = split_micro_batches(whole, 2);
  ASSERT_EQ(mb.size(), 2u);
  EXPECT_EQ(mb[1].first_request, 2);
  const LayerPlan a = plan_layer(m, shares, 0, tr, 0, g, mb[0]), b = plan_layer(m, shares, 0, tr, 16, g, mb[1]);
  for (size_t v = 0; v < 16; ++v) {
    EXPECT_DOUBLE_EQ(a.home_bytes[v] + b.home_bytes[v], one.home_bytes[v]) << v;
    EXPECT_NEAR(a.attn_flops[v] + b.attn_flops[v], one.attn_flops[v], 1e-12 * one.attn_flops[v]) << v;
  }
}

TEST(Capacity, PrefillKvAndActivationsByHand) {
  ModelSpec m = hand_model();
  m.moe_layers = 2;
  const Placement ep = make_ep(m, 4);
  RunShape shape;
  shape.kind = StepKind::kPrefill;
  shape.batch = 3;
  shape.prompt_tokens = 100;
  // Groups of 2 (2 groups): ceil(3 / 2) = 2 prompts of 100 per group; KV 2 layers x 200 x 16 B / 2.
  const MemoryDemand d = memory_demand(ep, m, 2, shape);
  EXPECT_DOUBLE_EQ(d.kv_bytes, 2 * 200 * 16.0 / 2);
  // Activations of one layer: 200 tokens' hidden states in and out, 2 x 8 x 2 B each.
  EXPECT_DOUBLE_EQ(d.activation_bytes, 200 * 2 * 8 * 2.0);
  // Decode: no activations, the KV of ceil(B / groups) tokens' contexts.
  const MemoryDemand dec = memory_demand(ep, m, 2, 3, 50);
  EXPECT_DOUBLE_EQ(dec.kv_bytes, 2 * 2 * 50 * 16.0 / 2);
  EXPECT_DOUBLE_EQ(dec.activation_bytes, 0.0);
  try {
    check_memory(ep, m, testing::mesh(2, 2), d.max_bytes - 1, 2, shape);
    FAIL() << "a placement one byte too large was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("KV cache"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("activations"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nmpsim::mapping
