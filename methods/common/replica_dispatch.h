// Least-loaded dispatch to replicas (HD-MoE Sec. IV-D3, also MoEntwine's balancer): experts with full
// copies on several nodes send each token wholly to the copy whose node finishes its expert work
// soonest, counted in roofline seconds from the node's static expert work; the other experts keep
// their placement's shares. Tokens travel as the planner it wraps says (from home, or from a token
// domain's member). Plain C++; docs/MODEL.md "Least-loaded dispatch".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nmpsim/mapping/dispatch_planner.h"
#include "nmpsim/mapping/runtime_policy.h"

namespace nmpsim::methods::common {

class ReplicaDispatch : public mapping::DispatchPlanner {
 public:
  /// `full_copies[e]`: the physical nodes holding all of expert e (empty: none, e keeps its shares);
  /// `base`: whose source() and token_rings() the tokens follow (it must outlive this planner).
  ReplicaDispatch(const mapping::DispatchPlanner& base, std::vector<std::vector<int>> full_copies, double peak_flops,
                  double memory_bytes_per_s)
      : base_(base),
        full_copies_(std::move(full_copies)),
        peak_flops_(peak_flops),
        memory_bytes_per_s_(memory_bytes_per_s) {}
  void plan(const mapping::DispatchInputs& in, mapping::LayerPlan& p) const override;
  int source(int home, int node) const override { return base_.source(home, node); }
  const std::vector<std::vector<int>>* token_rings() const override { return base_.token_rings(); }

 private:
  bool replicated(int e) const { return !full_copies_[static_cast<size_t>(e)].empty(); }
  /// Tokens of each replicated expert per node, chosen least-loaded: [expert][node].
  std::vector<std::vector<double>> assign(const mapping::DispatchInputs& in, const mapping::LayerPlan& p) const;
  const mapping::DispatchPlanner& base_;
  std::vector<std::vector<int>> full_copies_;
  double peak_flops_, memory_bytes_per_s_;
};

/// Hands the layer of `in` least-loaded dispatch to `full_copies` over its current planner, kept in the
/// policy's `slot`; nothing when no expert has copies. InputError when another policy already replaced
/// the placement's planner (the message names both policies).
void hand_replicas(mapping::LayerInputs& in, std::optional<ReplicaDispatch>& slot,
                   std::vector<std::vector<int>> full_copies, const mapping::AnalyticalHardware& hw,
                   const std::string& policy);

}  // namespace nmpsim::methods::common
