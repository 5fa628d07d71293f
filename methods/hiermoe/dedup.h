// HierMoE's hierarchical token deduplication (Sec. III): duplicate-free token counts per expert group
// (Eq. 7), duplication rates (Table II and its closed form for uniform routing), the alpha-beta
// time of HDd-AlltoAll (Eq. 1-5) and the optimal dimension d* (Eq. 6, Algorithm 1). Plain C++.
// Experts are grouped contiguously: expert e belongs to group e / (E / g) of g groups, which is where
// a HierMoE placement puts it (expert blocks follow the hierarchical rank). docs/MODEL.md "HierMoE".
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nmpsim/methods/common/level_fit.h"

namespace nmpsim::methods::hiermoe {

/// The experts chosen by a batch's tokens: top_k ids per token.
struct Routing {
  int experts = 0, top_k = 0;
  std::vector<uint16_t> ids;  ///< [token * top_k + k]
  size_t tokens() const { return top_k ? ids.size() / static_cast<size_t>(top_k) : 0; }
};

/// Eq. 7: per group j of `groups` contiguous expert groups, the tokens selecting at least one of its experts.
std::vector<double> group_counts(const Routing& r, int groups);
/// 1 - (distinct groups a token selects) / K, averaged over tokens: the share of a token's K expert
/// copies that deduplication at `groups` groups saves.
double duplication_rate(const Routing& r, int groups);
/// The same for uniform routing (K distinct experts out of E, groups of E / R): closed form
/// 1 - R (1 - C(E - E/R, K) / C(E, K)) / K.
double uniform_duplication_rate(int experts, int top_k, int groups);

using common::Hierarchy;
using common::HierarchyCosts;
using common::LinkCost;

/// One all-to-all of HDd: over `groups` expert groups, with `fan` participants (Eq. 2, 4, 5).
struct HdTerm {
  int groups = 1;
  double fan = 1;
  LinkCost cost;
};
/// The all-to-all kinds of HDd in order: inter levels 1..d-1 (U[i] groups, U[i] / U[i-1] participants),
/// then the G node groups (G / U[d-1] participants; the flat cost for d = 1). t_d is the sum over them
/// of cost.seconds(fan x max(group counts) x M v).
std::vector<HdTerm> hd_terms(const common::Hierarchy& h, const HierarchyCosts& c, int d);
/// t_d of HDd-AlltoAll for this routing (Eq. 1-5); d = 1 is the flat all-to-all (Eq. 2); token_bytes = M v.
double hd_seconds(const common::Hierarchy& h, const HierarchyCosts& c, const Routing& r, int d, double token_bytes);
/// Eq. 6 (Algorithm 1): the d in 1..D of least t_d (1 unless some d > 1 is strictly faster).
int optimal_dimension(const common::Hierarchy& h, const HierarchyCosts& c, const Routing& r, double token_bytes);

}  // namespace nmpsim::methods::hiermoe
