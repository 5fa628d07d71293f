// The synthetic-traffic NoC testbench: warm-up, a measured window, then a drain of every packet
// created in the window. Three drivers with identical semantics: run_pin_testbench() runs it on
// a mesh of pin-level routers (noc::PinMesh); run_testbench() elaborates SystemC
// modules and calls sc_start (once per process, as SystemC allows), run_testbench_direct() steps
// noc::Network in a plain loop (for tests that need many simulations in one process).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "nmpsim/noc/network.h"
#include "nmpsim/noc/pin_mesh.h"
#include "nmpsim/noc/traffic.h"

namespace nmpsim::noc {

struct TestbenchConfig {
  NocConfig noc;
  TrafficConfig traffic;
  uint64_t warmup_cycles = 10000;
  uint64_t measure_cycles = 100000;
  /// After the window, stop creating packets and run until the network is empty, at most this long.
  uint64_t max_drain_cycles = 1000000;
  void validate() const;
};

struct TestbenchResult {
  NocStats stats;
  uint64_t simulated_cycles = 0;  ///< warm-up + window + drain
  uint64_t injected_flits = 0;
  uint64_t ejected_flits = 0;
  bool drained = false;  ///< every packet ever created was delivered
  bool stalled = false;
  std::string stall_report;
  std::string conservation_error;  ///< empty when conservation holds
  std::string router_error;        ///< pin-level meshes: first error a router reported, or empty
  double wall_seconds = 0.0;
  double simulated_cycles_per_second() const { return wall_seconds > 0 ? simulated_cycles / wall_seconds : 0.0; }
};

TestbenchResult run_testbench(const TestbenchConfig& cfg);
TestbenchResult run_testbench_direct(const TestbenchConfig& cfg);
/// The same testbench on a noc::PinMesh whose routers come from `factory` (SystemC, RTL or a
/// mix). `on_start` runs once after elaboration, before the first cycle (e.g. to open a VCD).
TestbenchResult run_pin_testbench(const TestbenchConfig& cfg, const RouterFactory& factory,
                                  const std::function<void(PinMesh&)>& on_start = {});

}  // namespace nmpsim::noc
