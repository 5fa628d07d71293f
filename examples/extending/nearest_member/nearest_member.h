// docs/EXTENDING.md's dispatch-planner example: "nearest-member" dispatch. Before the dispatch every
// node gathers the tokens of its attention TP group (a ring all-gather over the TP rings); a token then
// travels to each node that works on it from the member of its group nearest to that node (fewest
// mesh hops, the lower id on a tie), and the partial result returns to that member, to be
// reduce-scattered over the ring after the combine. With one group over the whole mesh no token
// crosses the mesh for the experts at all; the price is the all-gather.
#pragma once

#include <vector>

#include "nmpsim/mapping/dispatch_planner.h"
#include "nmpsim/mapping/registry.h"

namespace nmpsim::methods::nearest_member {

class NearestMemberDispatch : public mapping::DirectDispatch {
 public:
  NearestMemberDispatch(const mapping::Topology& t, const mapping::Groups& groups);
  int source(int home, int node) const override {
    return nearest_[static_cast<size_t>(groups_.group_of[static_cast<size_t>(home)]) * nodes_ +
                    static_cast<size_t>(node)];
  }
  const std::vector<std::vector<int>>* token_rings() const override { return &groups_.ring; }

 private:
  mapping::Groups groups_;
  size_t nodes_;
  std::vector<int> nearest_;  ///< [group * nodes + node] -> the group's member nearest to node
};

/// The planner's registration ("nearest-member", no options).
mapping::PlannerFactory nearest_member_planner();
/// The folder's entry point (register.cpp): what methods::register_all() calls once it sits under methods/.
void register_methods(mapping::Registry& r);

}  // namespace nmpsim::methods::nearest_member
