// A mesh of pin-level routers: every node's router is a SystemC module behind the
// noc::RouterPins ports (noc::ScRouter, or the Verilated RTL router of rtl_checks/), chosen per
// node by a factory. Links, network interfaces, statistics, conservation checks and the watchdog
// are noc::Network's, so a pin-level mesh of ScRouters reproduces the engine cycle for cycle.
//
// Clocking: one sc_clock of the NoC period, rising edge first at time 0, which resets every
// router. Cycle c is evaluated at rising edge c + 1. A driver process at falling edge c (at c
// periods plus half a period, when noc::MeshModule evaluates cycle c) collects what the routers sent
// at the previous rising edge, finishes cycle c - 1, calls the cycle hook (traffic), begins cycle c
// in the network and writes the routers' input pins. The clock runs every cycle: pin-level meshes
// are for co-simulation, the engine (noc::MeshModule) is the fast path.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "nmpsim/noc/network.h"
#include "nmpsim/noc/router_pins.h"

namespace nmpsim::noc {

/// Builds the router of one node; returning nullptr leaves the node to the engine's noc::Router.
using RouterFactory = std::function<std::unique_ptr<RouterPins>(const std::string& name, const RouterParams& p)>;

/// Factory of ScRouter modules at every node.
RouterFactory sc_router_factory();

class PinMesh : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(PinMesh);
  PinMesh(sc_core::sc_module_name name, const NocConfig& cfg, const RouterFactory& factory);

  Network& network() { return net_; }
  /// The pin-level router at `node`, or nullptr where the engine router runs.
  RouterPins* router(int node) { return routers_[node].get(); }
  /// Called at the start of every cycle c, before the network begins it (send traffic here).
  /// Returning false stops the simulation (sc_stop) before cycle c.
  void set_cycle_hook(std::function<bool(uint64_t cycle)> h) { hook_ = std::move(h); }
  /// Cycles begun so far.
  uint64_t cycles_begun() const { return begun_; }
  const sc_core::sc_time& period() const { return period_; }
  /// First router error (for instance a flit into a full buffer), or empty.
  std::string router_error() const;
  /// The NoC clock (rising edge first, at time 0; rising edge c + 1 evaluates cycle c).
  const sc_core::sc_clock& clock() const { return clk_; }
  /// What the router at `node` sent on `port` in the last evaluated cycle (for lock-step checks).
  uint64_t out_flit_word(int node, int port) const { return out_flit_[pin(node, port)].read(); }
  uint32_t out_credit_word(int node, int port) const { return out_credit_[pin(node, port)].read(); }

 private:
  void drive();
  void stop();
  size_t pin(int node, int port) const { return static_cast<size_t>(node) * ports_ + port; }

  Network net_;
  size_t ports_;    // of every router: kNumMeshDirs + ni_ports
  uint64_t steps_;  // clock period in SystemC time-resolution steps
  sc_core::sc_time period_;
  sc_core::sc_clock clk_;
  sc_core::sc_signal<bool> rst_{"rst", true};
  sc_core::sc_vector<sc_core::sc_signal<uint64_t>> in_flit_, out_flit_;
  sc_core::sc_vector<sc_core::sc_signal<uint32_t>> in_credit_, out_credit_;
  std::vector<std::unique_ptr<RouterPins>> routers_;
  std::vector<int> pin_nodes_;
  std::function<bool(uint64_t)> hook_;
  uint64_t falling_edges_ = 0;
  uint64_t begun_ = 0;
};

}  // namespace nmpsim::noc
