// The rules of a network interface with several ports that the cycle-level network (noc/) and the flow
// model (flow/) share, so that the two cannot drift (docs/MODEL.md "Network interfaces and messages"):
// which queue a new message joins, and which local port a flit for the node leaves on.
#pragma once

#include <cstddef>

namespace nmpsim::base {

/// The queue a new message joins, of `queues` queues where queue q sends on port q mod `ports` (at most
/// 4): the port whose queues have the least left to send, then that port's queue with the least (lowest
/// index on ties; with one port, the queue with the least). `left(q)`: what queue q has left to send.
template <class Left>
size_t pick_ni_queue(size_t queues, size_t ports, Left left) {
  decltype(left(size_t{0})) load[4] = {};
  for (size_t q = 0; q < queues; ++q) load[q % ports] += left(q);
  size_t port = 0;
  for (size_t p = 1; p < ports; ++p)
    if (load[p] < load[port]) port = p;
  size_t best = port;
  for (size_t q = port; q < queues; q += ports)
    if (left(q) < left(best)) best = q;
  return best;
}

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
