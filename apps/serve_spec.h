// A serving run's options as data: `nmpsim serve`'s command line, or a sweep's "serve" object
// (docs/FORMATS.md "Serve spec"). Plain C++: the sweep spec reader (and its fuzz target) needs no
// simulator.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "nmpsim/apps/serve.h"

namespace nmpsim::apps::serve {

/// Ranges shared by the command line and the JSON form.
inline constexpr long long kMaxRequests = 1 << 22, kMaxTokens = 1 << 24, kMaxSeqs = 1 << 16, kMaxBudget = 1 << 20;

struct ServeConfig {
  SyntheticArrivals arrivals;               ///< unless trace_requests is given
  std::string trace_requests;               ///< a request trace CSV (docs/FORMATS.md), or "" for synthetic arrivals
  double slo_ttft_ms = 0, slo_tpot_ms = 0;  ///< 0: no limit
  int token_budget = 2048, max_seqs = 256;
  int64_t kv_tokens = 0;  ///< 0: from memory (kv_capacity_tokens)
  bool bucketing = true;
  /// Where the values came from: "" for the command line (errors name --options), else a file
  /// (errors name "FILE: serve.KEY").
  std::string where;
  /// How an error names the field `key` ("rate", "token_budget").
  std::string name(const std::string& key) const;
};
/// {"rate", "requests", "prompt_tokens", "output_tokens", "prompt_spread", "output_spread", "seed",
/// "trace_requests", "slo_ttft_ms", "slo_tpot_ms", "token_budget", "max_seqs", "kv_tokens",
/// "bucketing"}, every key optional; errors name `where` and "serve.KEY". Synthetic keys beside
/// trace_requests are an error.
ServeConfig serve_config_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json serve_config_to_json(const ServeConfig& c);
}  // namespace nmpsim::apps::serve
