// HD-MoE's robust node balance: held-out batches and the per-layer choice among candidate
// placements at flow fidelity (methods/hdmoe/candidate_selection.h).
#include <gtest/gtest.h>

#include "mapping_test_util.h"
#include "nmpsim/mapping/layer_runner.h"
#include "nmpsim/methods/hdmoe/hdmoe_strategy.h"

namespace nmpsim::methods::hdmoe {
namespace {

using namespace nmpsim::mapping;

TEST(HdmoeSelection, HeldOutBatchesLieMidwayBetweenTheSampledOnes) {
  // 4096 tokens, the MILP samples batches at 0, 1024, 2048, 3072: held out at 512 + k * 1024.
  EXPECT_EQ(held_out_offsets(4096, 64, 4, 4), (std::vector<size_t>{512, 1536, 2560, 3584}));
  // Two held out over 4096 tokens, eight sampled (every 512): 256 and 2304.
  EXPECT_EQ(held_out_offsets(4096, 64, 8, 2), (std::vector<size_t>{256, 2304}));
  // A short profile: every batch starts where a whole batch still fits (100 - 64 = 36), or at 0.
  for (size_t first : held_out_offsets(100, 64, 4, 3)) EXPECT_LE(first, 36u);
  EXPECT_EQ(held_out_offsets(32, 64, 4, 2), (std::vector<size_t>{0, 0}));
}

TEST(HdmoeSelection, EveryLayerRunsAsFastAsItsBestCandidate) {
  // Layers run one after another, so a placement that takes each layer from the candidate that ran
  // it fastest must run every layer in exactly that candidate's time, and so beat them all in total.
  const ModelSpec m = model_preset("mixtral-8x7b");
  AnalyticalHardware hw = testing::line_hardware(4);
  hw.topology.height = hw.topology.die_height = hw.topology.wafer_height = 2;
  hw.peak_flops = 5e12;
  const RoutingTrace tr = testing::trace_for(m, 1.2, 1024);
  const Placement tp = make_tp(m, 8), ep = make_ep(m, 8), cb = make_cb(m, hw.topology, tr, 2);
  const std::vector<Candidate> cands{{"tp", &tp}, {"ep", &ep}, {"cb", &cb}};
  HeldOut h;
  h.batch = 32;
  h.first_tokens = {128, 640};
  const Selection sel = select_per_layer(cands, m, hw, tr, h, "mixed");
  sel.placement.validate("mixed");
  const std::vector<double> mixed = held_out_layer_seconds(sel.placement, m, hw, tr, h);
  double total = 0;
  std::vector<double> totals(cands.size(), 0.0);
  std::vector<int> used(cands.size(), 0);
  for (int l = 0; l < m.moe_layers; ++l) {
    double best = 1e300;
    for (size_t c = 0; c < cands.size(); ++c) {
      best = std::min(best, sel.layer_s[c][static_cast<size_t>(l)]);
      totals[c] += sel.layer_s[c][static_cast<size_t>(l)];
    }
    EXPECT_NEAR(mixed[static_cast<size_t>(l)], best, 1e-9 * best) << "layer " << l;
    EXPECT_EQ(sel.layer_s[static_cast<size_t>(sel.choice[static_cast<size_t>(l)])][static_cast<size_t>(l)], best);
    ++used[static_cast<size_t>(sel.choice[static_cast<size_t>(l)])];
    total += mixed[static_cast<size_t>(l)];
  }
  for (double t : totals) EXPECT_LE(total, t * (1 + 1e-9));
  const nlohmann::json j = sel.to_json(cands);
  for (size_t c = 0; c < cands.size(); ++c) EXPECT_EQ(j["layers_chosen"][cands[c].name].get<int>(), used[c]);
}

}  // namespace
}  // namespace nmpsim::methods::hdmoe
