// The pin-level router interface shared by every router implementation that plugs into a
// noc::PinMesh: noc::ScRouter (the C++ router behind SystemC ports) and rtl::RtlRouter (the
// Verilated SystemVerilog router, rtl_checks/). A mesh can use either implementation per node.
//
// Ports (one per router port, N=0 E=1 S=2 W=3 L=4; encodings in noc/flit_word.h):
//   clk, rst            rising-edge clock, synchronous active-high reset
//   in_flit[p]          flit arriving on input port p this cycle (0 = none)
//   in_credit[p]        credit returning for output port p's downstream VC (unused for L)
//   out_flit[p]         flit leaving on output port p (registered)
//   out_credit[p]       credit freeing one slot of input port p's VC (registered)
// Cycle c is the c-th rising edge after reset is released. Inputs sampled at that edge are the
// arrivals of cycle c; the outputs written at that edge are what the router sent in cycle c.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>

#include "nmpsim/noc/noc_config.h"
#include "nmpsim/noc/router.h"

namespace nmpsim::noc {

/// Everything a router needs to know about its place in the mesh.
struct RouterParams {
  int node = 0;
  MeshGeometry geo;
  int vcs = 2;
  int buffer_flits = 8;
  int router_delay_cycles = 2;
  OutputLinkTiming links[kNumMeshDirs];  ///< per output direction; edge ports keep the default
  static RouterParams of(const NocConfig& cfg, int node);
};

class RouterPins : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk{"clk"};
  sc_core::sc_in<bool> rst{"rst"};
  sc_core::sc_vector<sc_core::sc_in<uint64_t>> in_flit{"in_flit", kNumPorts};
  sc_core::sc_vector<sc_core::sc_in<uint32_t>> in_credit{"in_credit", kNumPorts};
  sc_core::sc_vector<sc_core::sc_out<uint64_t>> out_flit{"out_flit", kNumPorts};
  sc_core::sc_vector<sc_core::sc_out<uint32_t>> out_credit{"out_credit", kNumPorts};

  /// "sc" or "rtl".
  virtual const char* implementation() const = 0;
  const RouterParams& params() const { return params_; }
  /// First internal error (e.g. a flit arriving into a full buffer), or empty.
  virtual std::string error() const { return ""; }
  /// Dumps this router's RTL signals to a VCD file from now on (Verilated routers only; call after
  /// elaboration). Throws ConfigError when the implementation cannot, or the file cannot be opened.
  virtual void open_vcd(const std::string& path) {
    (void)path;
    throw ConfigError(std::string("--vcd: the ") + implementation() + " router implementation writes no VCD");
  }

 protected:
  RouterPins(sc_core::sc_module_name name, const RouterParams& p) : sc_module(name), params_(p) {}
  RouterParams params_;
};

}  // namespace nmpsim::noc
