// Link balance as the HD-MoE authors' released code runs it (data/reference/hdmoe/ACCOUNTING.md "Link
// balance"): per MoE layer its own device-to-cell map, found by Bayesian optimisation against the
// store-and-forward simulation of that layer's aggregation messages (authors_accounting.h), not one map
// for the model against the flow-level link load of sampled batches (link_balance.h). Selected with
// `hdmoe.link_cost=authors`. A placement has one node map, so each layer's map is applied to that
// layer's shares (P'[i, map[d]] = P[i, d]) and the node map stays the identity: attention, gates and
// collectives are placed as before, and every expert share lands where the layer's map puts it.
#pragma once

#include "nmpsim/mapping/placement.h"
#include "nmpsim/methods/hdmoe/hdmoe_strategy.h"

namespace nmpsim::methods::hdmoe {

/// Random aggregator draws averaged per evaluation, the same draws for every map of a layer (common
/// random numbers). The authors' objective is one draw per evaluation (a noisy objective).
inline constexpr int kAuthorsLinkDraws = 4;

/// The store-and-forward makespan of layer `l`'s aggregation messages at opt.batch, averaged over
/// kAuthorsLinkDraws fixed draws of the aggregators, with layer shares `P` ([expert * nodes + node])
/// moved by `map` (device -> cell). Seconds, one direction.
double authors_layer_comm_s(const std::vector<double>& P, const std::vector<int>& map, const ModelSpec& m,
                            const AnalyticalHardware& hw, const RoutingTrace& profile, int l, const HdmoeOptions& opt);

/// `node_balanced` (identity node map) with every non-TP layer's shares moved by its own map from
/// opt.mapper over opt.evaluations; named "hdmoe", the per-layer search in solver["link_balance"].
Placement with_authors_link_balance(Placement node_balanced, const ModelSpec& m, const AnalyticalHardware& hw,
                                    const RoutingTrace& profile, const HdmoeOptions& opt);

}  // namespace nmpsim::methods::hdmoe
