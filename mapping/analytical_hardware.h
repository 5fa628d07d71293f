// The hardware as the analytical models see it: plain numbers, no SystemC (hw::to_analytical builds
// it from a hardware description), and the roofline time of one node's compute. flow/flow_model.h adds
// the link-load bound of concurrent messages; docs/MODEL.md "Flow-level model".
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "nmpsim/mapping/modes.h"
#include "nmpsim/mapping/topology.h"

namespace nmpsim::mapping {

/// What the analytical models need to know about the hardware. Built by hw::to_analytical from a
/// hardware description; it has no defaults of its own (each parameter's default is declared once, in
/// hw/hardware_fields.cpp), so a default-constructed value is all zeros.
struct AnalyticalHardware {
  Topology topology;
  double peak_flops = 0;             ///< FLOP/s per node
  double startup_s = 0;              ///< fixed start-up of a compute command
  double memory_bytes_per_s = 0;     ///< streaming
  double memory_first_access_s = 0;  ///< tRCD + tCL of the first row
  double element_bytes = 0;          ///< bytes per element of a reduction
  double clock_hz = 0;               ///< NoC clock
  double flit_bytes = 0;             ///< resolved (never 0 once built)
  int router_delay_cycles = 0;       ///< noc router_delay_cycles
  int ni_queues = 0;                 ///< injection queues per network interface (noc ni_queues, resolved)
  int ni_ports = 0;                  ///< ports between a router and its network interface (noc ni_ports)
  int buffer_flits = 0;              ///< flit slots per router input VC (noc buffer_flits, resolved)
  int vcs = 0;                       ///< virtual channels per router input port
  double copy_chunk_bytes = 0;       ///< weight streams move through the NoC in chunks of this size
  int broadcast_window_chunks = 0;   ///< a stream's chunks on the way to its first node at most (0 = any)
  double flow_link_efficiency = 0;   ///< share of a mesh link's bandwidth left when flows contend for it
  double flow_resolve_fraction = 0;  ///< flow fidelity re-solves rates after this share of flows changed
  /// Replay repeated network sessions (flow/fluid_replay.h). Not in analytical_to_json: the results
  /// are the same to the bit either way.
  bool replay_sessions = false;
  bool grouped_experts = false;                  ///< one compute op per node for a layer's expert pieces
  ReduceMode reduce = ReduceMode::kKernel;       ///< how reductions run (mapping/modes.h)
  RingAlgorithm rings = RingAlgorithm::kOneWay;  ///< ring collectives one way or both ways
  RingAlgorithm gradient_rings = RingAlgorithm::kBidirectional;  ///< a training step's gradient collectives
  int pipeline_chunks = 0;  ///< attention compute pieces per reduce-scatter (0 or 1: none)
  /// Bandwidth of one network-interface port (one flit per cycle), bytes/s.
  double ni_bytes_per_s() const { return flit_bytes * clock_hz; }
  /// What a node injects (or ejects) at most, over all its ports, bytes/s.
  double node_ni_bytes_per_s() const { return std::max(1, ni_ports) * ni_bytes_per_s(); }
};

/// Every field, for cache keys.
nlohmann::json analytical_to_json(const AnalyticalHardware& hw);

/// Seconds one node needs for `flops` and `bytes` of weight streaming (0 if there is no work).
double compute_seconds(const AnalyticalHardware& hw, double flops, double bytes);

}  // namespace nmpsim::mapping
