// A described router with credit handshakes (protocol "credit" in its description), plugged into
// the credit-based mesh with no adapter buffers: the mesh's flits go to the router in their arrival
// cycle and its flits to the mesh in the cycle it sends them, with the flit format converted both
// ways; credits pass through as one-bit pulses (no virtual channels). The router holds the
// buffers the upstream's credits count and the credits of its downstream buffers. It has no
// link-speed straps, so every link must carry one flit per cycle (docs/RTL.md).
#pragma once

#include <memory>
#include <string>

#include "nmpsim/noc/router_pins.h"
#include "nmpsim/rtl_checks/described_router.h"

namespace nmpsim::rtl {

/// Throws noc::ConfigError (one line) when router `r` uses the credit protocol and a link of the
/// router with parameters `p` is slower than one flit per cycle.
void check_credit_links(const DescribedRouter& r, const noc::RouterParams& p);

class DescribedCreditRouter : public noc::RouterPins {
 public:
  SC_HAS_PROCESS(DescribedCreditRouter);
  /// Throws noc::ConfigError (one line) when the configuration does not fit the router.
  DescribedCreditRouter(sc_core::sc_module_name name, const noc::RouterParams& p, const DescribedRouter& r);
  const char* implementation() const override { return "rtl"; }
  std::string error() const override { return error_; }
  void open_vcd(const std::string& path) override;

 private:
  void on_edge();
  void reset_pins();
  void fail(const std::string& what);

  const RouterDescription& d_;
  FlitFormat format_;
  std::unique_ptr<RtlPinIo> io_;
  PinSnapshot outputs_;  // as of the last edge
  uint64_t cycle_ = 0;
  std::string error_;
};

}  // namespace nmpsim::rtl
