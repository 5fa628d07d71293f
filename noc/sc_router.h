// noc::Router behind the pin-level interface of noc::RouterPins: the reference the Verilated RTL
// router is checked against, and one of the implementations a noc::PinMesh can place at a node.
#pragma once

#include <string>

#include "noc/router.h"
#include "noc/router_pins.h"

namespace nmpsim::noc {

class ScRouter : public RouterPins {
 public:
  SC_HAS_PROCESS(ScRouter);
  ScRouter(sc_core::sc_module_name name, const RouterParams& p);
  const char* implementation() const override { return "sc"; }
  std::string error() const override { return error_; }
  /// The wrapped router (tests inspect it; fault injection goes through debug_set_credits).
  Router& router() { return router_; }

 private:
  void on_edge();
  Router make_router() const;

  Router router_;
  uint64_t cycle_ = 0;  // rising edges since reset was released
  std::string error_;
};

}  // namespace nmpsim::noc
