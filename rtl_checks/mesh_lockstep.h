// Lock-step comparison of two pin-level meshes with the same configuration and traffic (e.g. one
// of RTL routers, one of SystemC routers): at every cycle, every output pin of every router that
// is pin-level in both meshes must carry the same word. The first difference is kept as
// "cycle C router (x,y) port P out_flit: <a> <flit> vs <b> <flit>".
#pragma once

#include <cstdint>
#include <string>
#include <systemc>

#include "nmpsim/noc/pin_mesh.h"

namespace nmpsim::rtl {

class MeshLockstep : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(MeshLockstep);
  MeshLockstep(sc_core::sc_module_name name, noc::PinMesh& a, std::string a_label, noc::PinMesh& b,
               std::string b_label);
  /// Compare flits without their packet-id payload. Needed when the meshes differ in which nodes
  /// run engine routers: the network then meets same-cycle deliveries in another order and hands
  /// out packet-table slots (the ids) differently, though every flit moves identically.
  void ignore_packet_ids(bool on) { packet_mask_ = on ? (uint64_t{1} << 38) - 1 : ~uint64_t{0}; }
  bool mismatch() const { return !first_mismatch_.empty(); }
  const std::string& first_mismatch() const { return first_mismatch_; }
  uint64_t cycles_compared() const { return cycles_; }
  /// Flit words seen on the compared pins (non-zero words of mesh a).
  uint64_t flits_compared() const { return flits_; }

 private:
  void on_falling_edge();
  noc::PinMesh& a_;
  noc::PinMesh& b_;
  std::string a_label_, b_label_;
  uint64_t falling_edges_ = 0;
  uint64_t cycles_ = 0;
  uint64_t flits_ = 0;
  std::string first_mismatch_;
  uint64_t packet_mask_ = ~uint64_t{0};
};

}  // namespace nmpsim::rtl
