// Which router runs at each mesh node (`nmpsim noc --router`, `nmpsim run --router`): the engine's
// built-in one, or pin-level modules: SystemC (sc), Verilated RTL (rtl) or a mix of the two.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "nmpsim/noc/noc_config.h"
#include "nmpsim/noc/pin_mesh.h"

namespace nmpsim::apps {

struct RouterChoice {
  std::string kind = "engine";  // engine | sc | rtl | mixed
  std::string rtl_name;         // rtl, mixed: the RTL router (rtl_routers())
  bool own_rtl = false;         // rtl_name is a router of your own (rtl_checks/routers.cmake)
  noc::RouterKind router_kind = noc::RouterKind::kVirtualChannel;  // the mesh's micro-architecture
  std::set<int> rtl_nodes;                                         // mixed: the RTL nodes
  bool rtl_at(int node) const { return kind == "rtl" || (kind == "mixed" && rtl_nodes.count(node)); }
  bool pin_level() const { return kind != "engine"; }
};

/// The registered RTL routers: `--router rtl:NAME`.
struct RtlRouterInfo {
  const char* name;
  noc::RouterKind kind;  ///< the micro-architecture it implements (its model is the SystemC router)
  bool own;              ///< a router of your own (nmpsim_add_router_rtl): no model, any kind, vcs 1
};
const std::vector<RtlRouterInfo>& rtl_routers();
/// The registered RTL router `name`, or nullptr.
const RtlRouterInfo* find_rtl_router(const std::string& name);
/// "nmp, la, ..." for errors.
std::string rtl_router_names();
/// Checks --router's syntax and RTL name, which need no mesh (so a run can refuse them before it
/// solves placements); throws UsageError naming the option.
void check_router_name(const std::string& router);

/// Parses --router KIND[:NAME] and --rtl-nodes LIST (empty: not given; mixed then takes the checkerboard of
/// nodes with x + y even) for a mesh; throws UsageError naming the option; checks the RTL's capacities.
RouterChoice parse_router_choice(const std::string& router, const std::string& rtl_nodes, bool rtl_nodes_given,
                                 const noc::NocConfig& noc);
/// nmpsim noc: the router kind and VC count --router implies. rtl:la is a look-ahead router; it and an
/// RTL of your own have no VCs (vcs becomes 1 unless given); the look-ahead kind has no
/// engine model, so --router defaults to sc and engine is refused. Sets noc.router_kind and noc.vcs.
void settle_noc_router(const std::string& router_kind, bool kind_given, bool vcs_given, bool router_given,
                       std::string& router, noc::NocConfig& noc);
/// Loads the router plugins named by NMPSIM_RTL_PLUGINS (paths separated by ':') and by every
/// `--rtl-plugin FILE` (or `--rtl-plugin=FILE`) in `args`, which it removes; then sets
/// NMPSIM_RTL_PLUGINS to all of them, so that the processes a command starts load them too. Throws
/// UsageError or noc::ConfigError (one line naming the file).
void load_rtl_plugins(std::vector<std::string>& args);
/// For a described valid/stop or valid/ready router: one line saying what the adapter adds in front
/// of it ("... behind the adapter's 8-flit buffer per input ..."); empty otherwise.
std::string adapter_note(const RouterChoice& rc, const noc::NocConfig& noc);
/// The routers' factory: empty for the engine.
noc::RouterFactory router_factory(const RouterChoice& rc);

}  // namespace nmpsim::apps
