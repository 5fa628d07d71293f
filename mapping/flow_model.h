// The analytical primitives of flow fidelity, without the cycle-level NoC:
//  - compute: start-up + max(FLOPs / peak, first DRAM access + bytes / streaming bandwidth) per node;
//  - communication: a flow-level XY link-sharing bound: every message's bytes load each link of its
//    XY path and the source's injection / destination's ejection channel; a set of concurrent messages
//    takes the most loaded resource's bytes / bandwidth plus the zero-load latency of the longest path.
// mapping/flow_executor.h executes layer schedules with them. docs/MODEL.md "Flow-level model" lists
// what they leave out; docs/PERFORMANCE.md reports how closely flow fidelity tracks cycle fidelity.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

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
  int ni_queues = 2;                  ///< injection queues per network interface (noc ni_queues, resolved)
  int buffer_flits = 8;               ///< flit slots per router input VC (noc buffer_flits, resolved)
  int vcs = 2;                        ///< virtual channels per router input port
  double copy_chunk_bytes = 262144;   ///< weight streams move through the NoC in chunks of this size
  int broadcast_window_chunks = 2;    ///< a stream's chunks on the way to its first node at most (0 = any)
  double contended_efficiency = 0.9;  ///< share of a mesh link's bandwidth left when flows contend for it
  double resolve_fraction = 0.05;     ///< flow fidelity re-solves rates after this share of flows changed
  /// Replay repeated network sessions (mapping/fluid_replay.h). Not in analytical_to_json: the results
  /// are the same to the bit either way.
  bool replay_sessions = true;
  /// Bandwidth of the network interface channels (one flit per cycle), bytes/s.
  double ni_bytes_per_s() const { return flit_bytes * clock_hz; }
};

/// Every field, for cache keys.
nlohmann::json analytical_to_json(const AnalyticalHardware& hw);

/// Seconds one node needs for `flops` and `bytes` of weight streaming (0 if there is no work).
double compute_seconds(const AnalyticalHardware& hw, double flops, double bytes);
/// One message of a concurrent set.
struct Message {
  int src = 0, dst = 0;
  double bytes = 0;
};
/// The link-load bound of concurrent messages, with every directed link's bandwidth and hop latency
/// looked up once and its scratch space reused (so repeated calls allocate nothing).
class LinkLoadModel {
 public:
  explicit LinkLoadModel(const AnalyticalHardware& hw);
  /// Seconds for a set of concurrent messages; messages of 0 bytes and to oneself cost nothing.
  double seconds(const std::vector<Message>& messages) const;
  /// The same for a message matrix, [src * n + dst] bytes.
  double seconds_matrix(const std::vector<double>& bytes) const;

 private:
  void clear() const;
  /// Loads one message's bytes on its path; returns its zero-load head latency.
  double load(int src, int dst, double bytes) const;
  double finish(double latency) const;
  AnalyticalHardware hw_;
  std::vector<double> link_bytes_per_s_;  // [node * 4 + dir]
  std::vector<double> hop_latency_s_;     // [node * 4 + dir]: router delay + link latency
  mutable std::vector<double> inject_, eject_, link_time_;
};

/// Seconds for a set of concurrent messages (the link-load bound above).
double traffic_seconds(const AnalyticalHardware& hw, const std::vector<Message>& messages);
/// The same for a message matrix, [src * n + dst] bytes.
double traffic_seconds(const AnalyticalHardware& hw, const std::vector<double>& bytes);
/// Adds a message's bytes to every directed link of its XY path: load[node * 4 + dir] (N, E, S, W).
void add_link_load(const Topology& t, int src, int dst, double bytes, std::vector<double>& load);
/// Bytes each directed link carries for a message matrix: [node * 4 + dir] (N, E, S, W).
std::vector<double> link_loads(const Topology& t, const std::vector<double>& bytes);

}  // namespace nmpsim::mapping
