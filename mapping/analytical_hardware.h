// The hardware as the analytical models see it: plain numbers, no SystemC (hw::to_analytical builds
// it from a hardware description), and the roofline time of one node's compute. flow/flow_model.h adds
// the link-load bound of concurrent messages; docs/MODEL.md "Flow-level model".
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "nmpsim/mapping/topology.h"

namespace nmpsim::mapping {

/// What the analytical models need to know about the hardware (built by hw::to_analytical).
struct AnalyticalHardware {
  Topology topology;
  double peak_flops = 5e12;
  double startup_s = 50e-9;
  double memory_bytes_per_s = 593.75e9;  ///< streaming
  double memory_first_access_s = 28e-9;  ///< tRCD + tCL of the first row
  double element_bytes = 2;
  double clock_hz = 1e9;
  double flit_bytes = 50;
  int router_delay_cycles = 2;
  int ni_queues = 2;                  ///< injection queues per network interface (noc ni_queues, resolved)
  int buffer_flits = 8;               ///< flit slots per router input VC (noc buffer_flits, resolved)
  int vcs = 2;                        ///< virtual channels per router input port
  double copy_chunk_bytes = 262144;   ///< weight streams move through the NoC in chunks of this size
  int broadcast_window_chunks = 2;    ///< a stream's chunks on the way to its first node at most (0 = any)
  double contended_efficiency = 0.9;  ///< share of a mesh link's bandwidth left when flows contend for it
  double resolve_fraction = 0.05;     ///< flow fidelity re-solves rates after this share of flows changed
  /// Replay repeated network sessions (flow/fluid_replay.h). Not in analytical_to_json: the results
  /// are the same to the bit either way.
  bool replay_sessions = true;
  /// Bandwidth of the network interface channels (one flit per cycle), bytes/s.
  double ni_bytes_per_s() const { return flit_bytes * clock_hz; }
};

/// Every field, for cache keys.
nlohmann::json analytical_to_json(const AnalyticalHardware& hw);

/// Seconds one node needs for `flops` and `bytes` of weight streaming (0 if there is no work).
double compute_seconds(const AnalyticalHardware& hw, double flops, double bytes);

}  // namespace nmpsim::mapping
