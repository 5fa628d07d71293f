// One serving run (apps/serve_spec.h's options) on a run spec: the summary with power and area per
// design point (docs/MODEL.md "Serving", "Area and power").
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "nmpsim/apps/experiment.h"
#include "nmpsim/apps/serve.h"
#include "nmpsim/apps/serve_spec.h"
#include "nmpsim/apps/serve_steps.h"
#include "nmpsim/hw/cost_model.h"

namespace nmpsim::apps::serve {

/// The requests: the trace, or the synthetic arrivals.
std::vector<Request> config_requests(const ServeConfig& c);

/// The scheduler's knobs for this config on a prepared run (the KV capacity from memory unless given).
/// Throws UsageError / InputError naming the field.
SchedulerConfig scheduler_config(const ServeConfig& c, const PreparedExperiment& prepared);

/// Power and area of a serving run on its hardware (ServePower, apps/serve.h).
ServePower serve_power(const ServeRun& run, const ServeSummary& s, const hw::CostReport& cost);
nlohmann::json power_json(const ServePower& p, const hw::CostReport& cost);

/// What serving runs of one run spec share: the scheduler's knobs, the step times (simulated on first
/// use, the simulated steps' identity set for a step cache), the hardware's cost and a plot title.
struct ServeContext {
  SchedulerConfig scheduler;
  std::unique_ptr<SimulatedSteps> steps;
  hw::CostReport cost;
  std::string title;
};
ServeContext serve_context(const RunSpec& spec, const ServeConfig& c, const ExperimentOptions& opt);

/// One serving run of `spec` (one strategy) as `nmpsim serve` does it.
struct ServeOutcome {
  SchedulerConfig scheduler;
  ServeRun run;
  ServeSummary summary;
  hw::CostReport cost;
  ServePower power;
  size_t simulated_shapes = 0;
};
/// With `step_cache` (a file): the step times of an earlier run of the same run spec are read from it,
/// and every step time is written back to it (a serving sweep's points that differ only in their
/// serve options share them).
ServeOutcome serve_once(const RunSpec& spec, const ServeConfig& c, const ExperimentOptions& opt,
                        const std::string& step_cache = "");
/// The same with the scheduler, the step times and the cost already made (shared by several runs).
ServeOutcome serve_requests(const std::vector<Request>& requests, const ServeConfig& c, const SchedulerConfig& sched,
                            SimulatedSteps& steps, const hw::CostReport& cost);
/// summary.json of a run: summary_json's keys plus "power" (power_json).
nlohmann::json outcome_json(const ServeOutcome& o, const ServeConfig& c);

}  // namespace nmpsim::apps::serve
