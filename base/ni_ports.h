// Which local port of a router a flit for its own node leaves on: one rule for the cycle-level router
// (noc/router_stages.h) and the flow model (flow/fluid_network.cpp), so that the two cannot drift
// (docs/MODEL.md "Network interfaces and messages").
#pragma once

namespace nmpsim::base {

/// The local port (0 .. ports - 1) of a flit that arrived at its destination on mesh input port
/// `in_dir` (N 0, E 1, S 2, W 3). Under XY routing a message from another row arrives from the north or
/// the south and one from the same row from the east or the west, so the two vertical directions take
/// different ports first: 2 ports: N, E -> 0 and S, W -> 1; 3 ports: N -> 0, S -> 1, E and W -> 2;
/// 4 ports: one each.
constexpr int eject_port(int in_dir, int ports) {
  if (ports <= 1) return 0;
  if (ports == 2) return (in_dir & 3) <= 1 ? 0 : 1;
  if (ports == 3) return (in_dir & 3) == 0 ? 0 : (in_dir & 3) == 2 ? 1 : 2;
  return in_dir & 3;
}

}  // namespace nmpsim::base
