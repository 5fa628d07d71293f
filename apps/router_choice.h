// Which router runs at each mesh node (`nmpsim noc --router`, `nmpsim run --router`): the engine's
// built-in one, or pin-level modules: SystemC (sc), Verilated RTL (rtl) or a mix of the two.
#pragma once

#include <set>
#include <string>

#include "noc/noc_config.h"
#include "noc/pin_mesh.h"

namespace nmpsim::apps {

struct RouterChoice {
  std::string kind = "engine";  // engine | sc | rtl | mixed
  std::set<int> rtl_nodes;      // mixed: the RTL nodes
  bool rtl_at(int node) const { return kind == "rtl" || (kind == "mixed" && rtl_nodes.count(node)); }
  bool pin_level() const { return kind != "engine"; }
};

/// Parses --router KIND and --rtl-nodes LIST (empty: not given; mixed then takes the checkerboard of
/// nodes with x + y even) for a mesh; throws UsageError naming the option; checks the RTL's capacities.
RouterChoice parse_router_choice(const std::string& kind, const std::string& rtl_nodes, bool rtl_nodes_given,
                                 const noc::NocConfig& noc);
/// The routers' factory: empty for the engine.
noc::RouterFactory router_factory(const RouterChoice& rc);

}  // namespace nmpsim::apps
