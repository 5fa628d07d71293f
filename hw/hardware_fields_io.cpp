// What the hardware field table produces: reading, writing, range checks and the Markdown table
// (hardware_fields.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "nmpsim/base/errors.h"
#include "nmpsim/base/json_fields.h"
#include "nmpsim/hw/hardware_fields.h"
#include "nmpsim/hw/hardware_levels.h"
#include "nmpsim/hw/hardware_spec.h"

namespace nmpsim::hw {

using json = nlohmann::json;

const char* field_type_name(FieldType t) {
  switch (t) {
    case FieldType::kNumber:
      return "number";
    case FieldType::kInteger:
      return "integer";
    case FieldType::kBoolean:
      return "boolean";
    case FieldType::kText:
      return "text";
    case FieldType::kChoice:
      return "choice";
  }
  return "?";
}

namespace {

/// A number as the docs write it: "0.001", "1e6", "2^30" (integers that are powers of two from 2^16).
std::string doc_number(double v, bool integer) {
  if (integer && v >= 65536 && v == std::ldexp(1.0, std::ilogb(v))) return "2^" + std::to_string(std::ilogb(v));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  std::string s = buf;
  const size_t e = s.find('e');
  if (e == std::string::npos) return s;
  std::string exp = s.substr(e + 1);
  const bool negative = exp[0] == '-';
  exp.erase(0, exp[0] == '+' || exp[0] == '-' ? 1 : 0);
  exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
  return s.substr(0, e) + "e" + (negative ? "-" : "") + exp;
}

std::string doc_value(const HardwareField& f, const json& v) {
  if (v.is_string()) return v.get<std::string>().empty() ? "empty" : "`" + v.get<std::string>() + "`";
  if (v.is_boolean()) return v.get<bool>() ? "`true`" : "`false`";
  return doc_number(v.get<double>(), f.type == FieldType::kInteger);
}

bool integral(const json& v) {
  if (v.is_number_integer()) return true;
  return v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>());
}

}  // namespace

std::string HardwareField::parent() const {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

std::string HardwareField::key() const { return path.substr(path.rfind('.') + 1); }

json::json_pointer HardwareField::pointer() const {
  std::string p = "/" + path;
  std::replace(p.begin(), p.end(), '.', '/');
  return json::json_pointer(p);
}

std::string HardwareField::range_text() const {
  std::string r;
  switch (type) {
    case FieldType::kNumber:
      r = "[" + doc_number(min, false) + ", " + doc_number(max, false) + "]";
      break;
    case FieldType::kInteger:
      r = (power_of_two ? "power of two, " : "") + doc_number(min, true) + ".." + doc_number(max, true);
      break;
    case FieldType::kBoolean:
      r = "`true`, `false`";
      break;
    case FieldType::kText:
      r = "printable text, " + doc_number(min, false) + ".." + doc_number(max, false) + " bytes";
      break;
    case FieldType::kChoice:
      for (const std::string& c : choices) r += (r.empty() ? "`" : ", `") + c + "`";
      break;
  }
  return range_note.empty() ? r : r + "; " + range_note;
}

std::string HardwareField::default_text() const {
  std::string d;
  if (presence == Presence::kRequired)
    d = applies_note.empty() ? "required" : "required " + applies_note;
  else if (!default_from.empty())
    d = "`" + default_from + "`";
  else
    d = doc_value(*this, get(HardwareSpec{}));
  return default_note.empty() ? d : d + " (" + default_note + ")";
}

std::string HardwareField::violation(const json& v) const {
  const auto range = [&] {
    return "must be in [" + base::number_text(min) + ", " + base::number_text(max) + "]" +
           (unit == "-" ? "" : " " + unit) + " (got " +
           (v.is_number() ? base::number_text(v.get<double>()) : base::describe_json(v)) + ")";
  };
  switch (type) {
    case FieldType::kNumber:
      if (!v.is_number()) return "expected a number, got " + base::describe_json(v);
      return base::NumberRange{min, max, ""}.contains(v.get<double>()) ? "" : range();
    case FieldType::kInteger: {
      if (!integral(v)) return "expected an integer, got " + base::describe_json(v);
      const double d = v.get<double>();
      if (d < min || d > max) return range();
      const auto i = static_cast<unsigned long long>(d);
      if (power_of_two && (i & (i - 1))) return "must be a power of two (got " + base::number_text(d) + ")";
      return "";
    }
    case FieldType::kBoolean:
      return v.is_boolean() ? "" : "expected true or false, got " + base::describe_json(v);
    case FieldType::kText: {
      if (!v.is_string()) return "expected a string, got " + base::describe_json(v);
      const std::string& s = v.get_ref<const std::string&>();
      if (s.empty() && min > 0) return "must not be empty";
      if (s.size() > max || base::one_line(s) != s)
        return "must be printable text of at most " + doc_number(max, true) + " bytes (no control characters)";
      return "";
    }
    case FieldType::kChoice: {
      if (v.is_string() && std::count(choices.begin(), choices.end(), v.get<std::string>())) return "";
      std::string names;
      for (size_t i = 0; i < choices.size(); ++i)
        names += (i ? (i + 1 == choices.size() ? " or " : ", ") : "") + ("\"" + choices[i] + "\"");
      return "must be " + names + ", got " + base::describe_json(v);
    }
  }
  return "";
}

namespace {

/// The objects of a hardware description met so far, by path ("" the root, "links.on_die"), each
/// remembering which keys were read.
class Objects {
 public:
  Objects(const json& j, const std::string& where) { objects_.emplace("", base::JsonFields(j, where, "")); }
  /// The object at `path`, or nullptr where the JSON lacks it or an object above it; `missing` is then
  /// the path of the first one missing.
  base::JsonFields* find(const std::string& path, std::string& missing) {
    std::string at;
    for (size_t start = 0; start < path.size();) {
      const size_t dot = std::min(path.find('.', start), path.size());
      const std::string key = path.substr(start, dot - start), next = path.substr(0, dot);
      if (!objects_.count(next)) {
        base::JsonFields& up = objects_.at(at);
        if (!up.has(key.c_str())) {
          missing = next;
          return nullptr;
        }
        objects_.emplace(next, up.object(key.c_str()));  // throws "expected an object"
      }
      at = next;
      start = dot + 1;
    }
    return &objects_.at(path);
  }
  /// Throws "<where>: <path>: missing<note>".
  [[noreturn]] void missing(const std::string& path, const std::string& note) {
    const size_t dot = path.rfind('.');
    objects_.at(dot == std::string::npos ? "" : path.substr(0, dot))
        .fail(path.substr(dot == std::string::npos ? 0 : dot + 1), "missing" + note);
  }
  void no_unknown_keys() const {
    for (const auto& [path, obj] : objects_) obj.no_unknown_keys();
  }

 private:
  std::map<std::string, base::JsonFields> objects_;
};

json read_value(const base::JsonFields& obj, const HardwareField& f) {
  const std::string key = f.key();
  const char* unit = f.unit == "-" ? "" : f.unit.c_str();
  switch (f.type) {
    case FieldType::kNumber:
      return obj.number_in(key.c_str(), f.min, f.max, unit);
    case FieldType::kInteger:
      return obj.integer(key.c_str(), static_cast<long long>(f.min), static_cast<long long>(f.max));
    case FieldType::kBoolean:
      return obj.boolean(key.c_str(), false);
    case FieldType::kText:
    case FieldType::kChoice:
      return obj.string(key.c_str());
  }
  return {};
}

}  // namespace

void read_hardware_fields(const json& j, const std::string& where, HardwareSpec& s) {
  Objects objects(j, where);
  std::string missing;
  base::JsonFields& root = *objects.find("", missing);
  const bool general = j.is_object() && j.contains("levels");
  if (general)
    for (const char* classic : {"die", "wafer", "links"})
      if (j.contains(classic))
        root.fail(classic, "give either \"levels\" or the classic die / wafer / links, not both");
  s.topology.classic = !general;
  // Static power, when the description does not choose: fixed when it gives a fixed figure or has no
  // "cost" object (a description of before issue 40 reads as it did), else scaled.
  auto has = [&j](const char* a, const char* b) {
    return j.is_object() && j.contains(a) && j[a].is_object() && (b == nullptr || j[a].contains(b));
  };
  if (!has("cost", "static_power"))
    s.cost.static_power = has("compute", "static_w") || has("memory", "background_w") || !has("cost", nullptr)
                              ? StaticPower::kFixed
                              : StaticPower::kScaled;
  for (const HardwareField& f : hardware_fields()) {
    if (general && f.classic_only) continue;
    const bool required = f.presence == Presence::kRequired && (!f.applies || f.applies(s));
    const std::string note = f.applies_note.empty() ? "" : " (required " + f.applies_note + ")";
    std::string missing;
    base::JsonFields* obj = objects.find(f.parent(), missing);
    const bool given = obj && obj->has(f.key().c_str());
    if (!given && required) objects.missing(obj ? f.path : missing, note);
    if (given) {
      const json v = read_value(*obj, f);
      if (const std::string why = f.violation(v); !why.empty()) obj->fail(f.key(), why);
      f.set(s, v);
    } else if (!f.default_from.empty()) {
      f.set(s, find_hardware_field(f.default_from)->get(s));
    }
  }
  for (const HardwareField& f : hardware_fields()) {  // after every field: `applies` may read a later one
    std::string missing;
    base::JsonFields* obj = f.strict_applies ? objects.find(f.parent(), missing) : nullptr;
    if (obj && obj->has(f.key().c_str()) && !f.applies(s)) obj->fail(f.key(), "applies only " + f.applies_note);
  }
  if (general) read_levels(root, s.topology);
  objects.no_unknown_keys();
}

json write_hardware_fields(const HardwareSpec& s) {
  json j = json::object();
  for (const HardwareField& f : hardware_fields())
    if ((s.topology.classic || !f.classic_only) && !(f.strict_applies && !f.applies(s))) j[f.pointer()] = f.get(s);
  if (!s.topology.classic) j["levels"] = write_levels(s.topology);
  return j;
}

std::string first_field_violation(const HardwareSpec& s) {
  for (const HardwareField& f : hardware_fields()) {
    if ((f.applies && !f.applies(s)) || (f.classic_only && !s.topology.classic)) continue;
    if (const std::string why = f.violation(f.get(s)); !why.empty()) return f.path + ": " + why;
  }
  return "";
}

std::string hardware_fields_markdown(const HardwareSpec* values) {
  std::string out = "| field | type | unit | default | range | meaning |";
  out += values ? " value |\n|---|---|---|---|---|---|---|\n" : "\n|---|---|---|---|---|---|\n";
  for (const HardwareField& f : hardware_fields()) {
    out += "| `" + f.path + "` | " + field_type_name(f.type) + " | " + f.unit + " | " + f.default_text() + " | " +
           f.range_text() + " | " + f.doc + " |";
    const bool shown = values && !(f.applies && !f.applies(*values)) && !(f.classic_only && !values->topology.classic);
    if (values) out += " " + (shown ? doc_value(f, f.get(*values)) : std::string()) + " |";
    out += "\n";
  }
  // The general hierarchy's fields, for each level i; a general topology's values for every level.
  return out + levels_fields_markdown(values ? &values->topology : nullptr);
}

}  // namespace nmpsim::hw
