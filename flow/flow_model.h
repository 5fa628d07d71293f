// The analytical primitives of flow fidelity, without the cycle-level NoC:
//  - compute: start-up + max(FLOPs / peak, first DRAM access + bytes / streaming bandwidth) per node;
//  - communication: a flow-level XY link-sharing bound: every message's bytes load each link of its
//    XY path and the source's injection / destination's ejection channel; a set of concurrent messages
//    takes the most loaded resource's bytes / bandwidth plus the zero-load latency of the longest path.
// flow/flow_executor.h executes layer schedules with them. docs/MODEL.md "Flow-level model" lists
// what they leave out; docs/PERFORMANCE.md reports how closely flow fidelity tracks cycle fidelity.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "nmpsim/mapping/analytical_hardware.h"

namespace nmpsim::flow {

using mapping::AnalyticalHardware;
using mapping::Topology;

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

}  // namespace nmpsim::flow
