#include "nmpsim/apps/hw_overrides.h"

#include <algorithm>
#include <cctype>

#include "nmpsim/hw/hardware_fields.h"
#include "nmpsim/hw/hardware_levels.h"
#include "nmpsim/hw/hardware_spec.h"
#include "nmpsim/mapping/base_names.h"

namespace nmpsim::apps {

nlohmann::json parse_value(const std::string& text) {
  const nlohmann::json v = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (v.is_number() || v.is_boolean() || v.is_string()) return v;
  return text;
}

namespace {

/// One PATH=VALUE: the field table says what the path may hold; the value is checked against its type
/// and range here, and the whole description again when it is read.
void set_one(nlohmann::json& j, const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw mapping::InputError("--set: expected PATH=VALUE (e.g. compute.peak_tflops=10), got '" + text + "'");
  const std::string path = text.substr(0, eq), value = text.substr(eq + 1);
  if (std::isspace(static_cast<unsigned char>(value.front())) || std::isspace(static_cast<unsigned char>(value.back())))
    throw mapping::InputError("--set " + path + ": the value must be given without spaces around it");
  if (path.rfind("levels.", 0) == 0) {      // a general hierarchy's level: checked when the description is read
    nlohmann::json v = parse_value(value);  // a sweep quotes its text values: "\"gpu\""
    if (path.size() > 5 && path.compare(path.size() - 5, 5, ".name") == 0 && !v.is_string()) v = value;
    return hw::set_level_field(j, path, v);
  }
  const hw::HardwareField* f = hw::find_hardware_field(path);
  if (!f)
    throw mapping::InputError("--set " + path +
                              ": no such field in the hardware description (nmpsim hw --fields lists them)");
  if (f->classic_only && j.contains("levels"))
    throw mapping::InputError("--set " + path +
                              ": this hardware describes its hierarchy as \"levels\" (set levels.<i>.*)");
  using hw::FieldType;
  const bool textual = f->type == FieldType::kText || f->type == FieldType::kChoice;
  nlohmann::json v = parse_value(value);  // a sweep quotes its text values: "lookahead"
  if (textual && !v.is_string()) v = value;
  if (f->type == FieldType::kInteger && v.is_number_float() && f->violation(v).empty())
    v = v.get<long long>();  // 1e3 and 4.0 are integers written as floats
  const bool type_ok = textual || (f->type == FieldType::kBoolean ? v.is_boolean() : v.is_number());
  if (!type_ok)
    throw mapping::InputError("--set " + path + ": expected " +
                              (f->type == FieldType::kBoolean ? "true or false" : "a number") + ", got '" + value +
                              "'");
  if (const std::string why = f->violation(v); !why.empty()) throw mapping::InputError("--set " + path + ": " + why);
  // Every object above the field must be an object (or absent: it is made).
  for (nlohmann::json::json_pointer up = f->pointer().parent_pointer(); !up.empty(); up = up.parent_pointer())
    if (j.contains(up) && !j.at(up).is_object())
      throw mapping::InputError("--set " + path + ": " + up.to_string().substr(1) +
                                " in the hardware description is not an object");
  j[f->pointer()] = v;
}

/// Static power is one choice with two figures (docs/MODEL.md "Area and power"): setting a fixed figure
/// on scaled hardware, or the choice itself, keeps the watts the overrides do not name. Giving a figure
/// makes the static power fixed and the other figure is the scaled model's for that component;
/// `cost.static_power=fixed` takes both from the scaled model; `scaled` drops the fixed figures.
void keep_static_power(nlohmann::json& j, const nlohmann::json& original, const std::vector<std::string>& paths) {
  auto named = [&](const char* p) { return std::find(paths.begin(), paths.end(), p) != paths.end(); };
  const bool figure = named("compute.static_w") || named("memory.background_w");
  if (!figure && !named("cost.static_power")) return;
  const hw::HardwareSpec before = hw::hardware_from_json(original, "--set");
  const bool scaled_before = before.cost.static_power == hw::StaticPower::kScaled;
  if (named("cost.static_power") && j["cost"]["static_power"] == "scaled") {
    for (const auto& [obj, key] : {std::pair{"compute", "static_w"}, {"memory", "background_w"}})
      if (!named((std::string(obj) + "." + key).c_str()) && j.contains(obj)) j[obj].erase(key);
    return;
  }
  if (!named("cost.static_power")) j["cost"]["static_power"] = "fixed";
  if (!scaled_before) return;  // the figures are already the fixed model's
  const hw::CostReport c = hw::cost_report(before);
  if (!named("compute.static_w")) j["compute"]["static_w"] = c.compute_static_w;
  if (!named("memory.background_w")) j["memory"]["background_w"] = c.dram_background_w;
}

}  // namespace

nlohmann::json override_hardware(const nlohmann::json& hardware, const std::vector<std::string>& sets) {
  nlohmann::json j = hardware.is_string() ? hw::to_json(hw::load_hardware(hardware.get<std::string>())) : hardware;
  if (sets.empty()) return hardware;
  std::string name = j.value("name", std::string("hardware")), changed;
  const nlohmann::json mesh0 = j.value("mesh", nlohmann::json::object());
  const nlohmann::json original = j;
  std::vector<std::string> paths;
  for (const std::string& s : sets) {
    const std::string path = s.substr(0, s.find('='));
    if (std::find(paths.begin(), paths.end(), path) != paths.end())
      throw mapping::InputError("--set " + path + " is given twice");
    paths.push_back(path);
    set_one(j, s);
    name += "+" + s;
    changed += (changed.empty() ? "" : ", ") + s;
  }
  // A die or wafer that spanned the whole mesh keeps spanning it when the mesh is resized (a bigger
  // NMP chip, not several chips), unless the same overrides set it.
  for (const char* dim : {"width", "height"})
    for (const char* tile : {"die", "wafer"}) {
      const std::string own = std::string(tile) + "." + dim + "=";
      const bool set_here =
          std::any_of(sets.begin(), sets.end(), [&](const std::string& x) { return x.rfind(own, 0) == 0; });
      if (set_here || !j.contains(tile) || !mesh0.contains(dim) || !j[tile].contains(dim)) continue;
      if (j[tile][dim] == mesh0[dim]) j[tile][dim] = j["mesh"][dim];
    }
  keep_static_power(j, original, paths);
  j["name"] = name;
  j["description"] = j.value("description", std::string()) + " (overridden: " + changed + ")";
  // A field that does not apply to this topology (die-to-die links of a one-die chip) takes no value.
  const hw::HardwareSpec spec = hw::hardware_from_json(j, "--set");
  for (const std::string& s : sets) {
    const std::string path = s.substr(0, s.find('='));
    const hw::HardwareField* f = hw::find_hardware_field(path);
    if (!f) {  // levels.<i>.*: read and checked with the description; a link field needs such links
      const size_t level = static_cast<size_t>(path[7] - '0');
      if (path.find(".link.") != std::string::npos && !hw::link_levels_present(spec.topology)[level])
        throw mapping::InputError("--set " + path + ": does not apply to this hardware (its mesh has no " +
                                  spec.topology.link_name(static_cast<int>(level)) + " links)");
      continue;
    }
    if (f->applies && !f->applies(spec))
      throw mapping::InputError("--set " + path + ": does not apply to this hardware (only " + f->applies_note +
                                "; see its mesh, wafer and die sizes)");
  }
  return j;
}

}  // namespace nmpsim::apps
