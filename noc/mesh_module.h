// SystemC wrapper of the cycle-level mesh: one SC_METHOD advances noc::Network a cycle at a
// time and sleeps while the network is idle, so idle cycles cost nothing. Given a router factory it
// runs the same network on pin-level routers instead (a noc::PinMesh inside: SystemC or Verilated
// RTL routers, clocked every cycle), with the same timing, so every message is delivered in the
// same cycle as on the engine.
//
// Timing convention (docs/MODEL.md "SystemC timing"): cycle c is evaluated at simulated time
// (c + 1/2) * period. A message sent at time t is injectable from the first cycle evaluated
// strictly after t; sends at a clock edge c * period are injectable in cycle c. Because the
// half-period offset separates senders from the network process, the result never depends on
// the order SystemC runs processes within a delta cycle.
#pragma once

#include <functional>
#include <memory>
#include <systemc>

#include "nmpsim/noc/network.h"
#include "nmpsim/noc/pin_mesh.h"

namespace nmpsim::noc {

class MeshModule : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(MeshModule);
  /// `pin_routers`: empty for the engine's routers; otherwise the factory of a noc::PinMesh.
  MeshModule(sc_core::sc_module_name name, const NocConfig& cfg, const RouterFactory& pin_routers = {});
  ~MeshModule() override;

  Network& network() { return pins_ ? pins_->network() : net_; }
  const Network& network() const { return pins_ ? pins_->network() : net_; }
  /// The pin-level mesh, or nullptr when the engine's routers run.
  PinMesh* pin_mesh() { return pins_.get(); }
  const sc_core::sc_time& period() const { return period_; }

  /// Sends `bytes` from src to dst now (from any SystemC process). Returns the message id.
  uint64_t send(int src, int dst, uint64_t bytes, uint64_t tag = 0);
  /// Sends one packet of exactly `flits` flits now.
  uint64_t send_flits(int src, int dst, uint32_t flits, uint64_t tag = 0);
  /// Called (inside the network process) for every delivered message.
  void set_delivery_handler(std::function<void(const Delivery&)> h) { network().set_delivery_handler(std::move(h)); }

  /// First cycle evaluated strictly after time t.
  uint64_t cycle_after(const sc_core::sc_time& t) const;
  /// Simulated time at which cycle c is evaluated.
  sc_core::sc_time time_of_cycle(uint64_t c) const;
  /// Time of the rising clock edge that starts cycle c (c * period).
  sc_core::sc_time edge_of_cycle(uint64_t c) const;
  /// Stop the SystemC simulation if the watchdog fires (default true).
  void set_stop_on_stall(bool stop) { stop_on_stall_ = stop; }

 private:
  void tick();
  void wake_for(uint64_t cycle);

  Network net_;
  sc_core::sc_time period_;
  uint64_t period_units_;  // period in the kernel's time resolution
  sc_core::sc_event wake_;
  uint64_t scheduled_ = kNever;  // next cycle the process will run, kNever if asleep
  bool stepped_ = false;
  uint64_t last_stepped_ = 0;
  bool stop_on_stall_ = true;
  std::unique_ptr<PinMesh> pins_;
};

}  // namespace nmpsim::noc
