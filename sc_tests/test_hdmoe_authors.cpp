// The HD-MoE authors' accounting against the hand-checked rows of data/reference/hdmoe/ACCOUNTING.md
// and hand-computed store-and-forward schedules.
#include <gtest/gtest.h>

#include "mapping_test_util.h"
#include "nmpsim/mapping/trace.h"
#include "nmpsim/methods/hdmoe/authors_accounting.h"

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

}  // namespace
}  // namespace nmpsim::methods::hdmoe
