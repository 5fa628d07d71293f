// noc::Router behind the pin-level interface of noc::RouterPins: the reference the Verilated RTL
// router is checked against, and one of the implementations a noc::PinMesh can place at a node.
#pragma once

#include <functional>
#include <string>

#include "nmpsim/noc/router.h"
#include "nmpsim/noc/router_pins.h"

namespace nmpsim::noc {

class ScRouter : public RouterPins {
 public:
  SC_HAS_PROCESS(ScRouter);
  ScRouter(sc_core::sc_module_name name, const RouterParams& p);
  const char* implementation() const override { return "sc"; }
  std::string error() const override { return error_; }
  /// The wrapped router (tests inspect it; fault injection goes through debug_set_credits).
  Router& router() { return router_; }
  /// Fault injection for testing the router-agnostic checks: called every cycle with the flit and
  /// credit words the router is about to put on its output pins, which it may change.
  using OutputTamper = std::function<void(uint64_t cycle, uint64_t (&flit)[kMaxPorts], uint32_t (&credit)[kMaxPorts])>;
  void set_output_tamper(OutputTamper t) { tamper_ = std::move(t); }

 private:
  void on_edge();
  Router make_router() const;

  Router router_;
  uint64_t cycle_ = 0;  // rising edges since reset was released
  std::string error_;
  OutputTamper tamper_;
};

}  // namespace nmpsim::noc
