// Builds HD-MoE placements: node balance (MILP per layer, node_balance.h), then link balance
// (a logical-to-physical node map, link_balance.h). gamma_fit.h fits Eq. 3 against simulation.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/mapping/placement.h"
#include "nmpsim/methods/hdmoe/candidate_selection.h"
#include "nmpsim/methods/hdmoe/link_balance.h"
#include "nmpsim/methods/hdmoe/node_balance.h"

namespace nmpsim::methods::hdmoe {

using mapping::Placement;

/// Link-balance search (Sec. IV-C2): Bayesian optimisation (the paper's), simulated annealing or random search.
enum class Mapper { kBayesian, kAnnealing, kRandom };
const char* mapper_name(Mapper m);  ///< "bo", "sa", "random"
/// Throws InputError naming `where` for anything but bo, sa, random.
Mapper parse_mapper(const std::string& text, const std::string& where);

struct HdmoeOptions {
  int batch = 64;             ///< batch size the placement is optimised for
  double gamma = 1.0;         ///< Eq. 3 scaling
  double time_limit_s = 1.0;  ///< CBC limit per layer
  size_t max_groups = 32;     ///< co-activation groups kept exactly per layer
  int sampled_batches = 4;    ///< t_comp over this many batches of the profile (1: average frequencies)
  /// Held-out batches of the profile on which each layer picks among the MILP's placement, TP, EP and
  /// CB, and on which link balance must beat the identity map (flow fidelity; 0: the paper's rule only).
  int selection_batches = 16;
  /// The MILP's coefficients as the authors' code sets them (FLOPs only with one matrix per expert,
  /// 4 bytes per element of traffic, expected loads of the whole profile) instead of ours: to compare
  /// our solver with theirs under their accounting (docs/MODEL.md).
  bool authors_objective = false;
  Mapper mapper = Mapper::kBayesian;
  /// Link balance's cost: false, one node map for the model against the flow-level link load of sampled
  /// batches (link_balance.h); true, a map per layer against the authors' store-and-forward simulation
  /// (authors_link_balance.h).
  bool authors_link_cost = false;
  int evaluations = 150;    ///< mapping cost evaluations
  int mapping_samples = 4;  ///< sampled batches (layers) in the mapping cost
  uint64_t seed = 1;
  double memory_capacity_bytes = 8.0 * (1ULL << 30);
  int attn_tp = 0;
  int context = 1024;
  /// The run's steps: in prefill and mixed runs the memory left for experts is what their KV cache and
  /// activations leave (decode: `batch` tokens over `context`).
  mapping::RunShape shape;
};

/// Node balance (Sec. IV-C1): per MoE layer, the MILP's placement or TP, whichever the model rates
/// better; then, with opt.selection_batches, per layer the fastest of that, TP, EP and CB on held-out
/// batches at flow fidelity; identity node map. `profile` gives the activation statistics. Named "hdmoe-node".
Placement make_node_balance(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                            const HdmoeOptions& opt);
/// Link balance (Sec. IV-C2) of a node-balance placement: the node map found by opt.mapper.
MappingResult link_balance(const Placement& node_balanced, const ModelSpec& m, const AnalyticalHardware& hw,
                           const RoutingTrace& profile, const HdmoeOptions& opt);
/// `node_balanced` with the node map of `mr`, named "hdmoe", the search's statistics in its solver JSON.
/// With opt.selection_batches, the map is kept only if the held-out batches run faster with it.
Placement with_link_balance(Placement node_balanced, const MappingResult& mr, const ModelSpec& m,
                            const AnalyticalHardware& hw, const RoutingTrace& profile, const HdmoeOptions& opt);
/// `linked` (a link-balanced placement with solver["link_balance"]) or, when opt.selection_batches > 0
/// and the held-out batches run slower with it, `identity` (its node-balance input) under linked's name
/// and solver record, with the held-out times and `kept` recorded.
Placement kept_if_faster(Placement linked, Placement identity, const ModelSpec& m, const AnalyticalHardware& hw,
                         const RoutingTrace& profile, const HdmoeOptions& opt);
/// The held-out batches of opt (empty first_tokens when opt.selection_batches is 0).
HeldOut held_out(const HdmoeOptions& opt, const RoutingTrace& profile);
/// Node balance, then link balance.
Placement make_hdmoe(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                     const HdmoeOptions& opt, MappingResult* mapping_out = nullptr);

/// The link-balance cost of a placement's shares (its node map is ignored): the dispatch and combine
/// traffic of opt.mapping_samples batches spread over the MoE layers, with logical node ids.
MappingCost mapping_cost(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                         const Placement& p, const HdmoeOptions& opt);

/// The node-balance problem of MoE layer `l` (exposed for tests and gamma fitting).
NodeBalanceProblem node_balance_problem(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                                        int l, const HdmoeOptions& opt);

}  // namespace nmpsim::methods::hdmoe
