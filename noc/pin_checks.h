// Router-agnostic checks of pin-level routers (noc::PinMesh), from what crosses their pins only, so
// they hold for any router plugged into the mesh (ours, the RTL twin, a user's RTL):
//   - identity: a router sends only flits it received, each once (catches duplicated and forged
//     flits; flits received and never sent are listed when the watchdog fires: dropped flits);
//   - XY legality: every flit leaves on the X-then-Y port towards its destination;
//   - flow control: no flit leaves on a mesh port without a credit for its output VC;
//   - wormhole integrity: on each mesh output VC, a head opens a packet, its body follows in
//     sequence without another packet's flits, and its tail closes it (the Local port may
//     interleave packets: the network interface reassembles them by packet).
// Delivery in order at the right node and flit conservation are checked by noc::Network for every
// router. docs/RTL.md lists the contract these checks enforce.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nmpsim/noc/flit.h"
#include "nmpsim/noc/noc_config.h"

namespace nmpsim::noc {

class PinChecker {
 public:
  void configure(const MeshGeometry& geo, int vcs, int buffer_flits, int ni_ports = 1);
  /// Checks the router at `node` from now on.
  void watch(int node);
  bool watched(int node) const { return !nodes_.empty() && nodes_[node].watched; }
  /// A flit arrives at input `port` of a watched router.
  void received(int node, const Flit& f, uint64_t cycle);
  /// A watched router sends `f` on output `port`; returns the first rule it breaks, or empty.
  std::string sent(int node, int port, const Flit& f);
  /// A credit for output VC (port, vc) of a watched router returns from downstream.
  std::string credit_returned(int node, int port, int vc);
  /// The flits a watched router received and has not sent (oldest first, at most `most`).
  std::string held(int node, size_t most = 4) const;

 private:
  struct Output {
    int credits = 0;
    uint32_t packet = 0;
    int next_seq = -1;  // -1: no packet open on this output VC
  };
  struct Held {
    uint64_t key, cycle;  // (packet << 16 | seq), cycle received
  };
  struct Node {
    bool watched = false;
    std::vector<Held> holding;
    std::vector<Output> out;  // [port][vc]
  };
  static uint64_t key(const Flit& f) { return uint64_t{f.packet} << 16 | f.seq; }
  std::string where(int node) const;

  MeshGeometry geo_;
  int vcs_ = 1, buffer_flits_ = 1, ni_ports_ = 1;
  std::vector<Node> nodes_;
};

}  // namespace nmpsim::noc
