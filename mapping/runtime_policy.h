// Runtime policies: firmware-like decisions made while a placement runs (HD-MoE's pre-broadcast,
// balancers, expert swaps, prefetches). A policy sees the run through PolicyContext and acts through
// its hooks: it may change how a layer routes tokens (before_plan: its rows, or a DispatchPlanner of
// its own, mapping/dispatch_planner.h), add operations to a layer's
// schedule (before_layer, after_phase) and reports its own statistics. The same hooks run at both
// fidelities; docs/EXTENDING.md shows how to write one.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "nmpsim/mapping/analytical_hardware.h"
#include "nmpsim/mapping/dispatch_planner.h"
#include "nmpsim/mapping/executor.h"
#include "nmpsim/mapping/layer_plan.h"
#include "nmpsim/mapping/run_result.h"
#include "nmpsim/mapping/timeline.h"

namespace nmpsim::mapping {

struct RunConfig {
  RunShape shape;
  int steps = 4;
  int attn_tp = 0;          ///< nodes per attention TP group, 0 = all nodes
  TimelineWindow timeline;  ///< the step and layers whose events go to StrategyResult::timeline (none by default)
  int micro_batches = 1;    ///< each step's requests in this many micro-batches whose layers interleave
  int moe_chunks = 1;       ///< each MoE block (dispatch, experts, combine) in this many token chunks (Tutel)
  size_t first_token = 0;   ///< step s uses the trace tokens after those of steps 0..s-1 (shape.tokens(s) each)
};

/// What a policy sees of the run.
struct PolicyContext {
  const ModelSpec& model;
  const RoutingTrace& trace;
  const AnalyticalHardware& hw;
  const RunConfig& cfg;
  const Groups& groups;
  /// The placement's shares on physical nodes: [moe layer][expert][node].
  const std::vector<std::vector<std::vector<double>>>& shares;
  Executor& executor;  ///< now_s(), tracker().done(OpRef), cancel(OpRef)
  int step = 0;
  int layer = 0;  ///< current layer, 0-based over all layers (dense ones first); a training step's optimizer: layers()
  size_t first_token = 0;                    ///< the step's first trace token
  uint64_t schedule = 0;                     ///< serial number of the current layer's schedule (for OpRefs)
  double layer_start_s = 0;                  ///< when the current layer started
  const LayerRecord* previous = nullptr;     ///< the record of the step's previous schedule (null for the first)
  const StrategyResult* result = nullptr;    ///< phase table of `previous`
  const DispatchPlanner* planner = nullptr;  ///< the placement's dispatch planner (direct if it has none)
  int moe_layer() const { return layer - model.dense_layers; }
  int tokens = 0;  ///< tokens of the current step (decode: the batch; prefill and mixed: with the prompt tokens)
  int step_tokens() const { return tokens; }
};

/// How the current layer routes tokens; before_plan may change it.
struct LayerInputs {
  /// The layer's shares [expert][node] when a policy moved experts (e.g. an online swap); empty: the
  /// placement's.
  std::vector<std::vector<double>> rows;
  /// Plans the routed part of the layer: the placement's planner (RunInputs::planner, else direct
  /// dispatch) unless a policy hands the layer its own (which must outlive the layer's planning).
  const DispatchPlanner* planner = nullptr;
  /// The policy that replaced the placement's planner ("" while it is the placement's): a second
  /// policy that would replace it refuses the combination with a one-line error naming both.
  std::string planner_from;
};

/// A training step's backward of one layer, as a policy may extend it (docs/MODEL.md "Training step").
struct BackwardLayer {
  int grad_sync_phase = -1;  ///< the layer's gradient synchronisation (background stream 1)
  DepList gradients_done;    ///< the backward chains' ends: the layer's weight gradients are complete
  /// The optimizer waits for these ops: append the ends of every collective added.
  std::vector<OpId>* sync_joins = nullptr;
};

class RuntimePolicy {
 public:
  virtual ~RuntimePolicy() = default;
  virtual void on_step_start(PolicyContext&) {}
  virtual void before_plan(PolicyContext&, LayerInputs&) {}
  /// May add operations (and phases, and dependencies of existing ops) to the layer's schedule.
  virtual void before_layer(PolicyContext&, LayerSchedule&) {}
  /// Called when a phase of schedule `serial` ends (any schedule still running); may add operations to it.
  virtual void after_phase(PolicyContext&, LayerSchedule&, uint64_t /*serial*/, int /*phase*/) {}
  /// Training: before the backward of layer ctx.layer runs (its schedule built; ctx.schedule its
  /// serial). A policy whose copies computed gradients reduces them here, on `b.grad_sync_phase`.
  virtual void before_backward_layer(PolicyContext&, LayerSchedule&, BackwardLayer&) {}
  /// Training: parameters node v's optimizer updates beyond its shares of the placement (copies the
  /// policy keeps there); `params` is by physical node. Called once per step, before the optimizer.
  virtual void add_optimizer_parameters(const PolicyContext&, std::vector<double>& /*params*/) {}
  /// Training: before the step's optimizer schedule runs; `adam` holds each node's update op (-1:
  /// none). What is added after an update moves the updated weights and optimizer state.
  virtual void before_optimizer(PolicyContext&, LayerSchedule&, const std::vector<OpId>& /*adam*/) {}
  /// Own statistics, reported under "policies": {"<name>": ...} in summary.json.
  virtual nlohmann::json stats() const { return nlohmann::json::object(); }
  /// Whether it may run in a training step (docs/MODEL.md "Training step"): a policy that acts only
  /// through the layer's plan (before_plan) is mirrored by the backward; one that adds operations,
  /// keeps copies or moves weights says how they train through the three hooks above.
  virtual bool trains() const { return false; }
  /// Why not, for the one-line error when trains() is false (how to configure it so it trains, if it can).
  virtual std::string why_not_trains() const { return "it acts on inference steps only"; }
};

using PolicyList = std::vector<std::pair<std::string, std::unique_ptr<RuntimePolicy>>>;

}  // namespace nmpsim::mapping
