// Pipelined collectives (collectives.pipeline_chunks, docs/MODEL.md "Pipelined collectives"): the
// attention's compute in N pieces, each reduce-scattered as soon as it is done, against a hand-computed
// timeline on the flow back end.
#include <gtest/gtest.h>

#include "mapping_test_util.h"
#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/layer_phases.h"
#include "nmpsim/mapping/moe_layer.h"

namespace nmpsim::mapping {
namespace {

/// Two nodes of 1 TFLOP/s joined by 50 GB/s links (one flit per cycle at 1 GHz), start-up 0; each
/// computes 20 us of attention and reduce-scatters 1 MB with the other. Adds cost nothing (one element
/// per 10^9 bytes), so the timeline is compute and transfers alone. Returns the block's seconds.
double attention_block_s(int chunks, int* compute_ops = nullptr, int* startups = nullptr) {
  AnalyticalHardware hw = testing::line_hardware(2);
  hw.peak_flops = 1e12;
  hw.startup_s = 0;
  LayerPlan plan;
  plan.nodes = 2;
  plan.attn_flops = {20e6, 20e6};
  plan.attn_bytes = {0, 0};
  plan.home_bytes = {1e6, 1e6};
  Groups g;
  g.ring = {{0, 1}};
  LayerBuild b;
  b.element_bytes = 1e9;
  b.pipeline_chunks = chunks;
  auto s = std::make_shared<LayerSchedule>(build_attention_block(plan, g, b));
  if (compute_ops && startups) {
    *compute_ops = *startups = 0;
    for (const Op& o : s->ops())
      if (o.kind == OpKind::kCompute && o.phase == s->find_phase("attention")) {
        ++*compute_ops;
        *startups += o.startup ? 1 : 0;
      }
  }
  flow::FlowExecutor ex(hw);
  ex.execute(s);
  return ex.now_s();
}

TEST(Pipeline, ReduceScatterOfEachPieceOverlapsTheNextPiecesCompute) {
  // Not pipelined: 20 us of compute, then 1 MB over the link (20 us) and the hop's latency. In N pieces:
  // piece j (20/N us) is sent (20/N us) while piece j + 1 computes; only the last piece's transfer is
  // exposed: 20 + 20/N us and the latency (one hop: the destination's 2-cycle pipeline, then R - 1 +
  // link + flit, 5 ns).
  const double lat = 5e-9;
  EXPECT_NEAR(attention_block_s(1), 40e-6 + lat, 1e-11);
  for (int n : {2, 4, 8}) EXPECT_NEAR(attention_block_s(n), 20e-6 + 20e-6 / n + lat, 1e-11) << n;
  // One kernel: N compute ops per node, one start-up.
  int ops = 0, startups = 0;
  attention_block_s(4, &ops, &startups);
  EXPECT_EQ(ops, 2 * 4);
  EXPECT_EQ(startups, 2);
}

/// Tutel's chunks on a 2-node line: node 0's tokens go to node 1's expert (1 MB, 20 us at 50 GB/s), it
/// computes 20 us, the results come back (1 MB, 20 us). Returns the block's seconds in `chunks`.
double moe_block_s(int chunks, double* bytes = nullptr) {
  AnalyticalHardware hw = testing::line_hardware(2);
  hw.peak_flops = 1e12;
  hw.startup_s = 0;
  LayerPlan plan;
  plan.nodes = 2;
  plan.home.assign(8, 0);  // 8 tokens at node 0: up to 8 chunks
  plan.expert_work = {{}, {ExpertWork{0, 8, 1.0, 20e6, 0.0}}};
  const std::vector<double> dispatch = {0, 1e6, 0, 0}, combine = {0, 0, 1e6, 0}, sums = {0, 0};
  LayerBuild b;
  b.moe_chunks = chunks;
  auto s = std::make_shared<LayerSchedule>();
  layer_phases::PhaseChain chain(*s);
  const int phases[3] = {s->phase("dispatch", PhaseFamily::kMoeComm), s->phase("experts", PhaseFamily::kMoeCompute),
                         s->phase("combine", PhaseFamily::kMoeComm)};
  layer_phases::chunked_moe_block(*s, chain, phases, dispatch, combine, &sums, plan, b);
  if (bytes) {
    *bytes = 0;
    for (const Op& o : s->ops())
      if (o.kind == OpKind::kTransfer) *bytes += o.bytes;
  }
  flow::FlowExecutor ex(hw);
  ex.execute(s);
  return ex.now_s();
}

TEST(ChunkedMoe, EachChunksAllToAllOverlapsTheOtherChunksExperts) {
  // One chunk: 20 + 20 + 20 us. C chunks of T = 20 / C us each: a three-stage pipeline, (C + 2) T,
  // plus a hop's 5 ns per transfer on the critical path (the first dispatch and the C combines).
  for (int c : {1, 2, 4, 8}) {
    double bytes = 0;
    const double t = 20e-6 / c;
    EXPECT_NEAR(moe_block_s(c, &bytes), (c + 2) * t, (c + 1) * 5e-9 + 1e-11) << c;
    EXPECT_DOUBLE_EQ(bytes, 2e6) << c;  // the same bytes, in 2 C messages
  }
}

}  // namespace
}  // namespace nmpsim::mapping
