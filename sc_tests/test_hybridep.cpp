// HybridEP (plain C++): Eq. 13's renumbering and Algorithm 1's pair counts against hand counts, the
// serving node of the same-offset all-to-all, the stream model against the paper's Table IV, a
// layer with domain copies planned by hand, and the policy's all-gather bytes and token conservation.
#include <gtest/gtest.h>

#include <memory>

#include "mapping_test_util.h"
#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/layer_runner.h"
#include "nmpsim/methods/common/hierarchy.h"
#include "nmpsim/methods/hybridep/domains.h"
#include "nmpsim/methods/hybridep/partition.h"
#include "nmpsim/methods/hybridep/policy.h"
#include "nmpsim/methods/hybridep/shadow.h"
#include "nmpsim/methods/hybridep/stream_model.h"

namespace nmpsim::methods::hybridep {
namespace {

TEST(HybridPartition, RenumberingAndPairCountsByHand) {
  const Levels two{{4, 4}};
  EXPECT_EQ(locate(two, 6), (std::vector<int>{1, 2}));  // Eq. 13: x0 = 6 / 4 mod 4, x1 = 6 mod 4
  for (int m = 0; m < 16; ++m) EXPECT_EQ(index_of(two, locate(two, m)), m);
  // One flat level of G = 8 workers, S = 2: G (G / S - 1) all-to-all pairs, G (S - 1) all-gather pairs.
  for (int s : {1, 2, 4, 8}) {
    const std::vector<LevelPairs> p = pair_counts(Levels{{8}}, {s});
    EXPECT_EQ(p[0].a2a_pairs, 8 * (8 / s - 1)) << "S " << s;
    EXPECT_EQ(p[0].ag_pairs, 8 * (s - 1)) << "S " << s;
  }
  // Two levels SF = [2, 4], S = [1, 2]: level 0 pairs the same position of the two workers (4 x 2
  // ordered pairs, different domains, offset 0); level 1 is the flat count in each of the 2 workers.
  const std::vector<LevelPairs> q = pair_counts(Levels{{2, 4}}, {1, 2});
  EXPECT_EQ(q[0].a2a_pairs, 8);
  EXPECT_EQ(q[0].ag_pairs, 0);
  EXPECT_EQ(q[1].a2a_pairs, 2 * 4 * (4 / 2 - 1));
  EXPECT_EQ(q[1].ag_pairs, 2 * 4 * (2 - 1));
  // Nodes that differ in two levels never exchange directly.
  EXPECT_EQ(comm_type(Levels{{2, 4}}, {2, 4}, 0, 5, 0), Comm::kNone);
  EXPECT_EQ(comm_type(Levels{{2, 4}}, {2, 4}, 0, 4, 0), Comm::kAllGather);
  EXPECT_THROW(check_sed(Levels{{2, 4}}, {2, 3}, "t"), mapping::InputError);
  EXPECT_THROW(check_sed(Levels{{2, 4}}, {2}, "t"), mapping::InputError);
}

TEST(HybridPartition, TokensGoToTheSameOffsetInTheExpertsDomain) {
  const Levels flat{{8}};
  // S = 2: rank 3 is domain 1 offset 1; rank 6's expert is held by domain 3, at offset 1: rank 7.
  EXPECT_EQ(serving_rank(flat, {2}, 3, 6), 7);
  EXPECT_EQ(serving_rank(flat, {2}, 3, 2), 3);  // its own domain: served at home
  EXPECT_EQ(serving_rank(flat, {1}, 3, 6), 6);  // EP: at the expert's node
  // Two levels: home (1, 3), expert at (0, 0), S = [1, 2]: the other worker's domain {0, 1} at offset 1.
  EXPECT_EQ(serving_rank(Levels{{2, 4}}, {1, 2}, 7, 0), 1);
  const std::vector<std::vector<int>> all = all_seds(Levels{{4, 6}});
  EXPECT_EQ(all.size(), 3u * 4u);
  EXPECT_EQ(all.front(), (std::vector<int>{1, 1}));
}

StreamInputs table_iv(double lat_pe_ms, double d_mb, double pe_mb, double bytes_per_s) {
  StreamInputs in;
  in.workers = 8;
  in.bytes_per_s = bytes_per_s;
  in.pre_expert_s = lat_pe_ms * 1e-3;
  in.data_bytes = d_mb * 1e6;
  in.expert_bytes = pe_mb * 1e6;
  return in;
}

TEST(HybridStreamModel, ThePapersTableFourWithBAt128GBPerSecond) {
  // Table IV: G = 8, "128 Gbps"; the chosen p (1 - S / G) is 0.75, 0.5, 0, 0. Read as 128 GB/s the
  // enumeration over S in {1, 2, 4, 8} reproduces all four; read as 128 Gbit/s it picks 1, 0.75, 0, 0.
  const double gbs = 128e9;
  const StreamInputs mix1 = table_iv(0.049, 8, 4.7, gbs), mix2 = table_iv(0.049, 8, 2.35, gbs),
                     ag1 = table_iv(0.099, 3, 0.094, gbs), ag2 = table_iv(0.099, 3, 0.047, gbs);
  EXPECT_DOUBLE_EQ(p_table_form(8, best_domain({mix1})), 0.75);
  EXPECT_DOUBLE_EQ(p_table_form(8, best_domain({mix2})), 0.5);
  EXPECT_DOUBLE_EQ(p_table_form(8, best_domain({ag1})), 0.0);
  EXPECT_DOUBLE_EQ(p_table_form(8, best_domain({ag2})), 0.0);
  EXPECT_DOUBLE_EQ(p_table_form(8, 1), 1.0);  // EP, as the table lists it
  EXPECT_DOUBLE_EQ(p_of_domain(8, 4), 4.0 / 7);
  // Mix-1 at S = 2 by hand: AG (1/7) 4.7 MB x 7 / B = 36.7 us < 49 us; A2A (6/7) 8 MB x 7/8 / B.
  const double p2 = p_of_domain(8, 2);
  EXPECT_NEAR(final_seconds(mix1, p2), 49e-6 + 2 * (6.0 / 7) * 8e6 * 7 / 8 / gbs, 1e-12);
  // The closed form: Mix-1 and Mix-2 are Case 2.1 with p* = 1 - B Lat_PE / (P_E (G - 1)); AG-only Case 2.2.
  EXPECT_EQ(optimal_p(mix1).case_id, 21);
  EXPECT_NEAR(optimal_p(mix1).p, 1 - gbs * 0.049e-3 / (4.7e6 * 7), 1e-12);
  EXPECT_EQ(optimal_p(mix2).case_id, 21);
  EXPECT_EQ(optimal_p(ag1).case_id, 22);
  EXPECT_EQ(optimal_p(ag2).p, 0.0);
  const double gbit = 16e9;
  EXPECT_EQ(best_domain({table_iv(0.049, 8, 4.7, gbit)}), 1);
  EXPECT_EQ(best_domain({table_iv(0.049, 8, 2.35, gbit)}), 2);
  // The max over workers: one worker with twice the data moves the choice towards all-gather.
  StreamInputs heavy = mix2;
  heavy.data_bytes *= 4;
  EXPECT_GE(best_domain({mix2, heavy}), best_domain({mix2}));
}

}  // namespace
}  // namespace nmpsim::methods::hybridep

namespace nmpsim::methods::hybridep {
namespace {

/// Four experts, top-1, one MoE layer on a line of 4 nodes, EP (expert e on node e); token i has
/// home node i (attention TP 1) and chooses expert 3, 0, 1, 2.
struct LineCase {
  mapping::ModelSpec m = mapping::model_preset("mixtral-8x7b");
  mapping::AnalyticalHardware hw = mapping::testing::line_hardware(4);
  methods::common::Hierarchy h;
  mapping::RoutingTrace tr{1, 4, 1, 4, "line"};
  LineCase() {
    m.experts = 4;
    m.top_k = 1;
    m.moe_layers = 1;
    m.dense_layers = 0;
    h = methods::common::make_hierarchy(hw.topology, 0);
    const int choice[4] = {3, 0, 1, 2};
    for (size_t t = 0; t < 4; ++t) tr.mutable_experts_of(0, t)[0] = static_cast<uint16_t>(choice[t]);
  }
};

TEST(HybridLayer, DomainCopiesServeTokensAtTheSameOffsetByHand) {
  const LineCase c;
  const DomainLayout d = make_layout(c.h, levels_of(c.h), {2});  // boxes {0, 1} and {2, 3}
  EXPECT_EQ(d.box, 2);
  EXPECT_EQ(d.box_of[2], (std::vector<int>{2, 3}));
  const mapping::Placement p = methods::common::ep_by_rank(c.m, c.h, "ep", "t");
  const mapping::Groups g = mapping::make_groups(c.hw.topology, 1);
  const ServedDispatch planner(d.serve);
  const mapping::LayerPlan plan =
      mapping::plan_layer(c.m, mapping::physical_shares(p), 0, c.tr, 0, g, {4, 16}, &planner);
  // Token 0 (home 0) needs expert 3: domain {2, 3} at offset 0 is node 2. Token 1 (home 1) needs
  // expert 0: its own domain, served at home. Token 2 (home 2) needs expert 1: node 0. Token 3: home.
  const double tb = c.m.token_bytes();
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      const bool used = (a == 0 && b == 2) || (a == 2 && b == 0);
      EXPECT_DOUBLE_EQ(plan.dispatch[static_cast<size_t>(a) * 4 + b], used ? tb : 0.0) << a << "->" << b;
    }
  const int served[4] = {1, 0, 3, 2};  // node v computes expert served[v]
  for (int v = 0; v < 4; ++v) {
    ASSERT_EQ(plan.expert_work[static_cast<size_t>(v)].size(), 1u) << "node " << v;
    const mapping::ExpertWork& w = plan.expert_work[static_cast<size_t>(v)][0];
    EXPECT_EQ(w.expert, served[v]);
    EXPECT_DOUBLE_EQ(w.tokens, 1);
    EXPECT_DOUBLE_EQ(w.bytes, c.m.expert_bytes());  // each copy streams the whole expert
    EXPECT_DOUBLE_EQ(plan.routed_token_work[static_cast<size_t>(v)], 1);
  }
}

mapping::StrategyResult run_line(const LineCase& c, const HybridOptions& o) {
  mapping::Placement p = methods::common::ep_by_rank(c.m, c.h, "hybridep", "t");
  mapping::PolicyList pl;
  pl.emplace_back("hybridep", std::make_unique<HybridPolicy>(o));
  mapping::RunConfig cfg;
  cfg.shape = {4, 16};
  cfg.steps = 1;
  cfg.attn_tp = 1;
  flow::FlowExecutor ex(c.hw);
  return mapping::run_placement(ex, mapping::RunInputs{c.m, c.tr, c.hw, cfg}, p, pl);
}

using mapping::testing::total;

TEST(HybridPolicy, StreamGathersEachDomainsExpertsAndNoTokenIsLost) {
  const LineCase c;
  HybridOptions resident;
  resident.sed = {2};
  HybridOptions stream = resident;
  stream.stream = true;
  const mapping::StrategyResult r = run_line(c, resident), s = run_line(c, stream);
  for (const auto* x : {&r, &s}) EXPECT_DOUBLE_EQ(total(x->node_token_work), 4.0);
  // Stream: every node sends its expert to its one box mate, one hop away: 4 W on the wire, 4 W x 1 hop.
  const double W = c.m.expert_bytes();
  EXPECT_DOUBLE_EQ(s.policies["hybridep"]["allgather_bytes"].get<double>(), 4 * W);
  EXPECT_DOUBLE_EQ(r.policies["hybridep"]["allgather_bytes"].get<double>(), 0.0);
  const auto other = static_cast<size_t>(mapping::PhaseFamily::kOther);
  EXPECT_NEAR(total(s.family_link_bytes[other]) - total(r.family_link_bytes[other]), 4 * W, 1e-6 * W);
  // The experts wait for the gather: the stream run is slower than the resident one.
  EXPECT_GT(s.mean_tbt_s(), r.mean_tbt_s());
  // Decode-sized traffic (one 8 KB token per node) against 350 MB experts on 50 GB/s links: the
  // stream model keeps EP (p = 1) whether or not it counts the expert time.
  for (bool paper : {false, true}) {
    HybridOptions autos;
    autos.stream = true;
    autos.paper_model = paper;
    const mapping::StrategyResult a = run_line(c, autos);
    EXPECT_EQ(a.policies["hybridep"]["sed_chosen"], nlohmann::json({{"1", 1}})) << a.policies.dump();
    EXPECT_EQ(a.policies["hybridep"]["model"]["case"], "2.1");
    EXPECT_DOUBLE_EQ(a.policies["hybridep"]["allgather_bytes"].get<double>(), 0.0);
  }
  // Options: a bad mode or sed is an input error; resident needs sizes.
  EXPECT_THROW(hybrid_options({{"mode", "x"}}, "t"), mapping::InputError);
  // Resident without sizes parses (the strategy chooses them); the policy's factory refuses it.
  EXPECT_TRUE(hybrid_options({{"mode", "resident"}}, "t").sed.empty());
  EXPECT_THROW(hybrid_options({{"sed", "2,a"}, {"mode", "stream"}}, "t"), mapping::InputError);
  HybridOptions bad = resident;
  bad.sed = {3};
  EXPECT_THROW(run_line(c, bad), mapping::InputError);
}

TEST(FasterMoeShadow, ShadowsTheExpertsWhoseTokensWeighMoreThanTheirWeights) {
  // 5 nodes, 1-byte tokens, 10-byte experts; a share 4/5 of a token's trips is remote. Training: the
  // tokens cross 2 x 2 x t x 0.8 = 3.2 t bytes, a shadow costs 2 x 10 x 4 = 80 (broadcast, gradient):
  // worth it above 25 tokens. Inference: 1.6 t against 40, the same threshold.
  const std::vector<double> tokens = {50, 100, 10, 26};
  for (bool train : {true, false}) {
    EXPECT_EQ(choose_shadows(tokens, 1, 10, 5, 8, train), (std::vector<char>{1, 1, 0, 1})) << train;
    EXPECT_EQ(choose_shadows(tokens, 1, 10, 5, 1, train), (std::vector<char>{0, 1, 0, 0})) << train;
  }
  EXPECT_EQ(choose_shadows(tokens, 1, 100, 5, 8, true), (std::vector<char>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace nmpsim::methods::hybridep
