// Every value a sweep's points name (hardware, models, traces, strategies, policies, accountings) is
// resolved once before the first point runs, so that a typo is one input error naming the value, not
// a failed point per value.
#include <map>
#include <set>

#include "apps/run_spec.h"
#include "apps/sweep.h"
#include "hw/hardware_spec.h"
#include "mapping/json_fields.h"
#include "mapping/moe_model.h"
#include "mapping/placement.h"
#include "mapping/registry.h"
#include "mapping/trace.h"

namespace nmpsim::apps {

namespace {

using mapping::InputError;

/// The first point that names each distinct value, by the value's JSON text.
using FirstUse = std::map<std::string, std::string>;

void note(FirstUse& m, const nlohmann::json& v, const std::string& point) { m.emplace(v.dump(), point); }

std::string names(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& n : list) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// Throws InputError "sweep point P: <field> <value>: <why>".
template <class F>
void resolve_each(const FirstUse& values, const char* field, F&& resolve) {
  for (const auto& [text, point] : values) {
    const nlohmann::json v = nlohmann::json::parse(text);
    try {
      resolve(v);
    } catch (const InputError& e) {
      std::string shown = text.substr(0, 60);
      if (v.is_string()) shown = v.get<std::string>();
      for (const char* k : {"name", "file", "trace"})
        if (v.is_object() && v.contains(k) && v[k].is_string()) shown = v[k].get<std::string>();
      throw InputError("sweep point " + point + ": " + field + " '" + shown + "': " + e.what());
    }
  }
}

mapping::ModelSpec model_of(const nlohmann::json& m) {
  if (m.is_string()) return mapping::load_model(m.get<std::string>());
  if (m.contains("preset")) return mapping::load_model(m["preset"].get<std::string>());
  return mapping::model_from_json(m, "model");
}

}  // namespace

void resolve_values(const std::vector<SweepPoint>& points, const mapping::Registry& registry) {
  FirstUse hardware, models, strategies, policies, accountings, traces;
  for (const SweepPoint& p : points) {
    const RunSpec s = run_spec_from_json(p.spec, "sweep point " + p.id);
    if (s.hardware.is_string()) note(hardware, s.hardware, p.id);
    const nlohmann::json model = s.model;
    note(models, model, p.id);
    if (!s.trace.file.empty()) note(traces, nlohmann::json{{"model", model}, {"trace", s.trace.file}}, p.id);
    for (const StrategySpec& st : s.strategies)
      note(strategies, st.name.empty() ? nlohmann::json{{"file", st.placement_file}} : nlohmann::json(st.name), p.id);
    for (const PolicySpec& pol : s.policies) note(policies, {{"name", pol.name}, {"options", pol.options}}, p.id);
    if (!s.accounting.name.empty())
      note(accountings, {{"name", s.accounting.name}, {"options", s.accounting.options}}, p.id);
  }
  resolve_each(hardware, "hardware", [](const nlohmann::json& v) { (void)hw::load_hardware(v.get<std::string>()); });
  resolve_each(models, "model", [](const nlohmann::json& v) { (void)model_of(v); });
  resolve_each(traces, "trace", [](const nlohmann::json& v) {
    const mapping::ModelSpec m = model_of(v["model"]);
    (void)mapping::load_trace(v["trace"].get<std::string>(), m.experts, m.top_k);
  });
  resolve_each(strategies, "strategy", [&](const nlohmann::json& v) {
    if (v.is_object()) {
      (void)mapping::load_placement(v["file"].get<std::string>());
    } else if (!registry.strategy(v.get<std::string>())) {
      throw InputError("unknown strategy (registered: " + names(registry.strategy_names()) + ")");
    }
  });
  resolve_each(policies, "policy", [&](const nlohmann::json& v) {
    const std::string name = v["name"].get<std::string>();
    const mapping::PolicyFactory* f = registry.policy(name);
    if (!f) throw InputError("unknown policy (registered: " + names(registry.policy_names()) + ")");
    (void)f->resolve(v["options"], "policy " + name + " options");
  });
  resolve_each(accountings, "accounting", [&](const nlohmann::json& v) {
    const std::string name = v["name"].get<std::string>();
    const mapping::AccountingFactory* f = registry.accounting(name);
    if (!f) throw InputError("unknown accounting (registered: " + names(registry.accounting_names()) + ")");
    (void)f->resolve(v["options"], "accounting " + name + " options");
  });
}

}  // namespace nmpsim::apps
