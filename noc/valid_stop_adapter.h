// Plugs a router with valid/stop or valid/ready handshakes (noc::LaCore: the look-ahead router's
// cycle model, its Verilated RTL, or a described router of your own) into the credit-based mesh
// behind the noc::RouterPins interface (docs/RTL.md).
//
// Per input port the adapter holds the credit buffer the upstream sees (buffer_flits flits, one
// VC): flits arriving from the mesh queue there. valid/stop: while the router's in_stop is low the
// front flit goes to the router and a credit goes back upstream in the same cycle. valid/ready: the
// front flit is presented (valid) whenever there is one, and moves, with its credit, when the
// router's registered ready was high. The adapter computes the flit's look-ahead port for this
// router on entry (the mesh's flit word has no field for it) and checks the one the router
// computes for the next router. Per mesh output it holds the credits of the downstream buffer.
// valid/stop: it raises out_stop when none is left or the output link is still serialising the
// previous flit (slow links). valid/ready: it decides ready for the next edge right after the
// router's edge, from the same two conditions, so a flit the router presents leaves for the mesh in
// that cycle when the next edge will take it; a flit not taken must be presented again, unchanged,
// until it is (checked). So the router and its adapter form one micro-architecture: a flit whose
// input is empty crosses both in its arrival cycle. All of it happens at the rising edge, before the
// router's own edge, like noc::ScRouter.
#pragma once

#include <deque>
#include <memory>
#include <string>

#include "nmpsim/noc/la_router.h"
#include "nmpsim/noc/pin_mesh.h"
#include "nmpsim/noc/router_pins.h"

namespace nmpsim::noc {

/// kValidReadyNoHold: valid/ready where a flit presented but not taken may change or go (the
/// router re-arbitrates); the hold check is off.
enum class Handshake { kValidStop, kValidReady, kValidReadyNoHold };

class ValidStopAdapter : public RouterPins {
 public:
  SC_HAS_PROCESS(ValidStopAdapter);
  /// `implementation`: "la-sc" (the cycle model) or "rtl" (a Verilated RTL). With kValidReady the
  /// core's in_stop and out_stop pins carry !ready.
  ValidStopAdapter(sc_core::sc_module_name name, const RouterParams& p, std::unique_ptr<LaCore> core,
                   const char* implementation, Handshake handshake = Handshake::kValidStop);
  const char* implementation() const override { return impl_; }
  std::string error() const override { return error_; }
  void open_vcd(const std::string& path) override { core_->open_vcd(path); }
  /// The router's pins as of the last edge (tests compare model and RTL through them).
  const LaPins& core_pins() const { return pins_; }

 private:
  void on_edge();
  void take_inputs(uint32_t (&credit_out)[kNumPorts]);
  /// After the router's edge: whether its flit on output `o` leaves for the mesh now.
  bool leaves(int o, uint64_t now_q);
  void reset_state();
  void fail(const std::string& what);

  std::unique_ptr<LaCore> core_;
  const char* impl_;
  Handshake handshake_;
  bool held_[kNumPorts] = {};  // valid/ready: the flit presented on o was not taken
  uint64_t held_flit_[kNumPorts] = {};
  LaPins pins_;
  std::deque<uint64_t> in_q_[kNumPorts];  // credit buffers, mesh flit words
  int credits_[kNumMeshDirs] = {};
  uint64_t link_free_q_[kNumMeshDirs] = {};  // Q16 cycle from which each output link is free
  uint64_t cycle_ = 0;
  std::string error_;
};

/// Mesh flit word (VC 0) -> look-ahead flit word with the port it takes at `node`.
uint64_t mesh_to_la(uint64_t w, int node, const MeshGeometry& geo);
/// Look-ahead flit word -> mesh flit word on VC 0.
uint64_t la_to_mesh(uint64_t w, const MeshGeometry& geo);
/// Empty when the look-ahead port of flit `f`, leaving `node` on `out_port`, is the XY route at
/// the next router; otherwise what is wrong.
std::string la_port_error(uint64_t f, int node, int out_port, const MeshGeometry& geo);

/// Look-ahead routers (cycle model behind the adapter) at every node.
RouterFactory la_model_factory();

}  // namespace nmpsim::noc
