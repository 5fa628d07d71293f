// Plugs a router with valid/stop handshakes (noc::LaCore: the look-ahead router's cycle model or its
// Verilated RTL) into the credit-based mesh behind the noc::RouterPins interface (docs/RTL.md).
//
// Per input port the adapter holds the credit buffer the upstream sees (buffer_flits flits, one
// VC): flits arriving from the mesh queue there; while the router's in_stop is low the front flit
// goes to the router and a credit goes back upstream in the same cycle. The adapter computes the
// flit's look-ahead port for this router on entry (the mesh's flit word has no field for it) and
// checks the one the router computes for the next router. Per mesh output it holds the credits of
// the downstream buffer and raises out_stop when none is left or the output link is still
// serialising the previous flit (slow links). So the router and its adapter form one
// micro-architecture: a flit whose input is empty crosses both in its arrival cycle.
// All of it happens at the rising edge, before the router's own edge, like noc::ScRouter.
#pragma once

#include <deque>
#include <memory>
#include <string>

#include "noc/la_router.h"
#include "noc/pin_mesh.h"
#include "noc/router_pins.h"

namespace nmpsim::noc {

class ValidStopAdapter : public RouterPins {
 public:
  SC_HAS_PROCESS(ValidStopAdapter);
  /// `implementation`: "la-sc" (the cycle model) or "la-rtl" (the Verilated RTL).
  ValidStopAdapter(sc_core::sc_module_name name, const RouterParams& p, std::unique_ptr<LaCore> core,
                   const char* implementation);
  const char* implementation() const override { return impl_; }
  std::string error() const override { return error_; }
  /// The router's pins as of the last edge (tests compare model and RTL through them).
  const LaPins& core_pins() const { return pins_; }

 private:
  void on_edge();
  void reset_state();
  void fail(const std::string& what);

  std::unique_ptr<LaCore> core_;
  const char* impl_;
  LaPins pins_;
  std::deque<uint64_t> in_q_[kNumPorts];  // credit buffers, mesh flit words
  int credits_[kNumMeshDirs] = {};
  uint64_t link_free_q_[kNumMeshDirs] = {};  // Q16 cycle from which each output link is free
  uint64_t cycle_ = 0;
  std::string error_;
};

/// Look-ahead routers (cycle model behind the adapter) at every node.
RouterFactory la_model_factory();

}  // namespace nmpsim::noc
