// Synthetic traffic for NoC testbenches: Bernoulli packet injection per node with a pattern.
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "nmpsim/base/rng.h"
#include "nmpsim/noc/noc_config.h"

namespace nmpsim::noc {

enum class TrafficPattern { kUniform, kTranspose, kBitComplement, kHotspot };

/// Parses uniform|transpose|bitcomp|hotspot; throws ConfigError otherwise.
TrafficPattern parse_traffic_pattern(const std::string& name);
const char* traffic_pattern_name(TrafficPattern p);

struct TrafficConfig {
  TrafficPattern pattern = TrafficPattern::kUniform;
  double injection_rate = 0.1;  ///< offered flits per node per cycle, in [0, 1]
  int packet_flits = 4;
  uint64_t seed = 1;
  int hotspot_node = -1;          ///< -1: the node nearest the mesh centre
  double hotspot_fraction = 0.2;  ///< share of packets sent to the hotspot
  void validate(const MeshGeometry& geo) const;
};

/// Each node starts a packet in a cycle with probability injection_rate / packet_flits,
/// independently (a Bernoulli process, sampled as geometric gaps so idle cycles cost nothing).
/// Destinations: uniform = any other node; transpose = (y, x) (square meshes); bitcomp =
/// (W-1-x, H-1-y), the bit complement on power-of-two meshes; hotspot = the hotspot node with
/// probability hotspot_fraction, otherwise uniform. A node whose destination is itself sends nothing.
class SyntheticTraffic {
 public:
  SyntheticTraffic(const MeshGeometry& geo, const TrafficConfig& cfg);
  /// Earliest cycle >= `from` in which some node starts a packet (kNever-like max if none).
  uint64_t next_cycle() const { return heap_.empty() ? UINT64_MAX : heap_.top().cycle; }
  /// Calls f(src, dst) for every packet started in cycle `cycle` (== next_cycle()).
  template <class F>
  void emit(uint64_t cycle, F&& f) {
    while (!heap_.empty() && heap_.top().cycle == cycle) {
      const int src = heap_.top().node;
      heap_.pop();
      const int dst = destination(src);
      if (dst != src) f(src, dst);
      schedule(src, cycle);
    }
  }
  int destination(int src);

 private:
  struct Next {
    uint64_t cycle;
    int node;
    bool operator>(const Next& o) const { return cycle != o.cycle ? cycle > o.cycle : node > o.node; }
  };
  void schedule(int node, uint64_t after);
  MeshGeometry geo_;
  TrafficConfig cfg_;
  double packet_prob_;
  std::vector<base::Rng> rngs_;  // one stream per node: results do not depend on emission order
  std::priority_queue<Next, std::vector<Next>, std::greater<Next>> heap_;
};

}  // namespace nmpsim::noc
