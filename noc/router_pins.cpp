#include "nmpsim/noc/router_pins.h"

namespace nmpsim::noc {

RouterParams RouterParams::of(const NocConfig& cfg, int node) {
  RouterParams p;
  p.node = node;
  p.geo = MeshGeometry{cfg.width, cfg.height};
  p.vcs = cfg.vcs;
  p.buffer_flits = cfg.buffer_flits;
  p.router_delay_cycles = cfg.router_delay_cycles;
  p.ni_ports = cfg.ni_ports;
  p.max_packet_flits = cfg.max_packet_flits;
  for (int dir = 0; dir < kNumMeshDirs; ++dir)
    if (p.geo.neighbour(node, dir) >= 0) p.links[dir] = OutputLinkTiming::from(cfg.link(node, dir));
  return p;
}

}  // namespace nmpsim::noc
