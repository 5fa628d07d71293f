// Sweep specs: reading, writing and expanding them into points (apps/sweep.h).
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "nmpsim/apps/hw_overrides.h"
#include "nmpsim/apps/run_spec.h"
#include "nmpsim/apps/serve_spec.h"
#include "nmpsim/apps/sweep.h"
#include "nmpsim/base/parse.h"
#include "nmpsim/hw/hardware_spec.h"
#include "nmpsim/mapping/base_names.h"

namespace nmpsim::apps {

namespace {

/// Run-spec fields an axis may set directly (the rest are hardware paths).
const std::vector<std::string> kRunFields = {
    "phase",     "prompt_tokens", "micro_batches",  "prefill_chunk", "batch",    "steps",        "context",
    "attn_tp",   "first_token",   "profile_tokens", "seed",          "fidelity", "policies",     "accounting",
    "trace",     "model",         "hardware",       "strategies",    "strategy", "weight_bytes", "activation_bytes",
    "recompute", "moe_chunks"};

bool is_run_field(const std::string& p) {
  return std::find(kRunFields.begin(), kRunFields.end(), p) != kRunFields.end();
}

/// A model field as an object {"preset", "weight_bytes", "activation_bytes"} (a preset given by name).
nlohmann::json& model_object(nlohmann::json& spec) {
  nlohmann::json& m = spec["model"];
  if (m.is_null()) m = "mixtral-8x7b";
  if (m.is_string()) m = {{"preset", m.get<std::string>()}};
  return m;
}

void set_field(nlohmann::json& spec, const std::string& path, const nlohmann::json& v) {
  if (path == "strategy" || path == "strategies") {
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& name : base::split_items(v.is_string() ? v.get<std::string>() : v.dump(), path))
      list.push_back({{"name", name}});
    spec["strategies"] = list;
  } else if (path == "model") {
    nlohmann::json& m = spec["model"];
    if (m.is_object() && m.contains("preset") && v.is_string())
      m["preset"] = v;
    else
      m = v;
  } else if (path == "weight_bytes" || path == "activation_bytes") {
    model_object(spec)[path] = v;
  } else {
    spec[path] = v;
  }
}

}  // namespace

SweepAxis parse_axis(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw mapping::InputError("--axis: expected PATH=V1,V2,... (e.g. compute.peak_tflops=2.5,5,10), got '" + text +
                              "'");
  SweepAxis a;
  a.path = text.substr(0, eq);
  for (const std::string& v : base::split_items(text.substr(eq + 1), "--axis " + a.path))
    a.values.push_back(parse_value(v));
  return a;
}

SweepSpec sweep_from_json(const nlohmann::json& j, const std::string& where) {
  const base::JsonFields f(j, where, "");
  SweepSpec s;
  if (f.has("base")) {
    s.base = f.raw("base");
    if (!s.base.is_object()) f.fail("base", "expected a run spec (an object)");
  }
  if (f.has("axes")) {
    const nlohmann::json& axes = f.raw("axes");
    if (!axes.is_array()) f.fail("axes", "expected a list of {\"path\", \"values\"}");
    for (size_t i = 0; i < axes.size(); ++i) {
      const base::JsonFields a(axes[i], where, "axes[" + std::to_string(i) + "]");
      SweepAxis ax;
      ax.path = a.string("path");
      const nlohmann::json& v = a.raw("values");
      if (!v.is_array() || v.empty()) a.fail("values", "expected a non-empty list");
      ax.values.assign(v.begin(), v.end());
      a.no_unknown_keys();
      s.axes.push_back(ax);
    }
  }
  if (f.has("points")) {
    const nlohmann::json& p = f.raw("points");
    if (!p.is_array()) f.fail("points", "expected a list of {path: value} objects");
    for (const auto& x : p) {
      if (!x.is_object() || x.empty()) f.fail("points", "every point must be a non-empty {path: value} object");
      s.points.push_back(x);
    }
  }
  s.baseline = f.string("baseline", s.baseline);
  if (f.has("serve")) {
    s.serve = f.raw("serve");
    (void)serve::serve_config_from_json(s.serve, where);  // its errors name the file and serve.KEY
  }
  f.no_unknown_keys();
  if (s.axes.empty() && s.points.empty()) f.fail("axes", "a sweep needs at least one axis or point");
  return s;
}

nlohmann::json sweep_to_json(const SweepSpec& s) {
  nlohmann::json axes = nlohmann::json::array();
  for (const SweepAxis& a : s.axes) axes.push_back({{"path", a.path}, {"values", a.values}});
  nlohmann::json j = {{"base", s.base}, {"axes", axes}, {"points", s.points}, {"baseline", s.baseline}};
  if (s.serving()) j["serve"] = s.serve.is_null() ? nlohmann::json::object() : s.serve;
  return j;
}

namespace {
bool is_serve_path(const std::string& path) { return path.rfind("serve.", 0) == 0; }
}  // namespace

bool SweepSpec::serving() const {
  if (!serve.is_null()) return true;
  for (const SweepAxis& a : axes)
    if (is_serve_path(a.path)) return true;
  for (const nlohmann::json& p : points)
    for (const auto& kv : p.items())
      if (is_serve_path(kv.key())) return true;
  return false;
}

RunSpec point_run_spec(const SweepPoint& p) {
  nlohmann::json spec = p.spec;
  if (spec.is_object()) spec.erase("serve");
  return run_spec_from_json(spec, "sweep point " + p.id);
}

nlohmann::json point_serve(const SweepPoint& p) { return p.spec.value("serve", nlohmann::json()); }

namespace {
/// The axes name distinct fields ("strategy" and "strategies" are one), and the product of their sizes
/// plus the explicit points is at most kMaxSweepPoints, checked before any point is built.
void check_axes(const SweepSpec& s) {
  std::vector<std::string> seen;
  size_t product = s.axes.empty() ? 0 : 1;
  for (const SweepAxis& a : s.axes) {
    const std::string field = a.path == "strategies" ? "strategy" : a.path;
    if (std::find(seen.begin(), seen.end(), field) != seen.end())
      throw mapping::InputError("sweep: axis '" + a.path +
                                "' is given twice (one axis per field; list its values once)");
    seen.push_back(field);
    if (a.values.empty()) throw mapping::InputError("sweep: axis '" + a.path + "' has no values");
    if (product > kMaxSweepPoints / a.values.size() + 1)
      product = kMaxSweepPoints + 1;  // no overflow
    else
      product *= a.values.size();
  }
  if (product > kMaxSweepPoints || s.points.size() > kMaxSweepPoints - std::min(product, kMaxSweepPoints))
    throw mapping::InputError("sweep: the axes make " +
                              (product > kMaxSweepPoints ? "more than " + std::to_string(kMaxSweepPoints)
                                                         : std::to_string(product + s.points.size())) +
                              " points; at most " + std::to_string(kMaxSweepPoints));
}
}  // namespace

std::vector<SweepPoint> expand(const SweepSpec& s) {
  check_axes(s);
  std::vector<nlohmann::json> combos{nlohmann::json::object()};
  for (const SweepAxis& a : s.axes) {
    std::vector<nlohmann::json> next;
    for (const nlohmann::json& c : combos)
      for (const nlohmann::json& v : a.values) {
        next.push_back(c);
        next.back()[a.path] = v;
      }
    combos = std::move(next);
  }
  if (s.axes.empty()) combos.clear();
  combos.insert(combos.end(), s.points.begin(), s.points.end());
  std::vector<SweepPoint> out;
  for (size_t i = 0; i < combos.size(); ++i) {
    SweepPoint p;
    char id[32];
    std::snprintf(id, sizeof id, "p%04zu", i);
    p.id = id;
    p.values = combos[i];
    p.spec = s.base;
    if (s.serving()) p.spec["serve"] = s.serve.is_null() ? nlohmann::json::object() : s.serve;
    const std::string where = "sweep point " + p.id;
    // The hardware axis first, then run fields, then hardware paths on top of the hardware.
    if (p.values.contains("hardware")) p.spec["hardware"] = p.values["hardware"];
    std::vector<std::string> sets;
    for (const auto& [path, v] : p.values.items()) {
      if (path == "hardware") continue;
      if (is_serve_path(path))
        p.spec["serve"][path.substr(6)] = v;
      else if (is_run_field(path))
        set_field(p.spec, path, v);
      else
        sets.push_back(path + "=" + (v.is_string() ? nlohmann::json(v).dump() : v.dump()));
    }
    try {
      if (!sets.empty())
        p.spec["hardware"] = override_hardware(p.spec.value("hardware", nlohmann::json("nmp-4x8-5t50g")), sets);
      if (p.spec.contains("hardware") && p.spec["hardware"].is_object())
        (void)hw::hardware_from_json(p.spec["hardware"], "hardware");
      nlohmann::json run = p.spec;
      run.erase("serve");
      (void)run_spec_from_json(run, "spec");
      if (p.spec.contains("serve")) (void)serve::serve_config_from_json(p.spec["serve"], "spec");
    } catch (const mapping::InputError& e) {
      throw mapping::InputError(where + " (" + p.values.dump() + "): " + e.what());
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace nmpsim::apps
