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

/// Seconds of each MoE layer of `p` (shares on physical nodes) on each held-out step: [batch][layer].
std::vector<std::vector<double>> held_out_batch_layer_seconds(const mapping::Placement& p, const mapping::ModelSpec& m,
                                                              const mapping::AnalyticalHardware& hw,
                                                              const mapping::RoutingTrace& profile, const HeldOut& h);

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
/// How many standard errors of the paired per-batch difference a candidate must gain over the
/// reference to replace it (about 97% one-sided for a t-test on 16 batches).
constexpr double kSelectionZ = 2.0;
/// ... and the least gain, as a fraction of the reference's layer time. The held-out batches stand
/// for the run's only so far: a trace is a sequence of prompts, not independent draws. On Mixtral
/// 8x8 5/50 (reasoning, B = 128) EP's layer 28 was 4% faster than TP on 8 held-out batches (2.3
/// standard errors) and 4% slower over the whole trace (docs/MODEL.md "Robust choice among
/// candidates"; the default of 16 held-out batches is set by the same measurement).
constexpr double kSelectionMinGain = 0.01;

/// True when `challenger_s` beats `reference_s` (seconds on the same batches, paired) by more than
/// z standard errors of the mean difference and by more than min_gain of the reference's mean; with
/// one batch, the standard error is not tested.
bool clearly_faster(const std::vector<double>& challenger_s, const std::vector<double>& reference_s, double z,
                    double min_gain = 0);

/// Index of the candidate a layer keeps, from per_batch_s[candidate][batch]. reference < 0: the one
/// with the least total (ties: the earlier). Otherwise that one if it is clearly faster than
/// `reference` (clearly_faster), else `reference` (a slower candidate is never tested); a reference
/// beyond the candidates throws.
int choose_candidate(const std::vector<std::vector<double>>& per_batch_s, int reference, double z, double min_gain = 0);

/// Per MoE layer, choose_candidate over the held-out batches with kSelectionZ and kSelectionMinGain.
/// reference < 0: the least total time, whatever the spread.
Selection select_per_layer(const std::vector<Candidate>& candidates, const mapping::ModelSpec& m,
                           const mapping::AnalyticalHardware& hw, const mapping::RoutingTrace& profile,
                           const HeldOut& h, const std::string& name, int reference = -1);

}  // namespace nmpsim::methods::hdmoe
