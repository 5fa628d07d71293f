// HD-MoE's dynamic part (Sec. IV-D) as a runtime policy: after the gate of MoE layer l, predict layer
// l + 1's expert loads, pick the experts to pre-broadcast to the least-loaded nodes (Eq. 13 priority,
// Eq. 17 count, Eq. 18 chunk) and stream them on a background stream; in layer l + 1, experts whose
// copies have landed get least-loaded dispatch (Sec. IV-D3). docs/MODEL.md "Dynamic pre-broadcast".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nmpsim/mapping/registry.h"
#include "nmpsim/mapping/runtime_policy.h"
#include "nmpsim/methods/common/replica_dispatch.h"
#include "nmpsim/methods/hdmoe/prebroadcast_admission.h"

namespace nmpsim::methods::hdmoe {

/// Where the next layer's expert loads come from.
enum class Predictor {
  kPrevious,  ///< the current layer's routing of the same batch
  kTrace,     ///< the trace's true counts, blended with the trace-wide average by `accuracy`
};
const char* predictor_name(Predictor p);
Predictor parse_predictor(const std::string& text, const std::string& where);

/// Which broadcasts go out.
enum class Admission {
  kFlow,    ///< those whose predicted saving exceeds their cost on the flow model of the layer (ours)
  kWindow,  ///< as many as fit in the previous layer's latency by Eq. 17's alpha-beta bound (the paper)
};
const char* admission_name(Admission a);
Admission parse_admission(const std::string& text, const std::string& where);

struct PrebroadcastOptions {
  int experts = 2;  ///< at most this many experts per layer
  int targets = 4;  ///< copies go to this many least-loaded nodes (0 = every node)
  Predictor predict = Predictor::kPrevious;
  double accuracy = 1.0;  ///< kTrace: weight of the true frequencies
  Admission admit = Admission::kFlow;
};
/// Reads {"experts", "targets", "predict", "accuracy", "admit"} (all optional; unknown keys are errors).
PrebroadcastOptions prebroadcast_options(const nlohmann::json& j, const std::string& where);
nlohmann::json to_json(const PrebroadcastOptions& o);

class PrebroadcastPolicy : public mapping::RuntimePolicy {
 public:
  explicit PrebroadcastPolicy(PrebroadcastOptions o) : opt_(o) {}
  void on_step_start(mapping::PolicyContext& ctx) override;
  void before_plan(mapping::PolicyContext& ctx, mapping::LayerInputs& in) override;
  void before_layer(mapping::PolicyContext& ctx, mapping::LayerSchedule& s) override;
  void after_phase(mapping::PolicyContext& ctx, mapping::LayerSchedule& s, uint64_t serial, int phase) override;
  /// Training: the copies that served in a layer send their gradients of each piece back to the
  /// piece's owner (the broadcast transposed), which adds them before its update; copies are dropped.
  void before_backward_layer(mapping::PolicyContext& ctx, mapping::LayerSchedule& s,
                             mapping::BackwardLayer& b) override;
  nlohmann::json stats() const override;
  bool trains() const override { return true; }

 private:
  struct Pending {
    int expert = 0;
    std::vector<mapping::OpRef> ops;
    std::vector<int> holders;  ///< nodes that will hold the whole expert
    double saving_s = 0;       ///< predicted saving of this and the layer's earlier broadcasts
  };
  /// Predicted activation frequency of every expert of MoE layer `next`.
  std::vector<double> predict(const mapping::PolicyContext& ctx, int next) const;
  /// Every expert's time on one node for activation frequencies f (a roofline, as Eq. 1).
  std::vector<double> expert_seconds(const mapping::PolicyContext& ctx, const std::vector<double>& f) const;
  /// How much of the predicted saving was real so far (realised / predicted, in [0, 1]; 1 before any).
  double reliability() const;
  /// Up to `count` experts in Eq. 13's priority order, with their streams and cumulative savings.
  std::vector<BroadcastPlan> candidates(const mapping::PolicyContext& ctx, int count, double chunk) const;
  void issue(mapping::PolicyContext& ctx, mapping::LayerSchedule& s, uint64_t serial, int after_phase);

  PrebroadcastOptions opt_;
  std::optional<common::ReplicaDispatch> planner_;  ///< the current layer's, when broadcasts landed
  std::vector<std::vector<Pending>> pending_;       ///< per MoE layer of the current step
  /// Per MoE layer of the current step: the broadcasts that landed and served (expert, holders).
  std::vector<std::vector<std::pair<int, std::vector<int>>>> served_;
  uint64_t hook_schedule_ = 0;
  int hook_phase_ = -1;  ///< the phase before dispatch: broadcasts start when it ends
  int considered_ = 0, issued_ = 0, used_ = 0, cancelled_ = 0;
  double predicted_s_ = 0, realised_s_ = 0;  ///< savings of the broadcasts that landed, over the run
  double bytes_ = 0, gradient_bytes_ = 0;
};

/// Registers "hdmoe-prebroadcast".
void register_prebroadcast(mapping::Registry& r);

}  // namespace nmpsim::methods::hdmoe
