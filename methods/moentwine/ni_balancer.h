// MoEntwine's NI-Balancer (Sec. V) and its baselines as one runtime policy, "moentwine-balancer":
// shadow slots hold replicas of hot experts; the tokens of a replicated expert are split among its
// holders; a load predictor and the trigger decide when to re-plan the replicas (Algorithm 1 or greedy
// EPLB); the weights move either staged in the windows where their links are cold (non-invasive),
// with inference paused (invasive), or for free (the reference that measures the exposed overhead).
// docs/MODEL.md "MoEntwine: balancer at run time".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nmpsim/mapping/registry.h"
#include "nmpsim/mapping/runtime_policy.h"
#include "nmpsim/methods/common/replica_dispatch.h"
#include "nmpsim/methods/moentwine/balancer.h"

namespace nmpsim::methods::moentwine {

enum class Planner { kTopology, kGreedy };
enum class Migration {
  kStaged,  ///< background stages: local ones in all-reduce windows, global ones in all-to-all windows
  kPaused,  ///< inference waits at the start of the step while every copy moves (invasive)
  kFree,    ///< replicas appear at once with no traffic (reference only)
};

struct BalancerOptions {
  Planner planner = Planner::kTopology;
  Migration migrate = Migration::kStaged;
  int slots = 1;              ///< shadow slots per device per layer
  int window = 8;             ///< predictor: mean of the last `window` steps
  double ema = 0;             ///< predictor: EMA weight of the newest step instead (0 = sliding mean)
  double alpha = 0.5;         ///< trigger: migrate when the sum over MoE layers of I_l exceeds alpha
  int beta = 0;               ///< trigger: at least beta steps since the last migration round
  double gain = 0.05;         ///< re-plan a layer only if the plan cuts its predicted peak by this share
  double segment_kib = 1024;  ///< staged: bytes a stage moves per op (a stage stops between segments)
};
/// Reads {"planner", "migrate", "slots", "window", "ema", "alpha", "beta", "gain", "segment_kib"} (all optional).
BalancerOptions balancer_options(const nlohmann::json& j, const std::string& where);
nlohmann::json to_json(const BalancerOptions& o);

class BalancerPolicy : public mapping::RuntimePolicy {
 public:
  explicit BalancerPolicy(BalancerOptions o) : opt_(o) {}
  void on_step_start(mapping::PolicyContext& ctx) override;
  void before_plan(mapping::PolicyContext& ctx, mapping::LayerInputs& in) override;
  void before_layer(mapping::PolicyContext& ctx, mapping::LayerSchedule& s) override;
  void after_phase(mapping::PolicyContext& ctx, mapping::LayerSchedule& s, uint64_t serial, int phase) override;
  /// Training: replicas are data-parallel copies: their gradients are all-reduced over the holders and
  /// every holder updates its copy.
  void before_backward_layer(mapping::PolicyContext& ctx, mapping::LayerSchedule& s,
                             mapping::BackwardLayer& b) override;
  void add_optimizer_parameters(const mapping::PolicyContext& ctx, std::vector<double>& params) override;
  nlohmann::json stats() const override;
  /// Staged windows would copy an expert's optimizer state while the step's update changes it: a
  /// training step migrates paused (at the step's start) or free.
  bool trains() const override { return opt_.migrate != Migration::kStaged; }
  std::string why_not_trains() const override {
    return "migrate=staged copies an expert's optimizer state while the step's update changes it; set migrate=paused "
           "or migrate=free";
  }

 private:
  struct Transfer {  ///< one replica on its way
    int moe_layer = 0, expert = 0, from = 0, to = 0;
    int after = -1;  ///< paused: the transfer of this round whose copy it copies (-1: an existing holder)
    std::vector<Stage> stages;
    size_t stage = 0;                  ///< the stage being moved
    double stage_left = 0;             ///< its bytes not yet sent
    mapping::OpRef last;               ///< the newest segment issued (the next one waits for it)
    std::vector<mapping::OpRef> open;  ///< segments of the window now open
  };
  void init(const mapping::PolicyContext& ctx);
  /// Re-plans the replicas of every layer if the trigger fires; returns the copies to make.
  std::vector<Transfer> replan(const mapping::PolicyContext& ctx);
  /// The plan's moves of MoE layer `ml` that are not serving yet: added to the serving set (free)
  /// or to `out` as transfers from the nearest holder (Algorithm 1) or the native one (greedy).
  void add_moves(const mapping::PolicyContext& ctx, int ml, const std::vector<Move>& moves, std::vector<Transfer>& out);
  void land_finished();
  /// Windows: 1 = all-reduce (local stages), 2 = all-to-all (global stages), 0 = none.
  static int window_kind(const mapping::Phase& p);
  void open_window(mapping::PolicyContext& ctx, mapping::LayerSchedule& s, int phase, bool global);
  void close_window(mapping::PolicyContext& ctx);
  void add_paused(mapping::PolicyContext& ctx, mapping::LayerSchedule& s);

  BalancerOptions opt_;
  std::optional<common::ReplicaDispatch> planner_;  ///< the current layer's, when replicas serve
  bool ready_ = false;
  std::vector<ExpertCopies> native_;   ///< per MoE layer
  std::vector<ExpertCopies> serving_;  ///< per MoE layer: natives and the replicas that landed
  LoadPredictor predictor_{0};
  std::vector<Transfer> moving_;  ///< the round in flight (staged), or this step's copies (paused)
  int steps_since_ = 1 << 20;
  bool paused_pending_ = false;
  uint64_t window_schedule_ = 0;
  int window_phase_ = -1;
  std::map<std::string, double> est_window_s_;  ///< by phase name: its last duration seen
  double last_phase_end_s_ = -1;                ///< when the newest foreground phase ended
  double drain_tail_s_ = 0;                     ///< time migration traffic ran past a step's last layer (in no TBT)
  // Statistics.
  int rounds_ = 0, planned_ = 0, landed_ = 0, evicted_ = 0, segments_ = 0, segments_cancelled_ = 0;
  double expert_bytes_ = 0;    ///< what one replica's copy moves (training: with its optimizer state)
  double replica_bytes_ = 0;   ///< bytes of every replica copied (staged: once it landed)
  double gradient_bytes_ = 0;  ///< training: bytes the replicas' gradient all-reduces sent
  /// Bytes x hops of migration traffic: staged stages inside / across domains, and paused copies.
  double link_bytes_local_ = 0, link_bytes_global_ = 0, link_bytes_paused_ = 0;
  std::vector<double> peak_to_mean_;  ///< per step: mean over MoE layers of max / mean device load
  std::vector<int> replicas_;         ///< per step: replicas serving
  double step_ratio_sum_ = 0;
  int step_layers_ = 0;
};

/// Registers "moentwine-balancer".
void register_balancer(mapping::Registry& r);

}  // namespace nmpsim::methods::moentwine
