#include "nmpsim/apps/serve_steps.h"

#include <algorithm>
#include <cmath>

#include "nmpsim/base/errors.h"
#include "nmpsim/mapping/placement.h"

namespace nmpsim::apps::serve {

int bucket_up(int v) {
  if (v <= 4) return v;
  int octave = 4;  // the grid's points between octave and 2 octave: octave x {1, 1.25, 1.5, 1.75}
  while (2 * octave < v) octave *= 2;
  const int step = octave / 4;
  return (v + step - 1) / step * step;
}

int bucket_down(int v) {
  if (v <= 4) return v;
  int octave = 4;
  while (2 * octave < v) octave *= 2;
  const int step = octave / 4;
  return v / step * step;
}

StepCost interpolated(const StepShape& s, const std::function<StepCost(const StepShape&)>& at_grid) {
  const int v[3] = {s.decode_tokens, s.prefill_tokens, s.context_tokens};
  int lo[3], hi[3];
  double w[3];  // weight of the upper grid point
  for (int k = 0; k < 3; ++k) {
    lo[k] = bucket_down(v[k]);
    hi[k] = bucket_up(v[k]);
    w[k] = hi[k] == lo[k] ? 0.0 : double(v[k] - lo[k]) / double(hi[k] - lo[k]);
  }
  StepCost c;
  for (int corner = 0; corner < 8; ++corner) {
    double weight = 1;
    int at[3];
    for (int k = 0; k < 3; ++k) {
      const bool up = (corner >> k) & 1;
      weight *= up ? w[k] : 1.0 - w[k];
      at[k] = up ? hi[k] : lo[k];
    }
    if (weight == 0) continue;
    const StepCost g = at_grid(StepShape{at[0], at[1], at[2]});
    c.seconds += weight * g.seconds;
    c.energy_j += weight * g.energy_j;
  }
  return c;
}

StepShape bucketed(const StepShape& s) {
  return StepShape{bucket_up(s.decode_tokens), bucket_up(s.prefill_tokens), bucket_up(s.context_tokens)};
}

RunSpec step_spec(const RunSpec& base, const StepShape& s) {
  RunSpec r = base;
  r.steps = 1;
  r.all_strategies = false;
  if (s.prefill_tokens == 0) {
    r.phase = mapping::StepKind::kDecode;
    r.batch = s.decode_tokens;
    r.context = std::max(1, s.context_tokens);
  } else if (s.decode_tokens == 0) {
    r.phase = mapping::StepKind::kPrefill;
    r.batch = 1;
    r.prompt_tokens = s.prefill_tokens;
  } else {
    r.phase = mapping::StepKind::kMixed;
    r.batch = s.decode_tokens;
    r.context = std::max(1, s.context_tokens);
    r.prompt_tokens = r.prefill_chunk = s.prefill_tokens;
  }
  return r;
}

StepCost SimulatedSteps::operator()(const StepShape& asked) {
  if (bucketing_) return interpolated(asked, [this](const StepShape& g) { return simulate(g); });
  return simulate(asked);
}

StepCost SimulatedSteps::simulate(const StepShape& s) {
  if (const auto it = cache_.find(s); it != cache_.end()) return it->second;
  const Experiment x = run_experiment(step_spec(base_, s), opt_);
  ++simulated_;
  const StrategyReport& rep = x.reports.at(0);
  StepCost c;
  c.seconds = rep.result.mean_tbt_s();
  c.energy_j = rep.energy ? rep.energy->total() * 1e-12 : 0;
  return cache_[s] = c;
}

namespace {
/// What makes two runs' step times the same: the run spec (hardware, model, strategy, fidelity, ...)
/// and whether shapes are bucketed; with a version, so that a cache of an older nmpsim is not read.
nlohmann::json steps_key(const RunSpec& base, bool bucketing, const nlohmann::json& identity) {
  return {{"version", 1}, {"spec", run_spec_to_json(base)}, {"bucketing", bucketing}, {"identity", identity}};
}
}  // namespace

nlohmann::json SimulatedSteps::to_json() const {
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& [s, c] : cache_)
    shapes.push_back({s.decode_tokens, s.prefill_tokens, s.context_tokens, c.seconds, c.energy_j});
  return {{"key", steps_key(base_, bucketing_, identity_)}, {"shapes", shapes}};
}

size_t SimulatedSteps::adopt(const nlohmann::json& j) {
  if (!j.is_object() || j.value("key", nlohmann::json()) != steps_key(base_, bucketing_, identity_)) return 0;
  const nlohmann::json shapes = j.value("shapes", nlohmann::json());
  if (!shapes.is_array()) return 0;
  std::map<StepShape, StepCost> taken;
  auto counts = [](const nlohmann::json& v) {
    return v.is_number_integer() && v.get<long long>() >= 0 && v.get<long long>() <= (1LL << 30);
  };
  for (const nlohmann::json& e : shapes) {
    if (!e.is_array() || e.size() != 5 || !std::all_of(e.begin(), e.begin() + 3, counts) || !e[3].is_number() ||
        !e[4].is_number())
      return 0;
    const StepShape s{e[0].get<int>(), e[1].get<int>(), e[2].get<int>()};
    const StepCost c{e[3].get<double>(), e[4].get<double>()};
    if (s.decode_tokens < 0 || s.prefill_tokens < 0 || s.context_tokens < 0 || !(c.seconds > 0) ||
        !std::isfinite(c.seconds) || !std::isfinite(c.energy_j))
      return 0;
    taken[s] = c;
  }
  size_t added = 0;
  for (const auto& kv : taken) added += cache_.insert(kv).second;
  return added;
}

int64_t kv_capacity_tokens(const PreparedExperiment& e) {
  const mapping::ModelSpec& m = e.model;
  const int nodes = e.hardware.topology.nodes();
  const int group = e.cfg.attn_tp > 0 ? e.cfg.attn_tp : nodes;
  // The heaviest node's weights under the run's placement (memory_demand with no KV cache and no
  // prompt): its expert shares, its part of attention and of the shared experts, the gate.
  const mapping::MemoryDemand d = mapping::memory_demand(e.placements.at(0), m, group, mapping::RunShape{0, 0});
  const double weights = d.max_bytes;
  const double capacity = static_cast<double>(e.hardware.memory.capacity_bytes);
  if (weights >= capacity)
    throw base::InputError("serve: node " + std::to_string(d.max_node) + "'s weights (" +
                           std::to_string(weights / double(1ULL << 30)) + " GiB) leave no memory for a KV cache (" +
                           std::to_string(capacity / double(1ULL << 30)) + " GiB per node)");
  // A request's KV lives on one attention group, a 1/group share on each of its nodes: every node's
  // free memory holds nodes x free / (layers x KV bytes per token) tokens in all.
  return static_cast<int64_t>(std::floor(nodes * (capacity - weights) / (m.kv_bytes_per_token() * m.layers())));
}

}  // namespace nmpsim::apps::serve
