// The up-front memory model (mapping/memory_model.h, docs/PERFORMANCE.md "Memory per input"): its
// terms against hand-computed sums.
#include <gtest/gtest.h>

#include "nmpsim/mapping/memory_model.h"

namespace nmpsim::mapping {
namespace {

TEST(MemoryModel, ATrainingStepCountsNodePairsAndGradientRingsNotTokensTimesNodes) {
  // HybridEP's Fig. 17 point: 1000 one-GPU data centres, 256000 tokens, 1000 experts top-2, plain EP
  // (each expert on one node), data-parallel attention, 4 layers kept for the backward.
  RunSize s;
  s.nodes = 1000;
  s.attn_group = 1;
  s.batch = 256000;
  s.moe_layers = 2;
  s.experts = 1000;
  s.kept_layers = 4;
  s.top_k = 2;
  s.expert_span = 1;
  s.train = true;
  const double fixed = 16e6 + 64e6, nodes = 45e3 * 1000, node_pairs = 16.0 * 1000 * 1000 * 4, groups = 1.4e3 * 1000 * 1,
               experts = 55.0 * 1000 * 1000, placements = 21.0 * 2 * 1000 * 1000;
  // A layer's tokens cross min(1000 homes x 1000 nodes, 2 x 1 x 256000) = 512000 node pairs; the
  // gate's ring over 1000 nodes and the attention's over the 1000 groups: 2 x 1000 x 999 member-steps.
  const double crossed = 1.4e3 * 512000, kept = 8.0 * 256000 * 4, rings = 4.2e3 * 2 * 1000 * 999;
  const MemoryEstimate e = estimate_run_memory(s);
  EXPECT_NEAR(e.bytes, fixed + nodes + node_pairs + groups + experts + placements + crossed + kept + rings, 1.0);
  EXPECT_NE(e.terms[0].what.find("gradient rings of 1000 nodes"), std::string::npos) << e.terms[0].what;
  // A decode step of TP (every expert on every node): every token crosses to every node.
  RunSize d = s;
  d.train = false;
  d.kept_layers = 1;
  d.expert_span = 0;
  d.batch = 64;
  const double decode =
      fixed + nodes + 16.0 * 1000 * 1000 + groups + experts + placements + 1.4e3 * 64 * 1000 + 8.0 * 64;
  EXPECT_NEAR(estimate_run_memory(d).bytes, decode, 1.0);
}

}  // namespace
}  // namespace nmpsim::mapping
