// Lock-step co-simulation of one router: noc::ScRouter and the Verilated RtlRouter share their
// input pins, driven by a seeded random harness, and every output pin is compared every cycle.
//
// The harness plays the router's five upstream senders and four downstream receivers:
//  - upstream, per input port and cycle: with probability inject_prob, a random VC with a free
//    credit sends the next flit of its packet (or starts a packet: random destination in the
//    mesh, 1..max_packet_flits flits); credits come back from the router's out_credit pins;
//  - downstream, per output direction and cycle: with probability drain_prob[d], one buffered
//    flit of a random VC leaves and its credit returns on in_credit (random back-pressure).
// Independently of both routers it checks what the reference (ScRouter) sends: the XY output
// port, in-order wormhole delivery per packet on one output VC, no downstream overflow, and at
// the end that every flit sent in came out. After `cycles` cycles no packet starts and the
// downstream drains at full speed until the router is empty.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <systemc>
#include <vector>

#include "nmpsim/base/rng.h"
#include "nmpsim/noc/sc_router.h"
#include "nmpsim/rtl_checks/rtl_router.h"

namespace nmpsim::rtl {

struct CosimConfig {
  uint64_t seed = 1;
  noc::NocConfig noc;  ///< mesh size, VCs, buffer depth, router delay, link timing
  int node = 0;        ///< the router's place in the mesh
  double inject_prob = 0.5;
  double drain_prob[noc::kNumMeshDirs] = {0.7, 0.7, 0.7, 0.7};
  int max_packet_flits = 6;
  uint64_t cycles = 100000;
  uint64_t max_drain_cycles = 20000;
  /// Fault injection (tests of the checker): at this cycle the ScRouter alone gains a spurious
  /// credit for output East VC 0, so the two implementations must diverge. -1 = off.
  int64_t fault_cycle = -1;
};

struct CosimReport {
  uint64_t cycles_compared = 0;
  uint64_t flits_in = 0;
  uint64_t flits_out[noc::kNumPorts] = {};
  uint64_t packets_out = 0;
  bool mismatch = false;
  std::string first_mismatch;  ///< "cycle C port P out_flit: sc <flit> vs rtl <flit>"
  std::string harness_error;   ///< first violation the independent checks saw
  bool drained = false;        ///< every flit sent in came out
  std::string router_error;
};

class RouterCosim : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(RouterCosim);
  /// `clk` must fall first (a falling edge precedes every rising edge), as noc::PinMesh's does.
  RouterCosim(sc_core::sc_module_name name, const CosimConfig& cfg, sc_core::sc_clock& clk);
  bool done() const { return done_; }
  CosimReport report() const;

 private:
  struct Packet {
    uint32_t id = 0;
    int dst = 0;
    int flits = 0;
    int sent = 0;
  };
  struct OutPacket {
    int port = -1;
    int vc = -1;
    int next_seq = 0;
  };
  void on_falling_edge();
  void compare(uint64_t cycle);
  void consume(uint64_t cycle);
  void drive(uint64_t cycle);
  void fail(const std::string& what);

  CosimConfig cfg_;
  noc::MeshGeometry geo_;
  base::Rng rng_;
  sc_core::sc_signal<bool> rst_{"rst", true};
  sc_core::sc_vector<sc_core::sc_signal<uint64_t>> in_flit_, sc_out_flit_, rtl_out_flit_;
  sc_core::sc_vector<sc_core::sc_signal<uint32_t>> in_credit_, sc_out_credit_, rtl_out_credit_;
  noc::ScRouter sc_;
  RtlRouter rtl_;

  // Harness state.
  std::vector<int> up_credits_;    // [port][vc]
  std::vector<Packet> up_packet_;  // [port][vc]; flits == 0: none in progress
  std::vector<int> down_count_;    // [dir][vc] flits buffered downstream
  std::map<uint32_t, OutPacket> out_packets_;
  uint32_t next_packet_ = 0;
  uint64_t falling_edges_ = 0;
  uint64_t in_router_ = 0;  // flits sent in and not yet out
  bool done_ = false;
  CosimReport rep_;
};

}  // namespace nmpsim::rtl
