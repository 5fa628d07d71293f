#include "nmpsim/apps/router_choice.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/base/parse.h"
#include "nmpsim/noc/valid_stop_adapter.h"
#include "nmpsim/rtl_checks/described_credit.h"
#include "nmpsim/rtl_checks/described_router.h"
#include "nmpsim/rtl_checks/la_router_rtl.h"
#include "nmpsim/rtl_checks/rtl_router.h"

namespace nmpsim::apps {

namespace {
/// Parses "0,5,10" into node ids inside the mesh.
std::set<int> parse_node_list(const std::string& text, int nodes) {
  std::set<int> out;
  if (text.empty()) throw UsageError("--rtl-nodes: empty list");
  for (const std::string& item : base::split_items(text, "--rtl-nodes")) {
    const bool digits = item.size() <= 9 && item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      throw UsageError("--rtl-nodes: '" + item + "' is not a node id (expected a comma-separated list like 0,5,10)");
    const long long v = std::stoll(item);
    if (v >= nodes)
      throw UsageError("--rtl-nodes: node " + item + " is outside the " + std::to_string(nodes) + "-node mesh");
    if (!out.insert(static_cast<int>(v)).second) throw UsageError("--rtl-nodes: node " + item + " is listed twice");
  }
  return out;
}

}  // namespace

void load_rtl_plugins(std::vector<std::string>& args) {
  std::vector<std::pair<std::string, bool>> files;  // (path, named by NMPSIM_RTL_PLUGINS)
  if (const char* env = std::getenv("NMPSIM_RTL_PLUGINS"); env != nullptr && *env != '\0') {
    const std::string list(env);
    for (size_t at = 0; at <= list.size();) {
      const size_t end = std::min(list.find(':', at), list.size());
      if (end > at) files.emplace_back(list.substr(at, end - at), true);
      at = end + 1;
    }
  }
  const std::string opt = "--rtl-plugin";
  for (size_t i = 0; i < args.size();) {
    if (args[i] == opt) {
      if (i + 1 >= args.size()) throw UsageError("--rtl-plugin: the option needs a file");
      files.emplace_back(args[i + 1], false);
      args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + 2);
    } else if (args[i].rfind(opt + "=", 0) == 0) {
      files.emplace_back(args[i].substr(opt.size() + 1), false);
      args.erase(args.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  for (const auto& [f, env] : files)
    if (f.empty() || f.find(':') != std::string::npos)
      throw UsageError("--rtl-plugin: '" + f + "' is not a file name (empty, or contains ':')");
  std::string all;
  for (const auto& [f, env] : files) {
    try {
      all += (all.empty() ? "" : ":") + rtl::load_rtl_plugin(f);
    } catch (const noc::ConfigError& e) {
      if (!env) throw;
      throw noc::ConfigError(std::string("NMPSIM_RTL_PLUGINS: ") + e.what());
    }
  }
  if (!all.empty()) ::setenv("NMPSIM_RTL_PLUGINS", all.c_str(), 1);
}

std::string adapter_note(const RouterChoice& rc, const noc::NocConfig& noc) {
  const rtl::DescribedRouter* r = rc.own_rtl ? rtl::find_described_router(rc.rtl_name) : nullptr;
  if (r == nullptr || r->description.protocol == rtl::Protocol::kCredit) return "";
  const rtl::RouterDescription& d = r->description;
  const char* protocol = d.protocol == rtl::Protocol::kValidStop ? "valid/stop"
                         : d.valid_hold                          ? "valid/ready"
                                                                 : "valid/ready without hold";
  return "rtl:" + d.name + " (" + protocol + ") sits behind the adapter's " + std::to_string(noc.buffer_flits) +
         "-flit credit buffer per input (noc.buffer_flits), in front of its own FIFOs";
}

const std::vector<RtlRouterInfo>& rtl_routers() {
  static const std::vector<RtlRouterInfo> all = [] {
    std::vector<RtlRouterInfo> v = {
        {"nmp", noc::RouterKind::kVirtualChannel, false},  // rtl_checks/rtl/nmp_router.sv, the VC router's twin
        {"la", noc::RouterKind::kLookahead, false},        // rtl_checks/rtl/la_router.sv, the look-ahead router
    };
    for (const rtl::DescribedRouter& r : rtl::described_routers())  // rtl_checks/routers.cmake
      if (r.description.name != "la") v.push_back({r.description.name.c_str(), noc::RouterKind::kVirtualChannel, true});
    return v;
  }();
  return all;
}

const RtlRouterInfo* find_rtl_router(const std::string& name) {
  for (const RtlRouterInfo& r : rtl_routers())
    if (name == r.name) return &r;
  return nullptr;
}

std::string rtl_router_names() {
  std::string s;
  for (const RtlRouterInfo& r : rtl_routers()) s += (s.empty() ? "" : ", ") + std::string(r.name);
  return s;
}

void check_router_name(const std::string& router) {
  const size_t colon = router.find(':');
  const std::string kind = router.substr(0, colon);
  if (kind != "engine" && kind != "sc" && kind != "rtl" && kind != "mixed")
    throw UsageError("--router: unknown implementation '" + router +
                     "' (expected engine, sc, rtl[:NAME] or mixed[:NAME])");
  if (colon == std::string::npos) return;
  if (kind != "rtl" && kind != "mixed")
    throw UsageError("--router: only rtl and mixed take an RTL router's name (got '" + router + "')");
  const std::string name = router.substr(colon + 1);
  if (!find_rtl_router(name))
    throw UsageError("--router: no RTL router named '" + name + "' (registered: " + rtl_router_names() + ")");
}

RouterChoice parse_router_choice(const std::string& router, const std::string& rtl_nodes, bool rtl_nodes_given,
                                 const noc::NocConfig& noc) {
  check_router_name(router);
  RouterChoice rc;
  const size_t colon = router.find(':');
  rc.kind = router.substr(0, colon);
  // Pin-level routers are SystemC modules clocked every cycle: elaborating 64x64 of them takes ~8 s and
  // ~140 MB; 256x256 would take minutes before the first cycle (docs/PERFORMANCE.md).
  constexpr int kMaxPinRouters = 4096;
  if (rc.kind != "engine" && noc.nodes() > kMaxPinRouters)
    throw UsageError("--router " + router + ": " + std::to_string(noc.nodes()) + " pin-level routers; at most " +
                     std::to_string(kMaxPinRouters) + " (64x64) are built (the engine takes up to 256x256)");
  if ((rc.kind == "rtl" || rc.kind == "mixed") && noc.ni_ports != 1)
    throw UsageError("--router " + router + ": the RTL routers have one local port; noc.ni_ports is " +
                     std::to_string(noc.ni_ports) + " (use --router engine or sc, or noc.ni_ports=1)");
  rc.router_kind = noc.router_kind;
  if (colon != std::string::npos) {
    rc.rtl_name = router.substr(colon + 1);
    const RtlRouterInfo* info = find_rtl_router(rc.rtl_name);
    if (info->own && noc.vcs != 1)
      throw UsageError("--router " + router +
                       ": an RTL router of your own has no virtual channels: set --vcs 1 (noc.vcs)");
    if (!info->own && info->kind != noc.router_kind)
      throw UsageError("--router " + router + ": that RTL is a " + noc::router_kind_name(info->kind) +
                       " router but the mesh's router kind is " + noc::router_kind_name(noc.router_kind) +
                       " (--router-kind, or noc.router_kind in the hardware)");
    rc.own_rtl = info->own;
  } else if (rc.kind == "rtl" || rc.kind == "mixed") {
    rc.rtl_name = noc.router_kind == noc::RouterKind::kLookahead ? "la" : "nmp";
  }
  if (rtl_nodes_given && rc.kind != "mixed") throw UsageError("--rtl-nodes needs --router mixed");
  const noc::MeshGeometry geo{noc.width, noc.height};
  if (rc.kind == "mixed") {
    if (rtl_nodes_given) {
      rc.rtl_nodes = parse_node_list(rtl_nodes, noc.nodes());
    } else {
      for (int n = 0; n < noc.nodes(); ++n)
        if ((geo.x(n) + geo.y(n)) % 2 == 0) rc.rtl_nodes.insert(n);
    }
  }
  if (rc.rtl_name == "nmp") {
    rtl::check_rtl_fits(noc);
  } else if (!rc.rtl_name.empty()) {
    const rtl::DescribedRouter& r = *rtl::find_described_router(rc.rtl_name);
    rtl::check_fits(r, noc.buffer_flits, noc.width, noc.height, noc.max_packet_flits);
    for (int n = 0; n < noc.nodes(); ++n)
      if (rc.rtl_at(n)) rtl::check_credit_links(r, noc::RouterParams::of(noc, n));
  }
  return rc;
}

void settle_noc_router(const std::string& router_kind, bool kind_given, bool vcs_given, bool router_given,
                       std::string& router, noc::NocConfig& noc) {
  const size_t colon = router.find(':');
  const std::string rtl_name = colon == std::string::npos ? "" : router.substr(colon + 1);
  noc.router_kind =
      noc::parse_router_kind(rtl_name == "la" && !kind_given ? "lookahead" : router_kind, "--router-kind");
  const RtlRouterInfo* info = rtl_name.empty() ? nullptr : find_rtl_router(rtl_name);
  const bool own = info && info->own;
  if (!vcs_given && (own || noc.router_kind == noc::RouterKind::kLookahead)) noc.vcs = 1;
  if (noc.router_kind != noc::RouterKind::kLookahead) return;
  if (!router_given) router = "sc";
  if (router == "engine")
    throw UsageError("--router engine: the look-ahead router has no engine model (use sc, its cycle model, or rtl)");
}

noc::RouterFactory router_factory(const RouterChoice& rc) {
  const bool la = rc.router_kind == noc::RouterKind::kLookahead;
  if (rc.kind == "engine") return {};  // a look-ahead mesh then runs its cycle model (noc::MeshModule)
  if (rc.kind == "sc") return la ? noc::la_model_factory() : noc::sc_router_factory();
  if (rc.own_rtl)  // a router of your own; the SystemC model of the mesh's kind elsewhere
    return rtl::described_factory(
        rc.rtl_name, [rc](int n) { return rc.rtl_at(n); }, la ? noc::la_model_factory() : noc::sc_router_factory());
  if (la) return rtl::la_mixed_factory([rc](int n) { return rc.rtl_at(n); });
  return rtl::mixed_router_factory([rc](int n) { return rc.rtl_at(n); });
}

}  // namespace nmpsim::apps
