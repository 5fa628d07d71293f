// The pin-level router interface shared by every router implementation that plugs into a
// noc::PinMesh: noc::ScRouter (the C++ router behind SystemC ports) and rtl::RtlRouter (the
// Verilated SystemVerilog router, rtl_checks/). A mesh can use either implementation per node.
//
// Ports (one per router port, N=0 E=1 S=2 W=3 L=4, and L1..L3 = 5..7 with several local ports;
// encodings in noc/flit_word.h):
//   clk, rst            rising-edge clock, synchronous active-high reset
//   in_flit[p]          flit arriving on input port p this cycle (0 = none)
//   in_credit[p]        credit returning for output port p's downstream VC (unused for L)
//   out_flit[p]         flit leaving on output port p (registered)
//   out_credit[p]       credit freeing one slot of input port p's VC (registered)
// Cycle c is the c-th rising edge after reset is released. Inputs sampled at that edge are the
// arrivals of cycle c; the outputs written at that edge are what the router sent in cycle c.
#pragma once

#include <cstdint>
#include <functional>
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
  int ni_ports = 1;                      ///< local ports (NocConfig::ni_ports): pins kLocal .. kLocal + ni_ports - 1
  OutputLinkTiming links[kNumMeshDirs];  ///< per output direction; edge ports keep the default
  int max_packet_flits = 16;             ///< NocConfig::max_packet_flits
  /// The flit count of a live packet by its id (the mesh's network sets it; empty elsewhere): what a
  /// network interface knows, for routers whose head flit carries the packet's length.
  std::function<int(uint32_t packet)> packet_flits;
  int ports() const { return kNumMeshDirs + ni_ports; }
  static RouterParams of(const NocConfig& cfg, int node);
};

class RouterPins : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk{"clk"};
  sc_core::sc_in<bool> rst{"rst"};
  // params().ports() of each (kNumPorts with one local port).
  sc_core::sc_vector<sc_core::sc_in<uint64_t>> in_flit{"in_flit"};
  sc_core::sc_vector<sc_core::sc_in<uint32_t>> in_credit{"in_credit"};
  sc_core::sc_vector<sc_core::sc_out<uint64_t>> out_flit{"out_flit"};
  sc_core::sc_vector<sc_core::sc_out<uint32_t>> out_credit{"out_credit"};

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
  RouterPins(sc_core::sc_module_name name, const RouterParams& p) : sc_module(name), params_(p) {
    const size_t n = static_cast<size_t>(p.ports());
    in_flit.init(n);
    in_credit.init(n);
    out_flit.init(n);
    out_credit.init(n);
  }
  RouterParams params_;
};

}  // namespace nmpsim::noc
