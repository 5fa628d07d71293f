// A run specification: everything that determines an experiment's results (docs/FORMATS.md "Run
// spec"). `nmpsim run --spec FILE` reads one; every run writes its complete, resolved spec into
// summary.json under "spec", and rerunning that spec reproduces the results.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/mapping/modes.h"
#include "nmpsim/mapping/regime.h"
#include "nmpsim/mapping/trace.h"

namespace nmpsim::apps {

struct StrategySpec {
  static StrategySpec named(std::string n) {
    StrategySpec s;
    s.name = std::move(n);
    return s;
  }
  static StrategySpec file(std::string path) {
    StrategySpec s;
    s.placement_file = std::move(path);
    return s;
  }
  std::string name;  ///< a registered strategy; empty for a placement file
  nlohmann::json options = nlohmann::json::object();
  std::string placement_file;  ///< name empty: the placement JSON to run
  std::string fingerprint;     ///< placement file: if set, the file's contents must still match
};

struct PolicySpec {
  static PolicySpec named(std::string n) {
    PolicySpec p;
    p.name = std::move(n);
    return p;
  }
  std::string name;
  nlohmann::json options = nlohmann::json::object();
};

struct TraceSpec {
  std::string file;                         ///< empty: synthetic; else a vendored trace name or a path
  mapping::SyntheticTraceConfig synthetic;  ///< used when `file` is empty (layers/experts/top_k from the model)
  std::string fingerprint;                  ///< if set, the loaded trace must match it
};

struct RunSpec {
  nlohmann::json hardware = "nmp-4x8-5t50g";  ///< a preset name or a full description (object)
  /// A preset name or model JSON file (string), or a full model description (object, docs/FORMATS.md).
  nlohmann::json model = "mixtral-8x7b";
  double weight_bytes = 0, activation_bytes = 0;  ///< 0: the model's own
  TraceSpec trace;
  uint64_t profile_tokens = 0;  ///< strategies build from the trace's first N tokens (0: all of it)
  bool all_strategies = true;   ///< every registered strategy (then `strategies` is ignored)
  std::vector<StrategySpec> strategies;
  std::vector<PolicySpec> policies;                      ///< applied to every strategy's run
  mapping::StepKind phase = mapping::StepKind::kDecode;  ///< what every step carries
  int batch = 32;  ///< decode and mixed: decode tokens per step; prefill: requests per step; train: sequences
  int steps = 2;
  int context = 1024;      ///< decode and mixed: KV-cache length each decode token attends over
  int prompt_tokens = 0;   ///< prefill and mixed: tokens of each prompt; train: of each sequence
  bool recompute = false;  ///< train: recompute each layer's forward before its backward
  int prefill_chunk = 0;   ///< mixed: prompt tokens per step
  int micro_batches = 1;   ///< each step's requests in this many micro-batches whose layers interleave
  int moe_chunks = 1;      ///< each MoE block in this many token chunks (Tutel's pipelining)
  int attn_tp = 0;
  uint64_t first_token = 0;
  mapping::Fidelity fidelity = mapping::Fidelity::kCycle;
  /// Empty: simulate at `fidelity`; else a registered accounting charges time instead (e.g. a paper's
  /// released formulas), with its options.
  PolicySpec accounting;
  uint64_t seed = 1;  ///< seed of the synthetic trace and of randomised searches
};

/// Reads a spec; every field is optional (defaults above), unknown keys are errors naming `where`.
RunSpec run_spec_from_json(const nlohmann::json& j, const std::string& where);
/// A spec file, or a summary.json (its "spec").
RunSpec load_run_spec(const std::string& path);
nlohmann::json run_spec_to_json(const RunSpec& s);

}  // namespace nmpsim::apps
