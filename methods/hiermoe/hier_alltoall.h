// A hierarchical all-to-all (HierMoE's HDd-AlltoAll, Sec. III) as real messages: a token travels
// inter level by inter level to the node at its relay's position in every sibling group that holds
// one of its experts (one copy per destination group with deduplication, one per expert without: the
// 2DH baseline), then inside its finest group to the expert nodes; partial results come back the same
// way, summed at every relay. Plain C++. docs/MODEL.md "Hierarchical all-to-all".
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nmpsim/mapping/dispatch_planner.h"
#include "nmpsim/methods/common/hierarchy.h"

namespace nmpsim::methods::hiermoe {

using common::Hierarchy;
using mapping::ExchangeStage;

/// The stages of HDd (d > 1: inter levels 1..d-1 of `h`, then the intra-level-(d-1) all-to-all) for
/// tokens at `home` whose experts sit on `dest` (per token: (node, experts of the token on it)). One
/// copy per destination group with deduplication, one per expert without (the 2DH baseline).
/// token_bytes: one hidden state; hidden: adds per partial summed.
std::vector<ExchangeStage> hierarchical_stages(const Hierarchy& h, int d, bool dedup, const std::vector<int>& home,
                                               const std::vector<std::vector<std::pair<int, int>>>& dest,
                                               double token_bytes, double hidden);

/// The hierarchical all-to-all as a dispatch planner: the direct plan's expert work, with its flat
/// dispatch and combine replaced by the stages of HDd. d = 1 is the direct dispatch.
class HierarchicalDispatch : public mapping::DispatchPlanner {
 public:
  HierarchicalDispatch(const Hierarchy& h, int dimensions, bool dedup) : h_(&h), d_(dimensions), dedup_(dedup) {}
  void plan(const mapping::DispatchInputs& in, mapping::LayerPlan& p) const override;

 private:
  const Hierarchy* h_;
  int d_;
  bool dedup_;
};

}  // namespace nmpsim::methods::hiermoe
