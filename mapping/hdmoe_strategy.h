// Builds HD-MoE placements: node balance (MILP per layer, hdmoe.h), then optionally link balance
// (a logical-to-physical node map, link_balance.h). Also samples (estimate, measured) pairs for
// fitting gamma of Eq. 3.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "mapping/hdmoe.h"
#include "mapping/link_balance.h"
#include "mapping/placement.h"

namespace nmpsim::mapping {

struct HdmoeOptions {
  int batch = 64;               ///< batch size the placement is optimised for
  double gamma = 1.0;           ///< Eq. 3 scaling
  double time_limit_s = 1.0;    ///< CBC limit per layer
  size_t max_groups = 32;       ///< co-activation groups kept exactly per layer
  int sampled_batches = 4;      ///< t_comp over this many batches of the profile (1: average frequencies)
  bool link_balance = true;     ///< false: node balance only ("hdmoe-node")
  std::string mapper = "bo";    ///< bo | sa | random
  int evaluations = 150;        ///< mapping cost evaluations
  int mapping_samples = 4;      ///< sampled batches (layers) in the mapping cost
  uint64_t seed = 1;
  double memory_capacity_bytes = 8.0 * (1ULL << 30);
  int attn_tp = 0;
  int context = 1024;
};

/// `profile` gives the activation statistics the placement is built from.
Placement make_hdmoe(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                     const HdmoeOptions& opt, MappingResult* mapping_out = nullptr);

/// The link-balance cost of a placement's shares (its node map is ignored): the dispatch and combine
/// traffic of opt.mapping_samples batches spread over the MoE layers, with logical node ids.
MappingCost mapping_cost(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                         const Placement& p, const HdmoeOptions& opt);

/// The node-balance problem of MoE layer `l` (exposed for tests and gamma fitting).
NodeBalanceProblem node_balance_problem(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                                        int l, const HdmoeOptions& opt);

}  // namespace nmpsim::mapping
