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

#include "mapping/modes.h"
#include "mapping/run_result.h"
#include "mapping/runtime_policy.h"
#include "mapping/strategy.h"

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
};

class Registry {
 public:
  /// Registers a strategy; a second one with the same name is a programming error (std::logic_error).
  void add(std::unique_ptr<PlacementStrategy> s);
  void add(PolicyFactory p);
  void add(AccountingFactory a);
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
};

/// TP, EP and hybrid compute-balanced (cb).
void register_baselines(Registry& r);

}  // namespace nmpsim::mapping
