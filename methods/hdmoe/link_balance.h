// HD-MoE Sec. IV-C2, link balance: map logical nodes to physical mesh nodes so that the all-to-all
// traffic of dispatch and combine congests the links least. The cost of a mapping is the flow-level
// communication time (flow_model.h) of the dispatch and combine traffic of sampled batches.
// Mappers: Bayesian optimisation (Gaussian-process surrogate over permutations, expected
// improvement, candidates made valid by an assignment step), simulated annealing, random search.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nmpsim/flow/flow_model.h"
#include "nmpsim/mapping/layer_plan.h"

namespace nmpsim::methods::hdmoe {

using mapping::AnalyticalHardware;
using mapping::LayerPlan;
using mapping::Topology;

/// The cost of a node map (logical -> physical), seconds. By default the flow-level traffic of sampled
/// batches, with destinations (dispatch) / sources (combine) as logical nodes.
class MappingCost {
 public:
  using Function = std::function<double(const std::vector<int>& node_map)>;
  /// `plans` were made with the identity node map, so their expert-side nodes are logical ids.
  MappingCost(const AnalyticalHardware& hw, const std::vector<LayerPlan>& plans);
  /// Any cost over maps of `nodes` nodes (the authors' per-layer cost: authors_link_balance.h).
  MappingCost(int nodes, Function f) : n_(nodes), f_(std::move(f)) {}
  /// Flow-level dispatch + combine seconds, summed over the samples, under `node_map` (logical -> physical).
  double operator()(const std::vector<int>& node_map) const { return f_(node_map); }
  int nodes() const { return n_; }

 private:
  int n_;
  Function f_;
};

struct MappingResult {
  std::vector<int> node_map;
  double cost = 0;
  double identity_cost = 0;
  std::vector<double> best_by_evaluation;  ///< convergence: best cost after each evaluation
  double seconds = 0;
  std::string method;
};

MappingResult map_random(const MappingCost& cost, int evaluations, uint64_t seed);
MappingResult map_annealing(const MappingCost& cost, int evaluations, uint64_t seed);
MappingResult map_bayesian(const MappingCost& cost, int evaluations, uint64_t seed, const Topology& t);

/// Minimum-cost assignment (Hungarian algorithm): row i gets column result[i]. `cost` is n x n.
std::vector<int> assign_min_cost(const std::vector<double>& cost, int n);

}  // namespace nmpsim::methods::hdmoe
