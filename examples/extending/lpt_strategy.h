// Worked example (docs/EXTENDING.md): a placement strategy in its own folder.
// "ep-lpt": expert parallelism where whole experts go to nodes by greedy longest-processing-time on
// their profiled activation frequency (the hottest expert first, each to the least-loaded node), so
// that hot experts do not share a node. With more nodes than experts it is plain EP.
#pragma once

#include <vector>

#include "nmpsim/mapping/registry.h"

namespace nmpsim::methods::extending_example {

/// Greedy LPT: item i (weight w[i]) to the bin with the least weight so far, heaviest item first
/// (ties: the lower index). Returns the bin of every item.
std::vector<int> lpt_assign(const std::vector<double>& w, int bins);

class LptStrategy : public mapping::PlacementStrategy {
 public:
  std::string name() const override { return "ep-lpt"; }
  std::string description() const override {
    return "whole experts to nodes by greedy longest-processing-time on profiled frequency";
  }
  mapping::Placement build(const mapping::StrategyContext& ctx) const override;
};

}  // namespace nmpsim::methods::extending_example
