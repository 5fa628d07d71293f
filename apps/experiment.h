// The one library function behind `nmpsim run` (and the sweep command): a run spec in, results out.
// prepare_experiment() loads and checks everything and builds the placements (strategies from the
// registry, solved placements from the cache); run_prepared() simulates every placement at the spec's
// fidelity. Cycle fidelity elaborates a SystemC model, which SystemC allows once per process.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nmpsim/apps/run_report.h"
#include "nmpsim/apps/run_spec.h"
#include "nmpsim/hw/hardware_spec.h"
#include "nmpsim/mapping/placement_cache.h"
#include "nmpsim/mapping/registry.h"
#include "nmpsim/mapping/runtime_policy.h"
#include "nmpsim/noc/pin_mesh.h"

namespace nmpsim::apps {

/// The largest machine an MoE run or placement takes (per-layer traffic matrices are nodes x nodes).
inline constexpr int kMaxRunNodes = 4096;

struct ExperimentOptions {
  const mapping::Registry* registry = nullptr;   ///< strategies and policies (required)
  mapping::PlacementCache* cache = nullptr;      ///< solved placements (may be null)
  std::string vcd;                               ///< cycle fidelity: trace to this VCD file
  std::function<void(const std::string&)> note;  ///< progress notes (solves, cache hits)
  /// After every layer: (strategy, step, layer). At cycle fidelity it is called in the worker
  /// process that runs the strategy.
  std::function<void(const std::string&, int, int)> on_layer;
  /// Cycle fidelity: strategies simulated at once, each in its own worker process with its own
  /// hardware (0: as many as the host has cores). With a VCD, one process runs them all in turn.
  int jobs = 0;
  /// Cycle fidelity: the mesh's routers (empty: the engine's; else pin-level SystemC/RTL modules).
  noc::RouterFactory pin_routers;
  /// Cycle fidelity: write every delivered message of each strategy to
  /// DIR/messages-STRATEGY.csv (empty: none).
  std::string message_log_dir;
  /// Runs of this kind at once on the machine (a sweep's -j): each may plan on 1/N of the memory budget.
  int concurrent_runs = 1;
};

struct PreparedExperiment {
  RunSpec spec;  ///< complete: strategies listed with resolved options, fingerprints filled in
  hw::HardwareSpec hardware;
  mapping::ModelSpec model;
  mapping::RoutingTrace trace;
  mapping::RoutingTrace profile;  ///< what the strategies build from: the trace, or its first profile_tokens
  mapping::RunConfig cfg;
  std::vector<mapping::Placement> placements;  ///< one per spec.strategies entry
};

/// Loads, checks and builds everything; throws InputError (one line, naming the field) on bad input.
PreparedExperiment prepare_experiment(const RunSpec& spec, const ExperimentOptions& opt);

/// The context the strategies of a prepared experiment build in (no strategy options yet).
mapping::StrategyContext strategy_context(const PreparedExperiment& e, const mapping::AnalyticalHardware& ah,
                                          const ExperimentOptions& opt, const mapping::RoutingTrace& profile);

/// What check_experiment keeps between calls (by the specs of what it loaded).
struct InputMemo {
  std::map<std::string, std::pair<hw::HardwareSpec, mapping::AnalyticalHardware>> hardware;
  std::map<std::string, mapping::ModelSpec> models;
  std::map<std::string, size_t> trace_tokens;            ///< a trace file's tokens, by file and model
  std::set<std::string> groups;                          ///< hardware and attention group sizes checked
  std::map<std::string, mapping::Placement> placements;  ///< placement files, by path
};
/// Everything prepare_experiment checks but nothing it builds: hardware, model, trace (a file read
/// once per memo, a synthetic one not generated), memory, groups, policies, strategies (registered,
/// with options they accept, or placement files that fit). A sweep calls it for every point before
/// the first runs. Throws InputError as prepare_experiment does.
void check_experiment(const RunSpec& spec, const ExperimentOptions& opt, InputMemo& memo);
/// Simulates every placement; one StrategyReport per placement, in order.
std::vector<StrategyReport> run_prepared(const PreparedExperiment& e, const ExperimentOptions& opt);
/// One line per likely unintended setup seen in the results (e.g. a compute start-up that is more than
/// half of a phase per layer: fixed costs dominate and the placements barely matter).
std::vector<std::string> setup_warnings(const PreparedExperiment& e, const std::vector<StrategyReport>& reports);
/// Flow fidelity's dynamic energy from the run's counters (docs/MODEL.md "Energy per token"): DRAM
/// bytes x (array + interface) pJ/bit plus one activation per row, link payload bits x the link
/// level's pJ/bit per hop, FLOPs x pJ/FLOP.
EnergyPj flow_energy(const hw::HardwareSpec& hw, const mapping::StrategyResult& r);
/// (compute static + memory background) W x nodes x the run's simulated time (every step's TBT), pJ.
double static_energy_pj(const hw::HardwareSpec& hw, const mapping::StrategyResult& r);

struct Experiment {
  PreparedExperiment prepared;
  std::vector<StrategyReport> reports;
};
Experiment run_experiment(const RunSpec& spec, const ExperimentOptions& opt);

/// What the reports need of the experiment's steps: its shape and, for training, its layers, the model
/// FLOPs of a step (3x the forward) and the nodes' peak FLOP/s together.
RunSteps run_steps(const PreparedExperiment& e);

/// summary.json: {"spec": complete spec, "config": headline settings, "strategies": {name: results}}.
/// With `registry`, the statistics of policies registered with stats_at_top are also at the top of
/// each strategy's entry.
nlohmann::json summary_json(const PreparedExperiment& e, const std::vector<StrategyReport>& reports,
                            const mapping::Registry* registry = nullptr);

}  // namespace nmpsim::apps
