#include "nmpsim/noc/noc_config.h"

#include <cmath>
#include <cstdlib>

namespace nmpsim::noc {

const char* port_name(int port) {
  static const char* const kNames[kMaxPorts] = {"N", "E", "S", "W", "L", "L1", "L2", "L3"};
  return (port >= 0 && port < kMaxPorts) ? kNames[port] : "?";
}

LinkSpec NocConfig::link(int node, int dir) const {
  auto it = link_overrides.find(link_key(node, dir));
  if (it != link_overrides.end()) return it->second;
  LinkSpec spec;
  spec.latency_cycles = static_cast<uint32_t>(link_delay_cycles);
  return spec;
}

namespace {
void require(bool ok, const std::string& msg) {
  if (!ok) throw ConfigError(msg);
}
}  // namespace

const char* router_kind_name(RouterKind k) { return k == RouterKind::kLookahead ? "lookahead" : "vc"; }

RouterKind parse_router_kind(const std::string& name, const std::string& field) {
  if (name == "vc") return RouterKind::kVirtualChannel;
  if (name == "lookahead") return RouterKind::kLookahead;
  throw ConfigError(field + ": unknown router kind '" + name + "' (expected vc or lookahead)");
}

void NocConfig::validate() const {
  require(width >= 1 && height >= 1,
          "noc: mesh must be at least 1x1 (got " + std::to_string(width) + "x" + std::to_string(height) + ")");
  require(width <= 256 && height <= 256, "noc: mesh dimensions must be at most 256 (got " + std::to_string(width) +
                                             "x" + std::to_string(height) + ")");
  require(vcs >= 1 && vcs <= 8, "noc: vcs must be in [1, 8] (got " + std::to_string(vcs) + ")");
  require(router_kind != RouterKind::kLookahead || vcs == 1,
          "noc: the look-ahead router has no virtual channels: vcs must be 1 (got " + std::to_string(vcs) + ")");
  require(buffer_flits >= 1 && buffer_flits <= 1024,
          "noc: buffer_flits must be in [1, 1024] (got " + std::to_string(buffer_flits) + ")");
  require(router_delay_cycles >= 1 && router_delay_cycles <= 64,
          "noc: router_delay_cycles must be in [1, 64] (got " + std::to_string(router_delay_cycles) + ")");
  require(link_delay_cycles >= 1 && link_delay_cycles <= 4096,
          "noc: link_delay_cycles must be in [1, 4096] (got " + std::to_string(link_delay_cycles) + ")");
  require(flit_bytes >= 1, "noc: flit_bytes must be at least 1");
  require(max_packet_flits >= 1 && max_packet_flits <= 65535,
          "noc: max_packet_flits must be in [1, 65535] (got " + std::to_string(max_packet_flits) + ")");
  require(ni_queues >= 0 && ni_queues <= kMaxNiQueues, "noc: ni_queues must be in [0, " + std::to_string(kMaxNiQueues) +
                                                           "] (got " + std::to_string(ni_queues) + "; 0 = one per VC)");
  require(ni_ports >= 1 && ni_ports <= kMaxNiPorts,
          "noc: ni_ports must be in [1, " + std::to_string(kMaxNiPorts) + "] (got " + std::to_string(ni_ports) + ")");
  require(router_kind != RouterKind::kLookahead || ni_ports == 1,
          "noc: the look-ahead router has one local port: ni_ports must be 1 (got " + std::to_string(ni_ports) + ")");
  require(ni_queues == 0 || ni_queues >= ni_ports, "noc: ni_queues " + std::to_string(ni_queues) +
                                                       " leaves a local port without a queue (ni_ports " +
                                                       std::to_string(ni_ports) + "; 0 = one per VC)");
  require(std::isfinite(clock_ghz) && clock_ghz > 0.0 && clock_ghz <= 100.0, "noc: clock_ghz must be in (0, 100]");
  require(watchdog_cycles >= 1, "noc: watchdog_cycles must be at least 1");
  MeshGeometry geo{width, height};
  for (const auto& [key, spec] : link_overrides) {
    const int node = static_cast<int>(key / kNumMeshDirs);
    const int dir = static_cast<int>(key % kNumMeshDirs);
    const std::string where =
        "noc: link " + (node < nodes() ? geo.coord(node) : std::to_string(node)) + "->" + port_name(dir);
    require(node < nodes() && geo.neighbour(node, dir) >= 0, where + " does not exist in the mesh");
    require(spec.latency_cycles >= 1 && spec.latency_cycles <= 4096, where + ": latency_cycles must be in [1, 4096]");
    require(std::isfinite(spec.bandwidth_flits_per_cycle) && spec.bandwidth_flits_per_cycle > 0.0 &&
                spec.bandwidth_flits_per_cycle <= 1.0,
            where + ": bandwidth_flits_per_cycle must be in (0, 1]");
    require(spec.bandwidth_flits_per_cycle >= 1.0 / 4096, where + ": bandwidth below 1/4096 flit per cycle");
  }
}

int MeshGeometry::neighbour(int node, int dir) const {
  const int nx = x(node), ny = y(node);
  switch (dir) {
    case kNorth:
      return ny > 0 ? node - width : -1;
    case kSouth:
      return ny + 1 < height ? node + width : -1;
    case kEast:
      return nx + 1 < width ? node + 1 : -1;
    case kWest:
      return nx > 0 ? node - 1 : -1;
    default:
      return -1;
  }
}

int xy_port(int x, int y, int dx, int dy) {
  if (dx > x) return kEast;
  if (dx < x) return kWest;
  if (dy > y) return kSouth;
  if (dy < y) return kNorth;
  return kLocal;
}

int MeshGeometry::route_xy(int node, int dst) const { return xy_port(x(node), y(node), x(dst), y(dst)); }

int MeshGeometry::hops(int src, int dst) const { return std::abs(x(src) - x(dst)) + std::abs(y(src) - y(dst)); }

std::string MeshGeometry::coord(int node) const {
  return "(" + std::to_string(x(node)) + "," + std::to_string(y(node)) + ")";
}

}  // namespace nmpsim::noc
