// Step times for `nmpsim serve`: each step shape the scheduler asks about is simulated once, with the
// placement, policies and fidelity of `nmpsim run` (run_experiment), and reused. Shapes are bucketed
// first (docs/MODEL.md "Serving": the grid and the error it costs), unless bucketing is off.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "nmpsim/apps/experiment.h"
#include "nmpsim/apps/serve.h"

namespace nmpsim::apps::serve {

/// The next value >= v on the grid: exact up to 4, then four points per octave (4, 5, 6, 7 x 2^k),
/// so a value is rounded up by less than 25%.
int bucket_up(int v);
/// The last value <= v on the grid.
int bucket_down(int v);
/// A shape with its three counts rounded up to the grid (0 stays 0).
StepShape bucketed(const StepShape& s);
/// The cost of shape `s` interpolated multilinearly between the grid points around it (at most 8,
/// each from `at_grid`); exact for a cost linear in each count between neighbouring grid points.
StepCost interpolated(const StepShape& s, const std::function<StepCost(const StepShape&)>& at_grid);
/// The run spec that simulates one step of shape `s` on top of `base` (hardware, model, strategy,
/// fidelity): decode (batch = decode tokens, context), prefill (one prompt of the prefill tokens) or
/// mixed (both, the prefill as one chunk).
RunSpec step_spec(const RunSpec& base, const StepShape& s);

class SimulatedSteps {
 public:
  SimulatedSteps(RunSpec base, const ExperimentOptions& opt, bool bucketing)
      : base_(std::move(base)), opt_(opt), bucketing_(bucketing) {}
  /// Seconds and joules of one step of shape `s`: interpolated between grid shapes (each simulated on
  /// first use), or with bucketing off simulated as it is.
  StepCost operator()(const StepShape& s);
  /// Shapes simulated by this object (not those taken from a step cache).
  size_t simulated() const { return simulated_; }
  /// One shape, simulated once.
  StepCost simulate(const StepShape& s);
  const std::map<StepShape, StepCost>& shapes() const { return cache_; }
  /// The shapes simulated so far with the run they belong to: {"key": the run spec and bucketing,
  /// "shapes": [[decode, prefill, context, seconds, joules], ...]} (a sweep's step cache).
  nlohmann::json to_json() const;
  /// Takes the shapes of `j` it does not have when `j` is of this run (same key; anything else,
  /// damaged or not, is ignored: the shapes are simulated again). Returns how many it took.
  size_t adopt(const nlohmann::json& j);
  /// What, besides the run spec, decides the step times: the resolved hardware and model (a file's
  /// contents, not its name). Part of the key.
  void set_identity(nlohmann::json identity) { identity_ = std::move(identity); }

 private:
  RunSpec base_;
  ExperimentOptions opt_;
  bool bucketing_;
  std::map<StepShape, StepCost> cache_;
  size_t simulated_ = 0;
  nlohmann::json identity_;
};

/// KV-cache capacity in tokens: every node's memory less the weights the run's placement puts on its
/// heaviest node (mapping::memory_demand), over the KV bytes a token takes in every layer. Throws
/// mapping::InputError when the weights alone do not fit.
int64_t kv_capacity_tokens(const PreparedExperiment& e);

}  // namespace nmpsim::apps::serve
