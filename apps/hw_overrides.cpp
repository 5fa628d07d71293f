#include "nmpsim/apps/hw_overrides.h"

#include <algorithm>
#include <cctype>

#include "nmpsim/hw/hardware_spec.h"
#include "nmpsim/mapping/base_names.h"

namespace nmpsim::apps {

nlohmann::json parse_value(const std::string& text) {
  const nlohmann::json v = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (v.is_number() || v.is_boolean() || v.is_string()) return v;
  return text;
}

namespace {

void set_one(nlohmann::json& j, const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw mapping::InputError("--set: expected PATH=VALUE (e.g. compute.peak_tflops=10), got '" + text + "'");
  const std::string path = text.substr(0, eq), value = text.substr(eq + 1);
  if (std::isspace(static_cast<unsigned char>(value.front())) || std::isspace(static_cast<unsigned char>(value.back())))
    throw mapping::InputError("--set " + path + ": the value must be given without spaces around it");
  nlohmann::json* at = &j;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = std::min(path.find('.', start), path.size());
    const std::string key = path.substr(start, dot - start);
    if (!at->is_object() || key.empty() || !at->contains(key))
      throw mapping::InputError("--set " + path +
                                ": no such field in the hardware description (nmpsim hw --print-json "
                                "shows them)");
    at = &(*at)[key];
    start = dot + 1;
  }
  const nlohmann::json v = parse_value(text.substr(eq + 1));
  const auto kind = [](const nlohmann::json& x) {
    return x.is_number() ? "a number" : x.is_boolean() ? "true or false" : x.is_string() ? "a string" : "an object";
  };
  const bool ok =
      (at->is_number() && v.is_number()) || (at->is_boolean() && v.is_boolean()) || (at->is_string() && v.is_string());
  if (!ok)
    throw mapping::InputError("--set " + path + ": expected " + kind(*at) + ", got '" + text.substr(eq + 1) + "'");
  if (at->is_number_integer() && !v.is_number_integer())
    throw mapping::InputError("--set " + path + ": expected an integer, got '" + text.substr(eq + 1) + "'");
  *at = v;
}

}  // namespace

nlohmann::json override_hardware(const nlohmann::json& hardware, const std::vector<std::string>& sets) {
  nlohmann::json j = hardware.is_string() ? hw::to_json(hw::load_hardware(hardware.get<std::string>())) : hardware;
  if (sets.empty()) return hardware;
  std::string name = j.value("name", std::string("hardware")), changed;
  const nlohmann::json mesh0 = j.value("mesh", nlohmann::json::object());
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
  j["name"] = name;
  j["description"] = j.value("description", std::string()) + " (overridden: " + changed + ")";
  // A link level the topology does not have (die-to-die links of a one-die chip) takes no value.
  const mapping::Topology t = hw::hardware_from_json(j, "--set").topology;
  for (const std::string& s : sets)
    for (const auto& [level, used] :
         {std::pair{"links.die_to_die.", t.dies() > 1}, {"links.wafer_to_wafer.", t.wafers() > 1}})
      if (!used && s.rfind(level, 0) == 0)
        throw mapping::InputError("--set " + s.substr(0, s.find('=')) + ": this hardware has no " +
                                  std::string(level).substr(6, std::string(level).size() - 7) +
                                  " links (set die or wafer sizes to make several)");
  return j;
}

}  // namespace nmpsim::apps
