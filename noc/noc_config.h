// NoC configuration: mesh size, router micro-architecture and per-link timing.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace nmpsim::noc {

/// Thrown for any invalid NoC parameter; the message is one line naming the field.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& what) : std::runtime_error(one_line(what)) {}

 private:
  static std::string one_line(std::string s) {
    for (char& c : s)
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    return s;
  }
};

/// Router ports. Mesh convention: x grows East, y grows South; node id = y * width + x.
enum Port : uint8_t { kNorth = 0, kEast = 1, kSouth = 2, kWest = 3, kLocal = 4 };
inline constexpr int kNumPorts = 5;  ///< ports of a router with one local (network-interface) port
inline constexpr int kNumMeshDirs = 4;
inline constexpr int kMaxNiQueues = 16;
/// Local ports a router may have (NocConfig::ni_ports): ports kLocal .. kLocal + ni_ports - 1.
inline constexpr int kMaxNiPorts = 4;
inline constexpr int kMaxPorts = kNumMeshDirs + kMaxNiPorts;
const char* port_name(int port);
inline constexpr int opposite_port(int p) { return p >= kLocal ? p : (p + 2) % 4; }

/// Timing of one directed inter-router link.
struct LinkSpec {
  uint32_t latency_cycles = 1;
  /// Flits per cycle this link carries, in (0, 1]. A full-width link moves one flit per cycle;
  /// a slower link (die / wafer boundary) needs 1/bandwidth_flits_per_cycle cycles per flit.
  double bandwidth_flits_per_cycle = 1.0;
};

/// Router micro-architecture: the input-buffered VC router (noc/router.h; engine, SystemC and
/// RTL) or the look-ahead router (noc/la_router.h; no VCs, valid/stop handshakes behind
/// noc::ValidStopAdapter; SystemC model and RTL, clocked every cycle: no engine fast path).
enum class RouterKind { kVirtualChannel, kLookahead };
const char* router_kind_name(RouterKind k);
/// "vc" or "lookahead"; throws ConfigError naming `field` otherwise.
RouterKind parse_router_kind(const std::string& name, const std::string& field);

struct NocConfig {
  int width = 8;
  int height = 8;
  RouterKind router_kind = RouterKind::kVirtualChannel;
  int vcs = 2;                  ///< virtual channels per input port (1 for the look-ahead router)
  int buffer_flits = 8;         ///< flit slots per VC buffer
  int router_delay_cycles = 2;  ///< buffer write -> switch traversal, at zero load
  int link_delay_cycles = 1;    ///< default wire latency of every inter-router link
  uint32_t flit_bytes = 16;     ///< payload bytes per flit (header travels in sideband bits)
  int max_packet_flits = 16;    ///< messages are cut into packets of at most this many flits
  /// Injection queues per network interface (DMA queues): each message goes whole to one queue, the
  /// queues send packets of different messages interleaved flit by flit (round robin), each packet on
  /// a VC no other queue holds. 0 = one queue per VC (docs/MODEL.md "Network interface").
  int ni_queues = 0;
  /// Ports between a router and its network interface, each with `vcs` VCs and one flit per cycle
  /// each way (docs/MODEL.md "Network interfaces and messages"): a node injects and ejects up to
  /// ni_ports flits per cycle. Queue q injects on port q mod ni_ports; a flit that arrived on mesh input
  /// port i leaves on local port base::eject_port(i, ni_ports). 1 to kMaxNiPorts; the look-ahead router
  /// has one.
  int ni_ports = 1;
  double clock_ghz = 1.0;            ///< router clock
  uint64_t watchdog_cycles = 20000;  ///< stall if flits are in flight and nothing moves this long
  /// Replay repeated sessions instead of simulating them again (noc/session_cache.h; same results).
  /// Used by noc::MeshModule; a plain noc::Network only replays when asked (set_session_replay).
  bool replay_sessions = true;

  /// Overrides for individual directed links, keyed by link_key(node, direction).
  std::unordered_map<uint32_t, LinkSpec> link_overrides;

  int nodes() const { return width * height; }
  int ni_queue_count() const { return ni_queues > 0 ? ni_queues : vcs * ni_ports; }
  int router_ports() const { return kNumMeshDirs + ni_ports; }
  static uint32_t link_key(int node, int dir) { return static_cast<uint32_t>(node) * kNumMeshDirs + dir; }
  /// Sets the link leaving `node` towards `dir` (North/East/South/West).
  void set_link(int node, int dir, const LinkSpec& spec) { link_overrides[link_key(node, dir)] = spec; }
  LinkSpec link(int node, int dir) const;

  /// Throws ConfigError with a one-line message naming the offending field.
  void validate() const;
};

/// XY dimension-order route at the router (x, y) towards (dx, dy): first along X, then along Y,
/// then Local (x grows East, y grows South).
int xy_port(int x, int y, int dx, int dy);

/// Coordinates and neighbourhood of a W x H mesh.
struct MeshGeometry {
  int width = 0;
  int height = 0;
  int x(int node) const { return node % width; }
  int y(int node) const { return node / width; }
  int id(int x, int y) const { return y * width + x; }
  /// Neighbour of `node` through mesh port `dir`, or -1 at the mesh edge.
  int neighbour(int node, int dir) const;
  /// XY dimension-order route: first along X, then along Y, then Local.
  int route_xy(int node, int dst) const;
  int hops(int src, int dst) const;
  std::string coord(int node) const;
};

}  // namespace nmpsim::noc
