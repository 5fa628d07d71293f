#include "nmpsim/mapping/trace.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nmpsim/base/rng.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/data_files.h"
#include "nmpsim/mapping/moe_model.h"

namespace nmpsim::mapping {

RoutingTrace::RoutingTrace(int layers, int experts, int top_k, size_t tokens, std::string source)
    : layers_(layers),
      experts_(experts),
      top_k_(top_k),
      tokens_(tokens),
      source_(std::move(source)),
      ids_(static_cast<size_t>(layers) * tokens * top_k) {}

std::vector<int> RoutingTrace::expert_counts(int l, size_t first, size_t count) const {
  std::vector<int> c(static_cast<size_t>(experts_), 0);
  for (size_t i = 0; i < count; ++i) {
    const uint16_t* e = experts_of(l, (first + i) % tokens_);
    for (int k = 0; k < top_k_; ++k) ++c[e[k]];
  }
  return c;
}

std::vector<double> RoutingTrace::frequencies(int l) const {
  const std::vector<int> c = expert_counts(l, 0, tokens_);
  std::vector<double> f(c.size());
  for (size_t e = 0; e < c.size(); ++e) f[e] = tokens_ ? double(c[e]) / double(tokens_) : 0.0;
  return f;
}

RoutingTrace RoutingTrace::slice(size_t first, size_t count) const {
  RoutingTrace s(layers_, experts_, top_k_, count,
                 source_ + "[" + std::to_string(first) + "+" + std::to_string(count) + "]");
  for (int l = 0; l < layers_; ++l)
    for (size_t t = 0; t < count; ++t)
      std::copy_n(experts_of(l, (first + t) % tokens_), top_k_, s.mutable_experts_of(l, t));
  return s;
}

void check_trace_size(int layers, size_t tokens, int top_k, const std::string& where) {
  const double bytes = double(layers) * double(tokens) * top_k * sizeof(uint16_t);
  if (bytes > kMaxTraceBytes)
    throw InputError(where + ": " + std::to_string(layers) + " layers x " + std::to_string(tokens) + " tokens x top-" +
                     std::to_string(top_k) + " needs " + std::to_string(static_cast<long long>(bytes / (1 << 20))) +
                     " MiB; traces are limited to " + std::to_string(kMaxTraceBytes >> 20) + " MiB");
}

RoutingTrace load_trace(const std::string& name_or_path, int experts, int top_k) {
  const std::string path = resolve_trace_path(name_or_path);
  RoutingTrace t = trace_from_text(read_text_file(path), path, experts, top_k);
  t.set_source(name_or_path);
  return t;
}

nlohmann::json trace_to_json(const RoutingTrace& t) {
  nlohmann::json j = nlohmann::json::object();
  for (int l = 0; l < t.layers(); ++l) {
    nlohmann::json toks = nlohmann::json::array();
    for (size_t i = 0; i < t.tokens(); ++i)
      toks.push_back(std::vector<int>(t.experts_of(l, i), t.experts_of(l, i) + t.top_k()));
    j[std::to_string(l)] = toks;
  }
  return j;
}

void SyntheticTraceConfig::validate() const {
  auto fail = [](const std::string& m) { throw InputError("synthetic trace: " + m); };
  if (layers < 1) fail("layers must be at least 1");
  if (experts < 1 || experts > 65535) fail("experts must be in [1, 65535]");
  if (top_k < 1 || top_k > std::min(experts, kMaxTopK))
    fail("top_k must be in [1, min(experts, " + std::to_string(kMaxTopK) + ")]");
  if (tokens < 1) fail("tokens must be at least 1");
  if (!(zipf_s >= 0 && zipf_s <= 10)) fail("skew (zipf_s) must be in [0, 10]");
  if (!(coactivation >= 0 && coactivation <= 1)) fail("coactivation must be in [0, 1]");
  if (!(layer_correlation >= 0 && layer_correlation <= 1)) fail("layer correlation must be in [0, 1]");
  if (scenarios < 1 || static_cast<size_t>(scenarios) > tokens)
    fail("scenarios must be in [1, tokens] (got " + std::to_string(scenarios) + " for " + std::to_string(tokens) +
         " tokens)");
  if (!(drift >= 0 && drift <= 1)) fail("drift must be in [0, 1]");
}

RoutingTrace synthetic_trace(const SyntheticTraceConfig& cfg) {
  cfg.validate();
  check_trace_size(cfg.layers, cfg.tokens, cfg.top_k, "synthetic trace (--synthetic-tokens)");
  const int E = cfg.experts, K = cfg.top_k, L = cfg.layers;
  Rng rng(cfg.seed);
  RoutingTrace t(L, E, K, cfg.tokens, "synthetic(seed " + std::to_string(cfg.seed) + ")");
  // Zipf weights by rank, as a cumulative table.
  std::vector<double> cum(static_cast<size_t>(E));
  double acc = 0;
  for (int r = 0; r < E; ++r) cum[r] = acc += 1.0 / std::pow(r + 1.0, cfg.zipf_s);
  auto shuffle = [&](std::vector<int>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
  };
  std::vector<int> ident(static_cast<size_t>(E));
  std::iota(ident.begin(), ident.end(), 0);
  // Per layer: popularity order per scenario, a partner map (co-activation), a successor map (layer correlation).
  std::vector<std::vector<std::vector<int>>> rank_to_expert(static_cast<size_t>(L));
  std::vector<std::vector<int>> partner(static_cast<size_t>(L)), successor(static_cast<size_t>(L));
  for (int l = 0; l < L; ++l) {
    std::vector<int> order = ident;
    shuffle(order);
    for (int s = 0; s < cfg.scenarios; ++s) {
      if (s > 0) {  // drift: reshuffle a share of the ranks
        const int moved = static_cast<int>(std::round(cfg.drift * E));
        for (int m = 0; m < moved; ++m) std::swap(order[rng.below(E)], order[rng.below(E)]);
      }
      rank_to_expert[l].push_back(order);
    }
    partner[l] = ident;
    shuffle(partner[l]);
    successor[l] = ident;
    shuffle(successor[l]);
  }
  std::vector<int> prev_first(cfg.tokens, -1);
  // taken(e, k): e is one of the token's first k experts; a stamp per expert makes it O(1) (the
  // experts are added in order, so "stamped for this token" is "among the first k").
  std::vector<uint64_t> stamp(static_cast<size_t>(E), 0);
  uint64_t token_stamp = 0;
  for (int l = 0; l < L; ++l) {
    for (size_t i = 0; i < cfg.tokens; ++i) {
      const size_t scenario = i * static_cast<size_t>(cfg.scenarios) / cfg.tokens;
      const std::vector<int>& order = rank_to_expert[l][scenario];
      auto sample = [&] {
        const double u = rng.uniform() * acc;
        const size_t r = static_cast<size_t>(std::upper_bound(cum.begin(), cum.end(), u) - cum.begin());
        return order[std::min(r, static_cast<size_t>(E - 1))];
      };
      uint16_t* out = t.mutable_experts_of(l, i);
      ++token_stamp;
      auto taken = [&](int e, int) { return stamp[static_cast<size_t>(e)] == token_stamp; };
      for (int k = 0; k < K; ++k) {
        int e;
        if (k == 0 && l > 0 && prev_first[i] >= 0 && rng.uniform() < cfg.layer_correlation) {
          e = successor[l][prev_first[i]];
        } else if (k > 0 && rng.uniform() < cfg.coactivation && !taken(partner[l][out[k - 1]], k)) {
          e = partner[l][out[k - 1]];
        } else {
          e = sample();
          for (int tries = 0; taken(e, k) && tries < 64; ++tries) e = sample();
          while (taken(e, k)) e = (e + 1) % E;  // heavy skew: fall back to the next free id
        }
        out[k] = static_cast<uint16_t>(e);
        stamp[static_cast<size_t>(e)] = token_stamp;
      }
      prev_first[i] = out[0];
    }
  }
  return t;
}

}  // namespace nmpsim::mapping
