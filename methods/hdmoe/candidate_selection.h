// Robust node balance (HD-MoE second pass): the MILP optimises an estimate over a few sampled
// batches, so on its own it can lose to the baselines it could have picked. Here every candidate
// placement (the MILP's, TP, EP, hybrid compute-balanced) runs at flow fidelity on held-out batches
// of the profile, and each MoE layer keeps the candidate whose layer took least time there.
// Plain C++ (flow fidelity is the mapping layer's fluid model).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/flow/flow_model.h"
#include "nmpsim/mapping/placement.h"
#include "nmpsim/mapping/trace.h"

namespace nmpsim::methods::hdmoe {

struct HeldOut {
  int batch = 64;
  int context = 1024;
  int attn_tp = 0;
  std::vector<size_t> first_tokens;  ///< one decode step from each
};

/// `count` batch offsets spread over the profile, midway between the `trained` offsets the MILP
/// sampled (s * tokens / trained), so that the two sets differ whenever the profile is long enough.
std::vector<size_t> held_out_offsets(size_t profile_tokens, int batch, int trained, int count);

/// Seconds of each MoE layer of `p` (shares on physical nodes), summed over the held-out steps.
std::vector<double> held_out_layer_seconds(const mapping::Placement& p, const mapping::ModelSpec& m,
                                           const mapping::AnalyticalHardware& hw, const mapping::RoutingTrace& profile,
                                           const HeldOut& h);

struct Candidate {
  std::string name;
  const mapping::Placement* placement = nullptr;
};
struct Selection {
  mapping::Placement placement;              ///< per layer the chosen candidate's physical shares, identity node map
  std::vector<int> choice;                   ///< per MoE layer: index into the candidates
  std::vector<std::vector<double>> layer_s;  ///< [candidate][MoE layer], held-out seconds
  nlohmann::json to_json(const std::vector<Candidate>& candidates) const;
};
/// Per MoE layer, the candidate with the least held-out time (ties: the earlier candidate).
Selection select_per_layer(const std::vector<Candidate>& candidates, const mapping::ModelSpec& m,
                           const mapping::AnalyticalHardware& hw, const mapping::RoutingTrace& profile,
                           const HeldOut& h, const std::string& name);

}  // namespace nmpsim::methods::hdmoe
