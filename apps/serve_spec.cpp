// A serving run's options as data (apps/serve_spec.h).
#include "nmpsim/apps/serve_spec.h"

#include <algorithm>

#include "nmpsim/base/json_fields.h"

namespace nmpsim::apps::serve {

std::string ServeConfig::name(const std::string& key) const {
  if (!where.empty()) return where + ": serve." + key;
  std::string dashed = key;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  return "--" + (key == "seed" ? std::string("serve-seed") : dashed);
}

namespace {
const char* const kSyntheticKeys[] = {"rate",          "requests",      "prompt_tokens", "output_tokens",
                                      "prompt_spread", "output_spread", "seed"};
}

ServeConfig serve_config_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object())
    throw base::InputError(where + ": serve: expected an object of serving options (docs/FORMATS.md \"Serve spec\")");
  const base::JsonFields f(j, where, "serve");
  ServeConfig c;
  c.where = where;
  SyntheticArrivals& a = c.arrivals;
  c.trace_requests = f.string("trace_requests", "");
  if (!c.trace_requests.empty())
    for (const char* k : kSyntheticKeys)
      if (f.has(k)) f.fail(k, "applies to synthetic arrivals, not trace_requests");
  a.rate_per_s = f.number_in("rate", 1e-9, 1e9, a.rate_per_s, "requests/s");
  a.requests = static_cast<int>(f.integer("requests", 1, kMaxRequests, a.requests));
  a.prompt_tokens = static_cast<int>(f.integer("prompt_tokens", 1, kMaxTokens, a.prompt_tokens));
  a.output_tokens = static_cast<int>(f.integer("output_tokens", 1, kMaxTokens, a.output_tokens));
  a.prompt_spread = f.number_in("prompt_spread", 0, 1, a.prompt_spread);
  a.output_spread = f.number_in("output_spread", 0, 1, a.output_spread);
  a.seed = static_cast<uint64_t>(f.integer("seed", 0, 1LL << 53, static_cast<long long>(a.seed)));
  if (a.requests / a.rate_per_s > kMaxArrivalS)
    f.fail("rate", std::to_string(a.requests) + " requests at this rate span more than 1e7 s");
  c.slo_ttft_ms = f.number_in("slo_ttft_ms", 0, 1e12, 0.0, "ms");
  c.slo_tpot_ms = f.number_in("slo_tpot_ms", 0, 1e12, 0.0, "ms");
  c.token_budget = static_cast<int>(f.integer("token_budget", 1, kMaxBudget, c.token_budget));
  c.max_seqs = static_cast<int>(f.integer("max_seqs", 1, kMaxSeqs, c.max_seqs));
  if (c.token_budget < c.max_seqs)
    f.fail("token_budget", "(" + std::to_string(c.token_budget) + ") must be at least serve.max_seqs (" +
                               std::to_string(c.max_seqs) + "): every running request may decode in one step");
  c.kv_tokens = f.integer("kv_tokens", 0, 1LL << 53, 0);
  c.bucketing = f.boolean("bucketing", true);
  f.no_unknown_keys();
  return c;
}

nlohmann::json serve_config_to_json(const ServeConfig& c) {
  nlohmann::json j = {{"slo_ttft_ms", c.slo_ttft_ms}, {"slo_tpot_ms", c.slo_tpot_ms}, {"token_budget", c.token_budget},
                      {"max_seqs", c.max_seqs},       {"kv_tokens", c.kv_tokens},     {"bucketing", c.bucketing}};
  if (!c.trace_requests.empty()) {
    j["trace_requests"] = c.trace_requests;
    return j;
  }
  const SyntheticArrivals& a = c.arrivals;
  j.update({{"rate", a.rate_per_s},
            {"requests", a.requests},
            {"prompt_tokens", a.prompt_tokens},
            {"output_tokens", a.output_tokens},
            {"prompt_spread", a.prompt_spread},
            {"output_spread", a.output_spread},
            {"seed", a.seed}});
  return j;
}

}  // namespace nmpsim::apps::serve
