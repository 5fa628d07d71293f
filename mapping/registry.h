// The registries of placement strategies and runtime policies. Built-in baselines register through
// register_baselines(); each method folder under methods/ registers through its register_methods()
// (called by the generated methods::register_all, methods/CMakeLists.txt). No global state: whoever
// runs an experiment builds a Registry and passes it on.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/mapping/modes.h"
#include "nmpsim/mapping/run_result.h"
#include "nmpsim/mapping/runtime_policy.h"
#include "nmpsim/mapping/strategy.h"

namespace nmpsim::mapping {

struct PolicyFactory {
  std::string name;
  std::string description;  ///< one line
  std::vector<OptionDoc> options;
  bool cycle_only = false;  ///< needs cycle fidelity (e.g. its effect depends on contention)
  /// Checks `options` (unknown keys are errors naming `where`) and makes a fresh policy for one run.
  std::function<std::unique_ptr<RuntimePolicy>(const nlohmann::json& options, const std::string& where)> create;
  /// The options with defaults filled in (for the run spec written into summary.json).
  std::function<nlohmann::json(const nlohmann::json& options, const std::string& where)> resolve;
  /// Flags of `nmpsim run` that set its options; `enable_flag` (one of them) adds the policy to the run
  /// when given non-zero, and the others need it.
  std::vector<FlagAlias> flags = {};
  std::string enable_flag = {};
  /// Its statistics are also reported at the top level of a strategy's summary.json, under its name.
  bool stats_at_top = false;
};

/// What an accounting sees of a run: no simulation happens, the accounting charges time itself.
struct AccountingInputs {
  const ModelSpec& model;
  const RoutingTrace& trace;  ///< the run's whole trace
  const AnalyticalHardware& hw;
  const RunConfig& cfg;
  uint64_t seed = 1;
};

/// A way to charge time to a placement other than simulating it (`nmpsim run --accounting NAME`),
/// e.g. the formulas a paper's released code uses, to validate an implementation against its tables.
struct AccountingFactory {
  std::string name;
  std::string description;  ///< one line
  std::vector<OptionDoc> options;
  /// The options with defaults filled in; unknown keys and bad values are errors naming `where`.
  std::function<nlohmann::json(const nlohmann::json& options, const std::string& where)> resolve;
  /// The placement's result under this accounting: one step, every layer of the model in order.
  std::function<StrategyResult(const Placement& p, const AccountingInputs& in, const nlohmann::json& options)> account;
  /// Options whose value must name a strategy (registered, or one of the run's placements), or be
  /// "none" (checked once the run's strategies are known).
  std::vector<std::string> strategy_options = {};
  /// Charges decode steps only (prefill and mixed runs are refused before any placement is built).
  bool decode_only = true;
};

/// A dispatch planner a placement names in its "dispatch" field (mapping/dispatch_planner.h).
struct PlannerFactory {
  std::string name;
  std::string description;  ///< one line
  std::vector<OptionDoc> options;
  /// Checks `options` against the run's mesh and attention groups (errors name `where`) and makes the planner.
  std::function<std::unique_ptr<DispatchPlanner>(const nlohmann::json& options, const Topology& topology,
                                                 const Groups& groups, const std::string& where)>
      create;
};

/// A report on the hardware a method provides (`nmpsim hw --report NAME --report-opt KEY=VALUE`), e.g.
/// the hierarchy levels a method sees and their fitted costs.
struct HardwareReport {
  std::string name;
  std::string description;  ///< one line
  std::vector<OptionDoc> options;
  /// The report's text for `hw`; options are checked (errors name `where`).
  std::function<std::string(const AnalyticalHardware& hw, const nlohmann::json& options, const std::string& where)>
      report;
};

/// A tool a method provides to `nmpsim place` as `--<name> VALUE` (e.g. fitting a constant of its
/// cost model): it runs on the workload and hardware of the command line and prints its result.
struct PlacementTool {
  std::string name;         ///< also the flag
  std::string value_help;   ///< what VALUE is, e.g. "flow|cycle"
  std::string description;  ///< one line
  /// The tool's output. `ctx` holds the model, profile, hardware, run shape and seed (no strategy
  /// options); `cycle` makes a cycle-level executor on the hardware. Errors name `value`'s flag.
  std::function<std::string(const StrategyContext& ctx, const std::string& value, const ExecutorFactory& cycle)> run;
};

class Registry {
 public:
  /// Registers a strategy; a second one with the same name is a programming error (std::logic_error).
  void add(std::unique_ptr<PlacementStrategy> s);
  void add(PolicyFactory p);
  void add(AccountingFactory a);
  void add(PlannerFactory p);
  void add(HardwareReport r);
  void add(PlacementTool t);
  /// Adds a registered strategy to the default comparison of `nmpsim run` and `sweep` (in order).
  void add_default_strategy(const std::string& name);
  /// The default comparison, comma-separated ("tp,ep,cb,..." as registered).
  std::string default_strategies() const;
  const std::vector<PlacementTool>& placement_tools() const { return placement_tools_; }
  const PlannerFactory* planner(const std::string& name) const;  ///< null if unknown
  /// The dispatch planner placement `p` names (null when it names none: direct dispatch); InputError
  /// for an unknown planner or options that do not fit the mesh or `groups`.
  std::unique_ptr<DispatchPlanner> make_planner(const Placement& p, const Topology& topology,
                                                const Groups& groups) const;
  const HardwareReport* hardware_report(const std::string& name) const;  ///< null if unknown
  std::string describe_planners() const;
  std::string describe_hardware_reports() const;
  const AccountingFactory* accounting(const std::string& name) const;  ///< null if unknown
  std::vector<std::string> accounting_names() const;
  std::string describe_accountings() const;
  const PlacementStrategy* strategy(const std::string& name) const;  ///< null if unknown
  const PolicyFactory* policy(const std::string& name) const;        ///< null if unknown
  std::vector<std::string> strategy_names() const;                   ///< in registration order
  std::vector<std::string> policy_names() const;
  /// Help text: every strategy (or policy) with its description and options.
  std::string describe_strategies() const;
  std::string describe_policies() const;

 private:
  std::vector<std::unique_ptr<PlacementStrategy>> strategies_;
  std::vector<PolicyFactory> policies_;
  std::vector<AccountingFactory> accountings_;
  std::vector<PlannerFactory> planners_;
  std::vector<HardwareReport> hardware_reports_;
  std::vector<PlacementTool> placement_tools_;
  std::vector<std::string> default_strategies_;
};

/// TP, EP and hybrid compute-balanced (cb).
void register_baselines(Registry& r);

}  // namespace nmpsim::mapping
