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
  // Eight held out, four sampled (0, 1024, 2048, 3072): every 512 from 256, none on the sampled grid.
  EXPECT_EQ(held_out_offsets(4096, 64, 4, 8), (std::vector<size_t>{256, 768, 1280, 1792, 2304, 2816, 3328, 3840}));
  // Six held out, four sampled (0, 1024, 2048, 3072): lcm 12, offsets from 4096 / 24 = 170.7 every
  // 682.7, none on the sampled grid (the old half-of-the-finer-grid rule put two on it).
  for (size_t first : held_out_offsets(4096, 64, 4, 6)) EXPECT_NE(first % 1024, 0u) << first;
  // A short profile: every batch starts where a whole batch still fits (100 - 64 = 36), or at 0.
  for (size_t first : held_out_offsets(100, 64, 4, 3)) EXPECT_LE(first, 36u);
  EXPECT_EQ(held_out_offsets(32, 64, 4, 2), (std::vector<size_t>{0, 0}));
}

TEST(HdmoeSelection, EveryLayerRunsAsFastAsItsBestCandidate) {
  // Layers run one after another, so a placement that takes each layer from the candidate that ran
  // it fastest must run every layer in exactly that candidate's time, and so beat them all in total.
  const ModelSpec m = model_preset("mixtral-8x7b");
  AnalyticalHardware hw = testing::line_hardware(4);
  hw.topology.height = hw.topology.die().height = hw.topology.wafer().height = 2;
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

TEST(HdmoeSelection, AChallengerMustBeatTheReferenceByMoreThanTheNoise) {
  // Paired differences 1, 1, 1, 1: mean 1, no spread, so any z passes.
  EXPECT_TRUE(clearly_faster({9, 9, 9, 9}, {10, 10, 10, 10}, 2.0));
  // Differences 4, -2, 4, -2: mean 1, sample sd sqrt(12) = 3.46, standard error 1.73: 1 < 2 * 1.73.
  EXPECT_FALSE(clearly_faster({6, 12, 6, 12}, {10, 10, 10, 10}, 2.0));
  // Differences 4, 2, 4, 2: mean 3, sd 1.15, standard error 0.58: passes at z = 2 (1.15 < 3), not at 6.
  EXPECT_TRUE(clearly_faster({6, 8, 6, 8}, {10, 10, 10, 10}, 2.0));
  EXPECT_FALSE(clearly_faster({6, 8, 6, 8}, {10, 10, 10, 10}, 6.0));
  // Slower on average never passes; one batch passes when faster at all.
  EXPECT_FALSE(clearly_faster({11, 11}, {10, 10}, 0.0));
  EXPECT_TRUE(clearly_faster({9.999}, {10}, 2.0));
  EXPECT_FALSE(clearly_faster({}, {}, 2.0));
  // A steady gain of 1 in 100 (1%) is not more than a 1% floor; 2 in 100 is.
  EXPECT_FALSE(clearly_faster({99, 99, 99}, {100, 100, 100}, 2.0, 0.01));
  EXPECT_TRUE(clearly_faster({98, 98, 98}, {100, 100, 100}, 2.0, 0.01));
}

TEST(HdmoeSelection, TheReferenceStaysUnlessAnotherCandidateIsClearlyFaster) {
  // Candidate 2 has the least total (31.7 against 40) and wins every batch, but its gain swings:
  // differences 4, 0.2, 4, 0.1: mean 2.075, sd 2.22, standard error 1.11: 2.075 < 2 * 1.11. The
  // reference 1 stays.
  const std::vector<std::vector<double>> noisy{{11, 11, 11, 11}, {10, 10, 10, 10}, {6, 9.8, 6, 9.9}};
  EXPECT_EQ(choose_candidate(noisy, 1, 2.0), 1);
  EXPECT_EQ(choose_candidate(noisy, -1, 2.0), 2);  // no reference: the least total
  // A steady gain of 1 per batch replaces it.
  const std::vector<std::vector<double>> steady{{11, 11, 11, 11}, {10, 10, 10, 10}, {9, 9, 9, 9}};
  EXPECT_EQ(choose_candidate(steady, 1, 2.0), 2);
  // Two clearly faster: the faster of them; a 1% floor keeps the reference against a 0.5% gain.
  // Only the fastest is tested: candidate 2 (least total, noisy) is not clearly faster, and candidate
  // 0, steadily 1% faster, is not considered, so the reference stays.
  EXPECT_EQ(choose_candidate({{9.9, 9.9, 9.9, 9.9}, {10, 10, 10, 10}, {6, 9.8, 6, 9.9}}, 1, 2.0), 1);
  EXPECT_EQ(choose_candidate({{9, 9, 9}, {10, 10, 10}, {8, 8, 8}}, 1, 2.0), 2);
  EXPECT_EQ(choose_candidate({{99.5, 99.5}, {100, 100}}, 1, 2.0, 0.01), 1);
  EXPECT_EQ(choose_candidate({{99.5, 99.5}, {100, 100}}, 1, 2.0, 0.0), 0);
  // A reference beyond the candidates is an error, not a read out of bounds.
  EXPECT_THROW(choose_candidate({{1}, {2}}, 2, 2.0), std::invalid_argument);
  // The reference itself fastest: kept.
  EXPECT_EQ(choose_candidate({{11, 11}, {10, 10}}, 1, 2.0), 1);
}

}  // namespace
}  // namespace nmpsim::methods::hdmoe
