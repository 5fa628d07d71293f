#include "nmpsim/apps/run_spec.h"

#include <limits>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::apps {

using base::JsonFields;
using mapping::InputError;

namespace {

constexpr long long kMaxU53 = 1LL << 53;

void read_model(const JsonFields& root, RunSpec& s) {
  if (!root.has("model")) return;
  const nlohmann::json& m = root.raw("model");
  if (m.is_string()) {
    s.model = m.get<std::string>();
    return;
  }
  const JsonFields f = root.object("model");
  if (!f.has("preset")) {  // a full description: checked where the model is loaded
    s.model = m;
    return;
  }
  s.model = f.string("preset");
  s.weight_bytes = f.number_in("weight_bytes", 0, 8, 0, "bytes (0: the model's)");
  s.activation_bytes = f.number_in("activation_bytes", 0, 8, 0, "bytes (0: the model's)");
  f.no_unknown_keys();
}

void read_synthetic(const JsonFields& f, mapping::SyntheticTraceConfig& c) {
  c.tokens = static_cast<size_t>(f.integer("tokens", 1, 1 << 24, static_cast<long long>(c.tokens)));
  c.zipf_s = f.number("skew", c.zipf_s);
  c.coactivation = f.number("coactivation", c.coactivation);
  c.layer_correlation = f.number("layer_correlation", c.layer_correlation);
  c.scenarios = static_cast<int>(f.integer("scenarios", 1, 1 << 16, c.scenarios));
  c.drift = f.number("drift", c.drift);
  c.seed = static_cast<uint64_t>(f.integer("seed", 0, kMaxU53, static_cast<long long>(c.seed)));
  f.no_unknown_keys();
}

void read_trace(const JsonFields& root, RunSpec& s) {
  s.trace.synthetic.seed = s.seed;
  if (!root.has("trace")) return;
  const nlohmann::json& t = root.raw("trace");
  if (t.is_string()) {
    const std::string v = t.get<std::string>();
    if (v != "synthetic") s.trace.file = v;
    return;
  }
  const JsonFields f = root.object("trace");
  if (f.has("synthetic")) {
    read_synthetic(f.object("synthetic"), s.trace.synthetic);
  } else {
    s.trace.file = f.string("file");
    s.trace.fingerprint = f.string("fingerprint", "");
  }
  f.no_unknown_keys();
}

StrategySpec read_strategy(const nlohmann::json& v, const std::string& where, const std::string& path) {
  StrategySpec st;
  if (v.is_string()) {
    st.name = v.get<std::string>();
    return st;
  }
  const JsonFields f(v, where, path);
  if (f.has("placement_file")) {
    st.placement_file = f.string("placement_file");
    st.fingerprint = f.string("fingerprint", "");
  } else {
    st.name = f.string("name");
    if (f.has("options")) {
      st.options = f.raw("options");
      if (!st.options.is_object()) f.fail("options", "expected an object");
    }
  }
  f.no_unknown_keys();
  return st;
}

void read_lists(const JsonFields& root, RunSpec& s, const std::string& where) {
  if (root.has("strategies")) {
    const nlohmann::json& v = root.raw("strategies");
    if (v.is_string() && v.get<std::string>() == "all") {
      s.all_strategies = true;
    } else if (v.is_array() && !v.empty()) {
      s.all_strategies = false;
      for (size_t i = 0; i < v.size(); ++i)
        s.strategies.push_back(read_strategy(v[i], where, "strategies[" + std::to_string(i) + "]"));
    } else {
      root.fail("strategies", "expected \"all\" or a non-empty list");
    }
  }
  if (root.has("policies")) {
    const nlohmann::json& v = root.raw("policies");
    if (!v.is_array()) root.fail("policies", "expected a list");
    for (size_t i = 0; i < v.size(); ++i) {
      const JsonFields f(v[i], where, "policies[" + std::to_string(i) + "]");
      PolicySpec p{f.string("name"), nlohmann::json::object()};
      if (f.has("options")) p.options = f.raw("options");
      f.no_unknown_keys();
      s.policies.push_back(std::move(p));
    }
  }
}

}  // namespace

RunSpec run_spec_from_json(const nlohmann::json& j, const std::string& where) {
  const JsonFields root(j, where, "");
  RunSpec s;
  if (root.has("hardware")) {
    s.hardware = root.raw("hardware");
    if (!s.hardware.is_string() && !s.hardware.is_object())
      root.fail("hardware", "expected a preset name or a hardware description object");
  }
  s.seed = static_cast<uint64_t>(root.integer("seed", 0, kMaxU53, 1));
  read_model(root, s);
  read_trace(root, s);
  read_lists(root, s, where);
  if (root.has("phase")) s.phase = mapping::parse_step_kind(root.string("phase"), where + ": phase");
  s.batch = static_cast<int>(root.integer("batch", 1, 1 << 20, s.batch));
  s.steps = static_cast<int>(root.integer("steps", 1, 1 << 20, s.steps));
  s.context = static_cast<int>(root.integer("context", 0, 1 << 24, s.context));
  s.prompt_tokens = static_cast<int>(root.integer("prompt_tokens", 0, 1 << 24, s.prompt_tokens));
  s.prefill_chunk = static_cast<int>(root.integer("prefill_chunk", 0, 1 << 24, s.prefill_chunk));
  s.recompute = root.boolean("recompute", s.recompute);
  s.micro_batches = static_cast<int>(root.integer("micro_batches", 1, 256, s.micro_batches));
  s.moe_chunks = static_cast<int>(root.integer("moe_chunks", 1, 64, s.moe_chunks));
  s.attn_tp = static_cast<int>(root.integer("attn_tp", 0, 1 << 16, s.attn_tp));
  s.first_token = static_cast<uint64_t>(root.integer("first_token", 0, kMaxU53, 0));
  s.profile_tokens = static_cast<uint64_t>(root.integer("profile_tokens", 0, kMaxU53, 0));
  if (root.has("fidelity")) s.fidelity = mapping::parse_fidelity(root.string("fidelity"), where + ": fidelity");
  if (root.has("accounting") && !root.raw("accounting").is_null()) {  // null: simulate
    const JsonFields a = root.object("accounting");
    s.accounting = PolicySpec{a.string("name"), a.has("options") ? a.raw("options") : nlohmann::json::object()};
    if (!s.accounting.options.is_object()) a.fail("options", "expected an object");
    a.no_unknown_keys();
  }
  root.no_unknown_keys();
  return s;
}

RunSpec load_run_spec(const std::string& path) {
  const nlohmann::json j = base::read_json_file(path);
  // A run's summary.json carries its complete spec: rerun it directly.
  if (j.is_object() && j.contains("spec") && j.contains("strategies"))
    return run_spec_from_json(j["spec"], path + ": spec");
  return run_spec_from_json(j, path);
}

nlohmann::json run_spec_to_json(const RunSpec& s) {
  nlohmann::json trace;
  if (s.trace.file.empty()) {
    const mapping::SyntheticTraceConfig& c = s.trace.synthetic;
    trace = {{"synthetic",
              {{"tokens", c.tokens},
               {"skew", c.zipf_s},
               {"coactivation", c.coactivation},
               {"layer_correlation", c.layer_correlation},
               {"scenarios", c.scenarios},
               {"drift", c.drift},
               {"seed", c.seed}}}};
  } else {
    trace = {{"file", s.trace.file}};
    if (!s.trace.fingerprint.empty()) trace["fingerprint"] = s.trace.fingerprint;
  }
  nlohmann::json strategies = nlohmann::json::array();
  for (const StrategySpec& st : s.strategies) {
    if (st.name.empty()) {
      nlohmann::json f = {{"placement_file", st.placement_file}};
      if (!st.fingerprint.empty()) f["fingerprint"] = st.fingerprint;
      strategies.push_back(f);
    } else {
      strategies.push_back({{"name", st.name}, {"options", st.options}});
    }
  }
  nlohmann::json policies = nlohmann::json::array();
  for (const PolicySpec& p : s.policies) policies.push_back({{"name", p.name}, {"options", p.options}});
  return {{"hardware", s.hardware},
          {"model", s.model.is_string() ? nlohmann::json{{"preset", s.model},
                                                         {"weight_bytes", s.weight_bytes},
                                                         {"activation_bytes", s.activation_bytes}}
                                        : s.model},
          {"trace", trace},
          {"strategies", s.all_strategies ? nlohmann::json("all") : strategies},
          {"policies", policies},
          {"phase", mapping::step_kind_name(s.phase)},
          {"batch", s.batch},
          {"steps", s.steps},
          {"context", s.context},
          {"prompt_tokens", s.prompt_tokens},
          {"prefill_chunk", s.prefill_chunk},
          {"recompute", s.recompute},
          {"micro_batches", s.micro_batches},
          {"moe_chunks", s.moe_chunks},
          {"attn_tp", s.attn_tp},
          {"first_token", s.first_token},
          {"profile_tokens", s.profile_tokens},
          {"fidelity", mapping::fidelity_name(s.fidelity)},
          {"accounting", s.accounting.name.empty()
                             ? nlohmann::json(nullptr)
                             : nlohmann::json{{"name", s.accounting.name}, {"options", s.accounting.options}}},
          {"seed", s.seed}};
}

}  // namespace nmpsim::apps
