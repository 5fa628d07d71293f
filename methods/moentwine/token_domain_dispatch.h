// Full token domains in the layer (MoEntwine Sec. IV, docs/MODEL.md "Token domains in the layer") as a
// dispatch planner: before the dispatch every node gathers the tokens of its token ring (the TP ring,
// or HER's ring of same-position dies across wafers); a token then reaches an expert from its token
// ring's member in the domain of the expert's node, the partial result returns there, and the partials
// are reduce-scattered over the token ring after the combine. A placement names it in its "dispatch"
// field: {"name": "token-domains", "options": {"token_domain": [...], "token_rings": [...] (optional)}}.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/mapping/dispatch_planner.h"
#include "nmpsim/mapping/registry.h"

namespace nmpsim::methods::moentwine {

class TokenDomainDispatch : public mapping::DirectDispatch {
 public:
  /// `token_rings` (empty: the TP rings of `tp`) and each node's domain. Throws InputError naming
  /// `where` unless the token rings partition the nodes into equal rings and every domain holds
  /// exactly one member of every token ring.
  TokenDomainDispatch(const mapping::Groups& tp, std::vector<std::vector<int>> token_rings, std::vector<int> domain_of,
                      const std::string& where);
  int source(int home, int node) const override {
    return domain_member_[static_cast<size_t>(token_ring_of_[static_cast<size_t>(home)])]
                         [static_cast<size_t>(domain_of_[static_cast<size_t>(node)])];
  }
  const std::vector<std::vector<int>>* token_rings() const override { return &token_ring_; }
  const std::vector<int>& domain_of() const { return domain_of_; }

 private:
  std::vector<std::vector<int>> token_ring_;     ///< rings of the token all-gather, in ring order
  std::vector<int> token_ring_of_;               ///< each node's token ring
  std::vector<int> domain_of_;                   ///< each node's domain
  std::vector<std::vector<int>> domain_member_;  ///< [token ring][domain] -> its member there
};

/// The placement's "dispatch" field for these domains (token_rings only when they differ from the TP rings).
nlohmann::json token_domain_dispatch_json(const std::vector<int>& domain_of,
                                          const std::vector<std::vector<int>>& token_rings);
/// The registration of planner "token-domains".
mapping::PlannerFactory token_domain_planner();
/// The domain of every node of the placement's planner; empty when it has no token domains.
const std::vector<int>& domains_of(const mapping::DispatchPlanner* planner);

}  // namespace nmpsim::methods::moentwine
