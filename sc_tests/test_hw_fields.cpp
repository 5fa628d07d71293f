// The hardware field table (hw/hardware_fields.h): every parameter declared once, and everything that
// reads, writes, checks or documents a hardware description produced from it.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "hw_test_util.h"
#include "nmpsim/hw/analytical.h"
#include "nmpsim/hw/hardware_fields.h"
#include "nmpsim/hw/hardware_spec.h"

namespace nmpsim::hw {
namespace {

using json = nlohmann::json;

/// Every leaf of a JSON object, as dotted paths.
void leaves(const json& j, const std::string& at, std::set<std::string>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string path = at.empty() ? it.key() : at + "." + it.key();
    if (it->is_object())
      leaves(*it, path, out);
    else
      out.insert(path);
  }
}

using testing::error_of;

json& at(json& j, const std::string& path) { return j[find_hardware_field(path)->pointer()]; }

/// A preset on which `f` applies: the NMP chip has on-die links only, the four-wafer system has
/// die-to-die and wafer-to-wafer links only.
HardwareSpec preset_for(const HardwareField& f) {
  const HardwareSpec nmp = preset("nmp-4x4-5t50g");
  if (!f.applies || f.applies(nmp)) return nmp;
  const HardwareSpec wafers = preset("wsc-4wafer-8x8");
  return f.applies(wafers) ? wafers : preset("gpu-cluster-32");  // the last: fixed static power
}

TEST(HwFields, EveryJsonFieldIsInTheTableOnce) {
  std::set<std::string> table;
  for (const HardwareField& f : hardware_fields()) EXPECT_TRUE(table.insert(f.path).second) << f.path;
  for (const char* name : {"nmp-4x4-5t50g", "wsc-4wafer-8x8"}) {
    std::set<std::string> written;
    leaves(to_json(preset(name)), "", written);
    // Scaled static power (both presets): the fixed figures are not written.
    for (const char* fixed_only : {"compute.static_w", "memory.background_w"})
      EXPECT_TRUE(written.insert(fixed_only).second) << name << ": " << fixed_only;
    EXPECT_EQ(written, table) << name;
  }
  // The sections a reader expects, by hand: 4 labels, 6 sizes, 10 compute, 15 memory, 11 noc, 3 collectives,
  // 9 links, 11 cost.
  EXPECT_EQ(table.size(), 71u);
}

TEST(HwFields, FormatsTableIsTheGeneratedOne) {
  std::ifstream in(std::string(NMPSIM_SOURCE_DIR) + "/docs/FORMATS.md");
  ASSERT_TRUE(in) << "docs/FORMATS.md";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str(), begin = "<!-- hardware-fields: begin -->\n", end = "<!-- hardware-fields: end -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), hardware_fields_markdown())
      << "regenerate it: build/apps/nmpsim hw --fields";
}

TEST(HwFields, EveryNumberOutsideItsRangeIsRefusedNamingTheField) {
  int checked = 0;
  for (const HardwareField& f : hardware_fields()) {
    if (f.type != FieldType::kNumber && f.type != FieldType::kInteger) continue;
    const json good = to_json(preset_for(f));
    for (const double bad : {f.min - 1, f.max * 2 + 1}) {
      json j = good;
      at(j, f.path) = f.type == FieldType::kInteger ? json(static_cast<long long>(bad)) : json(bad);
      const std::string e = error_of(j);
      EXPECT_EQ(e.rfind("hw.json: " + f.path + ": must be in [", 0), 0u) << f.path << " = " << bad << ": " << e;
      // The same check when a spec is built in code rather than read.
      HardwareSpec s = preset_for(f);
      f.set(s, f.type == FieldType::kInteger ? json(static_cast<long long>(bad)) : json(bad));
      try {
        s.validate("code");
        ADD_FAILURE() << f.path << " = " << bad << " validated";
      } catch (const SpecError& err) {
        EXPECT_NE(std::string(err.what()).find("code: " + f.path + ": "), std::string::npos) << err.what();
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * 60);  // 71 fields less 2 labels, 7 choices and 2 booleans
}

TEST(HwFields, OmittedFieldsTakeTheirDefaults) {
  const json minimal = {{"mesh", {{"width", 4}, {"height", 2}}},
                        {"wafer", {{"width", 2}, {"height", 2}}},
                        {"compute", {{"peak_tflops", 5}}},
                        {"memory", {{"capacity_bytes", 1 << 30}, {"peak_gbytes_per_s", 100}}},
                        {"links", {{"on_die", {{"gbytes_per_s", 50}}}, {"wafer_to_wafer", {{"gbytes_per_s", 10}}}}}};
  const HardwareSpec s = hardware_from_json(minimal, "minimal.json");
  // A die spans its wafer unless given; a wafer spans the mesh.
  EXPECT_EQ(s.topology.die().width, 2);
  EXPECT_EQ(s.topology.die().height, 2);
  const HardwareSpec defaults;
  for (const HardwareField& f : hardware_fields()) {
    if (f.presence == Presence::kRequired || !f.default_from.empty()) continue;
    if (f.path.rfind("links.", 0) == 0 && f.path.find("gbytes") == std::string::npos) {
      EXPECT_EQ(f.get(s), json(f.path.find("latency") != std::string::npos ? 2.0 : 0.2)) << f.path;
      continue;
    }
    if (f.path == "cost.static_power") {  // no "cost" object: a description of before issue 40, fixed
      EXPECT_EQ(f.get(s), "fixed");
      continue;
    }
    EXPECT_EQ(f.get(s), f.get(defaults)) << f.path;
  }
  // Documented defaults (docs/MODEL.md), by hand.
  EXPECT_DOUBLE_EQ(s.compute.startup_ns, 50);
  EXPECT_EQ(s.noc.vcs, 2);
  EXPECT_EQ(s.noc.router_kind, noc::RouterKind::kVirtualChannel);
  EXPECT_EQ(s.node_kind, NodeKind::kNmpPe);
  EXPECT_EQ(s.memory.kind, dram::DramKind::kHybridBonded);
  EXPECT_DOUBLE_EQ(s.noc.flow_link_efficiency, 0.9);
}

TEST(HwFields, LinkLevelsAreRequiredWhereTheTopologyHasThem) {
  // One node has no links: its "links" object may be empty (the on-die default sets the flit width).
  const json one = {{"mesh", {{"width", 1}, {"height", 1}}},
                    {"compute", {{"peak_tflops", 5}}},
                    {"memory", {{"capacity_bytes", 1 << 30}, {"peak_gbytes_per_s", 100}}},
                    {"links", json::object()}};
  EXPECT_EQ(error_of(one), "");
  // Two dies of one node each: die-to-die links, and no on-die ones.
  json two = one;
  two["mesh"]["width"] = 2;
  two["die"] = {{"width", 1}, {"height", 1}};
  EXPECT_EQ(error_of(two), "hw.json: links.die_to_die: missing (required where the topology has die-to-die links)");
  two["links"]["die_to_die"] = json::object();
  EXPECT_EQ(error_of(two),
            "hw.json: links.die_to_die.gbytes_per_s: missing (required where the topology has die-to-die links)");
  two["links"]["die_to_die"]["gbytes_per_s"] = 10;
  EXPECT_EQ(error_of(two), "");
}

TEST(HwFields, NocDefaultsAreTheStandaloneNocsAndReachTheAnalyticalView) {
  const NocParams p;
  const noc::NocConfig c;
  EXPECT_EQ(p.vcs, c.vcs);
  EXPECT_EQ(p.router_delay_cycles, c.router_delay_cycles);
  EXPECT_EQ(p.max_packet_flits, c.max_packet_flits);
  EXPECT_EQ(p.ni_queues, c.ni_queues);
  EXPECT_EQ(p.clock_ghz, c.clock_ghz);
  EXPECT_EQ(p.router_kind, c.router_kind);
  // The flow parameters keep their names on the way to the flow model.
  HardwareSpec s = preset("wsc-4x4");
  s.noc.flow_link_efficiency = 0.7;
  s.noc.flow_resolve_fraction = 0.25;
  const mapping::AnalyticalHardware a = to_analytical(s);
  EXPECT_EQ(a.flow_link_efficiency, 0.7);
  EXPECT_EQ(a.flow_resolve_fraction, 0.25);
}

TEST(HwFields, ChoicesAreEnumsWithTheirNames) {
  for (const HardwareField& f : hardware_fields()) {
    if (f.type != FieldType::kChoice) continue;
    for (const std::string& name : f.choices) {
      json j = to_json(preset("nmp-4x4-5t50g"));
      at(j, f.path) = name;
      if (f.path == "noc.router_kind" && name == "lookahead") at(j, "noc.vcs") = 1;
      EXPECT_EQ(f.get(hardware_from_json(j, "hw.json")), json(name)) << f.path;
    }
    json j = to_json(preset("nmp-4x4-5t50g"));
    at(j, f.path) = "wormhole";
    // "must be "a" or "b"", or "must be "a", "b" or "c""
    std::string list = "\"" + f.choices[0] + "\"";
    for (size_t i = 1; i < f.choices.size(); ++i)
      list += (i + 1 == f.choices.size() ? " or \"" : ", \"") + f.choices[i] + "\"";
    EXPECT_NE(error_of(j).find(f.path + ": must be " + list), std::string::npos) << error_of(j);
  }
}

TEST(HwFields, RowBytesArePowersOfTwo) {
  json j = to_json(preset("nmp-4x4-5t50g"));
  j["memory"]["row_bytes"] = 3000;
  EXPECT_EQ(error_of(j), "hw.json: memory.row_bytes: must be a power of two (got 3000)");
}

TEST(HwFields, RangesAndDefaultsAsTheDocsWriteThem) {
  EXPECT_EQ(find_hardware_field("compute.peak_tflops")->range_text(), "[0.001, 1e6]");
  EXPECT_EQ(find_hardware_field("compute.peak_tflops")->default_text(), "required");
  EXPECT_EQ(find_hardware_field("memory.row_bytes")->range_text(), "power of two, 64..2^20");
  EXPECT_EQ(find_hardware_field("memory.row_bytes")->default_text(), "2048");
  EXPECT_EQ(find_hardware_field("noc.router_kind")->range_text(), "`vc`, `lookahead`");
  EXPECT_EQ(find_hardware_field("noc.buffer_flits")->default_text(), "0 (0: sized to the credit round trip)");
  EXPECT_EQ(find_hardware_field("die.width")->default_text(), "`wafer.width`");
  EXPECT_EQ(find_hardware_field("no.such"), nullptr);
}

}  // namespace
}  // namespace nmpsim::hw
