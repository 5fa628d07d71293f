// A hierarchical all-to-all (HierMoE's HDd-AlltoAll, Sec. III) as real messages: a token travels
// inter level by inter level to the node at its relay's position in every sibling group that holds
// one of its experts (one copy per destination group with deduplication, one per expert without: the
// 2DH baseline), then inside its finest group to the expert nodes; partial results come back the same
// way, summed at every relay. Plain C++. docs/MODEL.md "Hierarchical all-to-all".
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "mapping/hierarchy.h"

namespace nmpsim::mapping {

/// How a layer's dispatch runs: `dimensions` d = 1 is the flat all-to-all; d > 1 uses inter levels
/// 1..d-1 of `hierarchy`, then the intra-level-(d-1) all-to-all.
struct HierDispatch {
  const Hierarchy* hierarchy = nullptr;
  int dimensions = 1;
  bool dedup = true;
};

/// One stage: its messages [src * nodes + dst] both ways, and the FLOPs each node spends summing the
/// partials it receives in the combine.
struct HierStage {
  std::string name;  ///< "inter_<level>" or "intra"
  std::vector<double> dispatch, combine, reduce_flops;
};

/// The stages of HDd for tokens at `home` whose experts sit on `dest` (per token: (node, experts of
/// the token on it)). token_bytes: one hidden state; hidden: adds per partial summed.
std::vector<HierStage> hierarchical_stages(const Hierarchy& h, int d, bool dedup, const std::vector<int>& home,
                                           const std::vector<std::vector<std::pair<int, int>>>& dest,
                                           double token_bytes, double hidden);

}  // namespace nmpsim::mapping
