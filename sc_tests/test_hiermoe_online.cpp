// HierMoE's online expert swap (HierD-ES at run time): the tests of methods/hiermoe/online_swap.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "mapping_test_util.h"
#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/layer_runner.h"
#include "nmpsim/methods/common/hierarchy.h"
#include "nmpsim/methods/common/level_fit.h"
#include "nmpsim/methods/hiermoe/alltoall_policy.h"
#include "nmpsim/methods/hiermoe/dedup.h"
#include "nmpsim/methods/hiermoe/hier_alltoall.h"
#include "nmpsim/methods/hiermoe/online_swap.h"
#include "nmpsim/methods/hiermoe/swap.h"

namespace nmpsim::methods::hiermoe {
namespace {

using namespace nmpsim::methods::common;  // the hierarchy and its fitted costs
using mapping::testing::wafers;

TEST(HierOnlineSwap, SlotsFollowTheRanksAndBadLayoutsAreInputErrors) {
  // Two 2x2 wafers: ranks 0-3 on wafer 0 (row-major), 4-7 on wafer 1; 16 experts, 2 per node.
  const methods::common::Hierarchy h = methods::common::make_hierarchy(wafers(4, 2, 2, 2), 0);
  std::vector<std::vector<double>> rows(16, std::vector<double>(8, 0.0));
  // Expert e on the node of rank (15 - e) / 2: slots count down.
  for (int e = 0; e < 16; ++e) rows[e][static_cast<size_t>(h.node_at[static_cast<size_t>((15 - e) / 2)])] = 1;
  const std::vector<int> s = slots_from_rows(h, rows, "t");
  EXPECT_EQ(s[14], 0);  // rank 0 holds experts 14 and 15: by id, 14 then 15
  EXPECT_EQ(s[15], 1);
  EXPECT_EQ(s[12], 2);  // rank 1: 12 and 13
  EXPECT_EQ(s[0], 14);  // rank 7: 0 and 1
  EXPECT_EQ(s[1], 15);
  rows[0][static_cast<size_t>(h.node_at[0])] = 1;  // expert 0 on two nodes
  EXPECT_THROW(slots_from_rows(h, rows, "t"), mapping::InputError);
  // Four experts over 8 nodes: each split over two nodes, one sub-expert slot per node.
  std::vector<std::vector<double>> split(4, std::vector<double>(8, 0.0));
  for (int r = 0; r < 8; ++r)
    split[static_cast<size_t>(r / 2)][static_cast<size_t>(h.node_at[static_cast<size_t>(r)])] = 0.5;
  const std::vector<int> sub = slots_from_rows(h, split, "t");
  for (int i = 0; i < 8; ++i) EXPECT_EQ(sub[static_cast<size_t>(i)], i);
}

/// 16 experts, top-2, one MoE layer on two 2x2 wafers with a slow border; EP by rank (expert e on
/// rank e / 2). Every token chooses experts 0 (wafer 0) and 8 (wafer 1).
struct SwapCase {
  mapping::ModelSpec m = mapping::model_preset("mixtral-8x7b");
  mapping::AnalyticalHardware hw = mapping::testing::nmp_hardware(4, 2, 10, 100);
  methods::common::Hierarchy h;
  mapping::Placement p{"hier", 16, 8, 1};
  mapping::RoutingTrace tr{1, 16, 2, 512, "pairs"};
  SwapCase() {
    m.experts = 16;
    m.moe_layers = 1;
    m.dense_layers = 0;
    hw.topology = wafers(4, 2, 2, 2);
    hw.topology.links[2].gbytes_per_s = 10;
    h = methods::common::make_hierarchy(hw.topology, 0);
    for (int e = 0; e < 16; ++e) p.at(0, e, e / 2) = 1.0;
    for (int r = 0; r < 8; ++r)
      p.node_map[static_cast<size_t>(r)] = mapping::PhysicalNode(h.node_at[static_cast<size_t>(r)]);
    for (size_t t = 0; t < tr.tokens(); ++t) {
      tr.mutable_experts_of(0, t)[0] = 0;
      tr.mutable_experts_of(0, t)[1] = 8;
    }
  }
  mapping::StrategyResult run(double horizon) const {
    AlltoallOptions o;
    o.swap.every = 1;
    o.swap.horizon_steps = horizon;
    mapping::PolicyList pl;
    pl.emplace_back("hiermoe", std::make_unique<AlltoallPolicy>(o));
    mapping::RunConfig cfg;
    cfg.shape = {64, 256};
    cfg.steps = 3;  // step 0 observes, step 1 moves the swap, step 2 routes by it
    cfg.attn_tp = 4;
    flow::FlowExecutor ex(hw);
    return mapping::run_placement(ex, mapping::RunInputs{m, tr, hw, cfg}, p, pl);
  }
};

using mapping::testing::total;

TEST(HierOnlineSwap, ASwapThatPaysCoLocatesTheCoChosenExpertsAndMovesTwoExperts) {
  const SwapCase c;
  const mapping::StrategyResult kept = c.run(0), swapped = c.run(1e6);
  const nlohmann::json& k = kept.policies["hiermoe"]["online_swap"];
  const nlohmann::json& s = swapped.policies["hiermoe"]["online_swap"];
  // No horizon: nothing pays, the layout stays (and the rejection is counted).
  EXPECT_EQ(k["swaps"], 0);
  EXPECT_GE(k["rejected_by_amortisation"].get<int>(), 1);
  EXPECT_EQ(k["migration_bytes"].get<double>(), 0.0);
  // Long horizon: one swap puts experts 0 and 8 on one node (any other swap leaves both wafers or
  // both nodes busy); none after it lowers the predicted time.
  EXPECT_EQ(s["rounds"], 2);
  EXPECT_EQ(s["swaps"], 1);
  const double W = c.m.expert_bytes();
  EXPECT_DOUBLE_EQ(s["migration_bytes"].get<double>(), 2 * W);
  std::vector<int> node_of(16);
  for (int e = 0; e < 16; ++e) node_of[static_cast<size_t>(e)] = c.h.node_at[static_cast<size_t>(e / 2)];
  ASSERT_EQ(s["moves"].size(), 2u);
  for (const auto& mv : s["moves"]) {
    EXPECT_EQ(mv["step"], 1);
    EXPECT_EQ(node_of[mv["expert"].get<size_t>()], mv["from_node"].get<int>());
    node_of[mv["expert"].get<size_t>()] = mv["to_node"].get<int>();
  }
  EXPECT_EQ(node_of[0], node_of[8]);
  // The migration crosses between rank 0 (node 0) and rank 4 (node 2): 2 hops each way, on stream 1.
  const auto other = static_cast<size_t>(mapping::PhaseFamily::kOther);
  const double migrated = total(swapped.family_link_bytes[other]) - total(kept.family_link_bytes[other]);
  EXPECT_NEAR(migrated, 2 * W * c.hw.topology.hops(c.h.node_at[0], c.h.node_at[4]), 1e-3 * W);
  // Step 2 routes every token to one node: the tokens of wafer 1's homes no longer cross the border
  // for expert 0, so the MoE traffic of the run is lower.
  const auto comm = static_cast<size_t>(mapping::PhaseFamily::kMoeComm);
  EXPECT_LT(total(swapped.family_link_bytes[comm]), total(kept.family_link_bytes[comm]));
  double work = 0;
  for (double w : swapped.node_token_work) work += w;
  EXPECT_NEAR(work, 3 * 64.0 * 2, 1e-9);  // every token met both its experts in every step
}

TEST(HierOnlineSwap, OptionsAreCheckedAndSplitExpertsCannotSwap) {
  EXPECT_THROW(alltoall_options({{"swap_every", -1}}, "t"), mapping::InputError);
  EXPECT_THROW(alltoall_options({{"swap_gamma", 0.5}}, "t"), mapping::InputError);
  EXPECT_EQ(alltoall_options({{"swap_every", 4}}, "t").swap.every, 4);
  // Four experts over 8 nodes: the hierarchy takes them split, the online swap refuses.
  const methods::common::Hierarchy h = methods::common::make_hierarchy(wafers(4, 2, 2, 2), 0);
  std::vector<std::vector<double>> split(4, std::vector<double>(8, 0.0));
  for (int r = 0; r < 8; ++r)
    split[static_cast<size_t>(r / 2)][static_cast<size_t>(h.node_at[static_cast<size_t>(r)])] = 0.5;
  OnlineSwapOptions o;
  o.every = 1;
  const HierarchyCosts costs;
  const mapping::AnalyticalHardware hw = mapping::testing::reference_hardware();
  EXPECT_THROW(OnlineSwap(o, h, costs, {split}, 2, 1, 1, hw), mapping::InputError);
  o.every = 0;
  EXPECT_NO_THROW(OnlineSwap(o, h, costs, {split}, 2, 1, 1, hw));
}

}  // namespace
}  // namespace nmpsim::methods::hiermoe
