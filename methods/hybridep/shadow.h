// FasterMoE's dynamic shadowing (He et al., "FasterMoE", PPoPP 2022, Sec. 4), a baseline of HybridEP's
// Table V, as the runtime policy "fastermoe-shadow": after each layer's gate, the experts whose
// tokens would cost more to send than their weights are broadcast to every node ("shadowed"), and
// every token of a shadowed expert is computed at its home; in a training step each shadow's
// gradient is reduced to the expert's owner. What we rebuilt and left out: methods/hybridep/README.md
// "Baselines". Plain C++.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/mapping/dispatch_planner.h"
#include "nmpsim/mapping/registry.h"
#include "nmpsim/mapping/runtime_policy.h"

namespace nmpsim::methods::hybridep {

/// Direct dispatch, except that a token's shadowed expert (`shadowed[e]`) is computed at the token's
/// home, which holds the whole expert (its shadow). `shadowed` must outlive the planner.
class ShadowDispatch : public mapping::DispatchPlanner {
 public:
  explicit ShadowDispatch(const std::vector<char>& shadowed) : shadowed_(&shadowed) {}
  void plan(const mapping::DispatchInputs& in, mapping::LayerPlan& p) const override;

 private:
  const std::vector<char>* shadowed_;
};

/// The shadowing rule: expert e is shadowed when its tokens' bytes over the network in both passes
/// (dispatch and combine, forward and backward: 4 x the remote tokens x the token's bytes) exceed its
/// weights' (broadcast in the forward, gradient reduced in the backward: 2 x P_E x (N - 1)), at most
/// `max_shadows` experts, the most popular first. `tokens[e]`: the layer's tokens of expert e; a
/// share (N - 1) / N of them is remote. Returns the flags.
std::vector<char> choose_shadows(const std::vector<double>& tokens, double token_bytes, double expert_bytes, int nodes,
                                 int max_shadows, bool train);

/// Registers the policy "fastermoe-shadow".
void register_shadow_policy(mapping::Registry& r);

}  // namespace nmpsim::methods::hybridep
