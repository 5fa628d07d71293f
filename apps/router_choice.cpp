#include "apps/router_choice.h"

#include <sstream>

#include "apps/cli_common.h"
#include "rtl_checks/rtl_router.h"

namespace nmpsim::apps {

namespace {
/// Parses "0,5,10" into node ids inside the mesh.
std::set<int> parse_node_list(const std::string& text, int nodes) {
  std::set<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size())
      throw UsageError("--rtl-nodes: '" + item + "' is not a node id (expected a comma-separated list like 0,5,10)");
    if (v < 0 || v >= nodes)
      throw UsageError("--rtl-nodes: node " + item + " is outside the " + std::to_string(nodes) + "-node mesh");
    out.insert(static_cast<int>(v));
  }
  if (out.empty()) throw UsageError("--rtl-nodes: empty list");
  return out;
}

}  // namespace

RouterChoice parse_router_choice(const std::string& kind, const std::string& rtl_nodes, bool rtl_nodes_given,
                                 const noc::NocConfig& noc) {
  RouterChoice rc;
  rc.kind = kind;
  if (kind != "engine" && kind != "sc" && kind != "rtl" && kind != "mixed")
    throw UsageError("--router: unknown implementation '" + kind + "' (expected engine, sc, rtl or mixed)");
  if (rtl_nodes_given && kind != "mixed") throw UsageError("--rtl-nodes needs --router mixed");
  const noc::MeshGeometry geo{noc.width, noc.height};
  if (kind == "mixed") {
    if (rtl_nodes_given) {
      rc.rtl_nodes = parse_node_list(rtl_nodes, noc.nodes());
    } else {
      for (int n = 0; n < noc.nodes(); ++n)
        if ((geo.x(n) + geo.y(n)) % 2 == 0) rc.rtl_nodes.insert(n);
    }
  }
  if (kind == "rtl" || kind == "mixed") rtl::check_rtl_fits(noc);
  return rc;
}

noc::RouterFactory router_factory(const RouterChoice& rc) {
  if (rc.kind == "engine") return {};
  if (rc.kind == "sc") return noc::sc_router_factory();
  return rtl::mixed_router_factory([rc](int n) { return rc.rtl_at(n); });
}

}  // namespace nmpsim::apps
