// The "hierarchy" hardware report (`nmpsim hw --report hierarchy`): the hierarchy levels HierMoE and
// HybridEP see on a system, and with fit=true the alpha-beta cost of every kind of all-to-all fitted
// on the flow-level NoC (level_fit.h). Registered with the shared pieces of methods/common.
#include <cstdio>
#include <string>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/registry.h"
#include "nmpsim/methods/common/hierarchy.h"
#include "nmpsim/methods/common/level_fit.h"

namespace nmpsim::methods::common {

namespace {

/// Fitting simulates every kind of all-to-all of the hierarchy at six sizes on the flow model: 5.6 s at
/// 256 nodes, minutes at 1024 (docs/FORMATS.md "Limits").
constexpr int kMaxFitNodes = 256;

std::string report(const mapping::AnalyticalHardware& hw, const nlohmann::json& options, const std::string& where) {
  const base::JsonFields f(options, where, "");
  const int levels = static_cast<int>(f.integer("virtual_levels", 0, 8, 0));
  const bool fit = f.boolean("fit", false);
  f.no_unknown_keys();
  const int n = hw.topology.nodes();
  if (fit && n > kMaxFitNodes)
    throw mapping::InputError(where + ": fit: " + std::to_string(n) + " nodes; at most " +
                              std::to_string(kMaxFitNodes) + " (it simulates every kind of all-to-all at six sizes)");
  const Hierarchy h = make_hierarchy(hw.topology, levels, where + ": virtual_levels");
  std::string out = "  hierarchy: D = " + std::to_string(h.dimensions());
  char line[256];
  for (const auto& l : h.levels) {
    std::snprintf(line, sizeof line, "; %s: %d groups of %d nodes", l.name.c_str(), l.groups, h.nodes() / l.groups);
    out += line;
  }
  out += h.levels.empty() ? " (no level; virtual_levels=N adds quadrant levels)\n" : "\n";
  if (!fit) return out;
  const LevelFit lf = fit_levels(hw, h);
  out += "  all-to-all costs (flow-level NoC, t = alpha + n beta, n = one group's bytes):\n";
  std::snprintf(line, sizeof line, "    %-22s %12s %10s %18s %8s\n", "kind", "participants", "alpha_us",
                "beta_ns_per_kbyte", "R^2");
  out += line;
  for (const auto& k : lf.kinds) {
    std::snprintf(line, sizeof line, "    %-22s %12d %10.4g %18.4g %8.5f\n", k.kind.c_str(), k.participants,
                  k.cost.alpha_s * 1e6, k.cost.beta_s_per_byte * 1e12, k.r2);
    out += line;
  }
  return out;
}

}  // namespace

void register_methods(mapping::Registry& r) {
  mapping::HardwareReport h;
  h.name = "hierarchy";
  h.description =
      "the hierarchy levels HierMoE and HybridEP see (wafers, virtual quadrants, dies), optionally "
      "with every all-to-all kind's fitted alpha-beta cost";
  h.options = {{"virtual_levels", "0", "recursive 2x2 quadrant levels inside the finest real group (0-8)"},
               {"fit", "false", "fit alpha and beta of every kind of all-to-all on the flow-level NoC (<= 256 nodes)"}};
  h.report = report;
  r.add(std::move(h));
}

}  // namespace nmpsim::methods::common
