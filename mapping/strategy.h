// Placement strategies: offline algorithms that turn a model, a routing profile and the hardware into
// a Placement. Each registers under a name with a one-line description and documented options
// (mapping/registry.h); `--strategy` values, their help and run specs all come from the registry.
// docs/EXTENDING.md shows how to add one.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/mapping/analytical_hardware.h"
#include "nmpsim/mapping/placement.h"

namespace nmpsim::mapping {

class PlacementCache;

/// One documented option of a strategy or policy.
struct OptionDoc {
  std::string name;           ///< key in the options object, e.g. "gamma"
  std::string default_value;  ///< as shown in help, e.g. "1" or "the run's batch"
  std::string meaning;
};

/// A flag of `nmpsim place` (`--<flag> VALUE`) that sets option `option` of the strategies that
/// declare it, as `--strategy-opt NAME.<option>=VALUE` would (short spellings for common options).
struct FlagAlias {
  std::string flag;     ///< without the dashes, e.g. "gamma"
  std::string option;   ///< the option key, e.g. "gamma"
  std::string meaning;  ///< help text
};

/// Everything a strategy may build from.
struct StrategyContext {
  StrategyContext(const ModelSpec& m, const AnalyticalHardware& h, const RoutingTrace& p)
      : model(m), hw(h), profile(p) {}
  const ModelSpec& model;
  const AnalyticalHardware& hw;
  const RoutingTrace& profile;  ///< the activation statistics the placement is built from
  int batch = 64;               ///< the run's tokens per step (the most of any step: decode tokens plus prompt tokens)
  int context = 1024;
  /// The run's steps (decode, prefill or mixed): memory_demand(p, m, attn_tp, shape) checks a placement's
  /// capacity with the KV cache and activations the steps need. Strategies plan decode-shaped windows of
  /// `batch` tokens.
  RunShape shape;
  int attn_tp = 0;  ///< nodes per attention TP group (0 = all)
  double memory_capacity_bytes = 8.0 * (1ULL << 30);
  uint64_t seed = 1;
  nlohmann::json options = nlohmann::json::object();  ///< this strategy's resolved options
  std::string where = "strategy";                     ///< names the source in error messages
  PlacementCache* cache = nullptr;                    ///< solved placements, keyed by all their inputs (may be null)
  std::function<void(const std::string&)> note;       ///< progress lines (may be empty)

  void say(const std::string& line) const {
    if (note) note(line);
  }
  /// Every input a placement built from this context depends on, plus `strategy` and `options`.
  nlohmann::json cache_key(const std::string& strategy, const nlohmann::json& options) const;
  /// The cached placement for `key`, or `build()` stored under it.
  Placement cached(const nlohmann::json& key, const std::function<Placement()>& build) const;
};

class PlacementStrategy {
 public:
  virtual ~PlacementStrategy() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;  ///< one line
  virtual std::vector<OptionDoc> options() const { return {}; }
  /// Checks `given` (an object; unknown keys are errors naming `where`) and fills in the defaults.
  virtual nlohmann::json resolve_options(const nlohmann::json& given, const std::string& where,
                                         const StrategyContext& ctx) const;
  /// Builds the placement (ctx.options are resolved). Throws InputError on impossible inputs.
  virtual Placement build(const StrategyContext& ctx) const = 0;
  /// Slow strategies (solvers) are cached by the runner: same inputs, no second solve.
  virtual bool expensive() const { return false; }
  /// Lines `nmpsim place` prints about a placement this strategy built (its solver statistics).
  virtual std::vector<std::string> summary(const Placement&) const { return {}; }
  /// Flags of `nmpsim place` that set this strategy's options.
  virtual std::vector<FlagAlias> flag_aliases() const { return {}; }
  /// An extra file `nmpsim place --<flag> FILE` writes beside a placement this strategy built (e.g. a
  /// solver's convergence), from the placement and the context it was built in.
  struct ExtraOutput {
    std::string flag;     ///< without the dashes
    std::string meaning;  ///< help text
    std::function<std::string(const Placement& built, const StrategyContext& ctx)> text;
  };
  virtual std::vector<ExtraOutput> extra_outputs() const { return {}; }
};

}  // namespace nmpsim::mapping
