// HierMoE's hierarchical expert swap, HierD-ES (Sec. IV): the duplicate-free counts of the two
// groups a swap of any two expert slots changes, by the O(T K E) incremental update of Fig. 8 (not
// E^2 recounts);
// the predicted time of HDd after each swap with the smooth-max of Eq. 11 (Eq. 8-9); the best swap
// (Eq. 10), applied greedily while it lowers the predicted time. Offline, from a routing profile.
// Plain C++. docs/MODEL.md "HierMoE: expert swap".
#pragma once

#include <functional>
#include <vector>

#include "nmpsim/methods/common/hierarchy.h"
#include "nmpsim/methods/hiermoe/dedup.h"

namespace nmpsim::methods::hiermoe {

/// Eq. 11: max(x) (sum_i (x_i / max(x))^gamma)^(1 / gamma); 0 for an all-zero x.
double smooth_max(const float* x, int n, double gamma);

/// Fig. 8's duplicate-free counts after every swap, for `groups` contiguous slot groups of routing
/// `r` given in slots: [a * E + b] is the tokens of slot a's group after swapping slots a and b (so
/// [b * E + a] is b's group's; a swap changes no other group). O(T K E).
std::vector<float> swap_counts(const Routing& r, int groups);

struct SwapChoice {
  int a = -1, b = -1;    ///< slots to swap (-1: none lowers the predicted time)
  double seconds = 0;    ///< predicted t_d after the swap (smooth-max)
  double current_s = 0;  ///< predicted t_d now (smooth-max)
};
/// Eq. 8-10 for dimension d: the swap of least predicted time.
SwapChoice best_swap(const common::Hierarchy& h, const HierarchyCosts& c, const Routing& r, int d, double token_bytes,
                     double gamma);

/// Greedy HierD-ES on one layer: `slot_of[e]` is expert e's slot (updated); applies up to
/// `max_swaps` best swaps while each lowers the predicted time at d (Eq. 6 at the start) and
/// `accept` (when given) takes it; returns the swaps made, each also appended to `made` if given.
int expert_swap(const common::Hierarchy& h, const HierarchyCosts& c, const Routing& experts, double token_bytes,
                double gamma, int max_swaps, std::vector<int>& slot_of,
                const std::function<bool(const SwapChoice&)>& accept = {}, std::vector<SwapChoice>* made = nullptr);

}  // namespace nmpsim::methods::hiermoe
