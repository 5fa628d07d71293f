// Fast analytical timing of a LayerPlan, without the cycle-level NoC:
//  - compute: start-up + max(FLOPs / peak, first DRAM access + bytes / streaming bandwidth) per node;
//    a phase lasts as long as its slowest node;
//  - communication: a flow-level XY link-sharing model: every message's bytes load each link of its
//    XY path and the source's injection / destination's ejection channel; the phase takes the most
//    loaded resource's bytes / bandwidth plus the zero-load latency of the longest path;
//  - ring collectives: the same model per ring step, steps in sequence.
// docs/MODEL.md "Flow-level model" lists what it leaves out (contention dynamics, head-of-line
// blocking, packetisation); docs/PERFORMANCE.md reports how closely it tracks cycle fidelity.
#pragma once

#include <vector>

#include "mapping/layer_plan.h"
#include "mapping/topology.h"

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
  /// Bandwidth of the network interface channels (one flit per cycle), bytes/s.
  double ni_bytes_per_s() const { return flit_bytes * clock_hz; }
};

/// Seconds one node needs for `flops` and `bytes` of weight streaming (0 if there is no work).
double compute_seconds(const AnalyticalHardware& hw, double flops, double bytes);
/// Seconds for a set of concurrent messages, [src * n + dst] bytes.
double traffic_seconds(const AnalyticalHardware& hw, const std::vector<double>& bytes);
/// Bytes each directed link carries for a message matrix: [node * 4 + dir] (N, E, S, W).
std::vector<double> link_loads(const Topology& t, const std::vector<double>& bytes);

struct PhaseTimes {
  double allgather_s = 0, attention_s = 0, reduce_scatter_s = 0, gate_s = 0, dispatch_s = 0, experts_s = 0,
         combine_s = 0;
  double shared_allgather_s = 0, shared_s = 0, shared_reduce_scatter_s = 0;  ///< shared experts (TP in the group)
  double allreduce_s() const { return allgather_s + reduce_scatter_s + shared_allgather_s + shared_reduce_scatter_s; }
  double moe_compute_s() const { return gate_s + experts_s + shared_s; }
  double moe_comm_s() const { return dispatch_s + combine_s; }
  double total_s() const { return attention_s + allreduce_s() + moe_compute_s() + moe_comm_s(); }
};

/// Flow-level times of every phase of a layer plan.
PhaseTimes flow_layer_times(const AnalyticalHardware& hw, const LayerPlan& plan, const Groups& groups);
/// Ring all-gather (or reduce-scatter, with `reduce`) over every group at once: chunk of node v is
/// chunk_bytes[v]; g - 1 steps.
double ring_seconds(const AnalyticalHardware& hw, const Groups& groups, const std::vector<double>& chunk_bytes,
                    bool reduce);

}  // namespace nmpsim::mapping
