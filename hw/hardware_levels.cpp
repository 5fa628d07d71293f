#include "nmpsim/hw/hardware_levels.h"

#include <array>
#include <cctype>

#include "nmpsim/base/errors.h"
#include "nmpsim/hw/hardware_spec.h"

namespace nmpsim::hw {

using json = nlohmann::json;

namespace {

/// One field of a level: its key under "levels.<i>", its documentation row (docs/FORMATS.md). The link
/// fields' ranges are the classic links.* fields'.
struct LevelField {
  const char* key;
  const char* type;
  const char* unit;
  const char* dflt;
  const char* range;
  const char* doc;
};

constexpr LevelField kFields[] = {
    {"name", "text", "-", "required", "1..32 characters of a-z, 0-9, `-`; unique",
     "the level's name; its links are named after it (`on-gpu` at level 0, `gpu-to-gpu` at level 1)"},
    {"width", "integer", "nodes", "required (absent on the last level: the mesh)", "1..256; tiles the next level",
     "nodes per group in x"},
    {"height", "integer", "nodes", "required (absent on the last level: the mesh)", "1..256; tiles the next level",
     "nodes per group in y"},
    {"link.gbytes_per_s", "number", "GB/s", "required where the mesh has such links",
     "[0.001, 1e6]; at least 1/4096 of the fastest link",
     "bandwidth per direction of a link whose two nodes' finest common group is at this level"},
    {"link.latency_ns", "number", "ns", "2", "[0, 1e6]; at most 4096 NoC cycles", "latency of one such hop"},
    {"link.pj_per_bit", "number", "pJ/bit", "0.2", "[0, 1000]", "energy of one such hop"},
};

const LevelField* find_field(const std::string& key) {
  for (const LevelField& f : kFields)
    if (key == f.key) return &f;
  return nullptr;
}

void read_link(const base::JsonFields& level, bool present, mapping::LinkParams& p) {
  if (!level.has("link")) {
    if (present) level.fail("link", "missing (required: the mesh has links at this level)");
    return;
  }
  const base::JsonFields link = level.object("link");
  if (present || link.has("gbytes_per_s")) p.gbytes_per_s = link.number_in("gbytes_per_s", 1e-3, 1e6, "GB/s");
  p.latency_ns = link.number_in("latency_ns", 0, 1e6, p.latency_ns, "ns");
  p.pj_per_bit = link.number_in("pj_per_bit", 0, 1e3, p.pj_per_bit, "pJ/bit");
  link.no_unknown_keys();
}

}  // namespace

void read_levels(const base::JsonFields& root, mapping::Topology& t) {
  const json& a = root.raw("levels");
  if (!a.is_array()) root.fail("levels", "expected an array of levels, the finest first");
  if (a.size() < 2 || a.size() > static_cast<size_t>(mapping::kMaxLevels))
    root.fail("levels", std::to_string(a.size()) + " levels; give 2 to " + std::to_string(mapping::kMaxLevels) +
                            " (the finest first, the whole system last)");
  t.classic = false;
  t.levels.assign(a.size(), mapping::Level{});
  t.links = {};
  std::vector<base::JsonFields> objs;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string at = "levels." + std::to_string(i);
    if (!a[i].is_object()) root.fail(at.c_str(), "expected an object, got " + base::describe_json(a[i]));
    objs.emplace_back(a[i], root.where(), at);
    mapping::Level& l = t.levels[i];
    l.name = objs[i].string("name");
    const bool last = i + 1 == a.size();
    if (last && (objs[i].has("width") || objs[i].has("height")))
      objs[i].fail(objs[i].has("width") ? "width" : "height",
                   "the last level is the whole mesh: give mesh.width/height");
    l.width = last ? t.width : static_cast<int>(objs[i].integer("width", 1, 256));
    l.height = last ? t.height : static_cast<int>(objs[i].integer("height", 1, 256));
  }
  // Links are required where they exist, which needs the sizes to tile (Topology::validate's message).
  try {
    t.validate(root.where());
  } catch (const std::invalid_argument& e) {
    throw SpecError(e.what());
  }
  const auto present = link_levels_present(t);
  for (size_t i = 0; i < a.size(); ++i) {
    read_link(objs[i], present[i], t.links[i]);
    objs[i].no_unknown_keys();
  }
}

json write_levels(const mapping::Topology& t) {
  json a = json::array();
  for (int l = 0; l < t.num_levels(); ++l) {
    const mapping::LinkParams& p = t.links[static_cast<size_t>(l)];
    json o = {{"name", t.levels[static_cast<size_t>(l)].name},
              {"link", {{"gbytes_per_s", p.gbytes_per_s}, {"latency_ns", p.latency_ns}, {"pj_per_bit", p.pj_per_bit}}}};
    if (l + 1 < t.num_levels()) {
      o["width"] = t.levels[static_cast<size_t>(l)].width;
      o["height"] = t.levels[static_cast<size_t>(l)].height;
    }
    a.push_back(o);
  }
  return a;
}

void set_level_field(json& j, const std::string& path, const json& value) {
  auto fail = [&](const std::string& why) { throw SpecError("--set " + path + ": " + why); };
  const size_t dot = path.find('.', 7);
  const std::string index = path.substr(7, dot == std::string::npos ? std::string::npos : dot - 7);
  if (dot == std::string::npos || index.empty() || index.size() > 1 ||
      !std::isdigit(static_cast<unsigned char>(index[0])))
    fail("expected levels.<index>.<field> (e.g. levels.1.link.gbytes_per_s)");
  const std::string key = path.substr(dot + 1);
  const LevelField* f = find_field(key);
  if (!f) fail("no such field of a level (nmpsim hw --fields lists them)");
  if (!j.contains("levels") || !j["levels"].is_array())
    fail("this hardware has no \"levels\" array (its hierarchy is die / wafer / links)");
  const size_t i = static_cast<size_t>(index[0] - '0');
  if (i >= j["levels"].size())
    fail("it has " + std::to_string(j["levels"].size()) + " levels (0 to " + std::to_string(j["levels"].size() - 1) +
         ")");
  const bool text = std::string(f->type) == "text";
  if (text ? !value.is_string() : !value.is_number()) fail(text ? "expected a name" : "expected a number");
  json& level = j["levels"][i];
  if (!level.is_object()) fail("levels." + index + " is not an object");
  if (key.rfind("link.", 0) == 0) {
    if (level.contains("link") && !level["link"].is_object()) fail("levels." + index + ".link is not an object");
    level["link"][key.substr(5)] = value;
  } else {
    level[key] = value;
  }
}

namespace {

/// Level `l`'s value of field `key` as the table shows it ("-" where the level has none).
std::string level_value(const mapping::Topology& t, int l, const std::string& key, bool has_links) {
  const bool last = l + 1 == t.num_levels();
  const mapping::LinkParams& p = t.links[static_cast<size_t>(l)];
  if (key == "name") return t.levels[static_cast<size_t>(l)].name;
  if (key == "width" || key == "height")
    return last ? "-"
                : std::to_string(key == "width" ? t.levels[static_cast<size_t>(l)].width
                                                : t.levels[static_cast<size_t>(l)].height);
  if (!has_links) return "-";
  return base::number_text(key == "link.gbytes_per_s" ? p.gbytes_per_s
                           : key == "link.latency_ns" ? p.latency_ns
                                                      : p.pj_per_bit);
}

}  // namespace

std::string levels_fields_markdown(const mapping::Topology* values) {
  std::string out;
  std::array<bool, mapping::kMaxLevels> present{};
  if (values) present = link_levels_present(*values);
  for (const LevelField& f : kFields) {
    out += "| `levels.<i>." + std::string(f.key) + "` | " + f.type + " | " + f.unit + " | " + f.dflt + " | " + f.range +
           " | " + f.doc + " |";
    if (values) {
      std::string cell;
      for (int l = 0; !values->classic && l < values->num_levels(); ++l)
        cell += (l ? ", " : "") + level_value(*values, l, f.key, present[static_cast<size_t>(l)]);
      out += " " + cell + " |";
    }
    out += "\n";
  }
  return out;
}

}  // namespace nmpsim::hw
