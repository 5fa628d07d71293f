#include "mapping/flow_model.h"

#include <algorithm>
#include <cmath>

namespace nmpsim::mapping {

namespace {
enum { kN = 0, kE = 1, kS = 2, kW = 3 };

double link_bytes_per_s(const Topology& t, int a, int b) { return t.link(a, b).gbytes_per_s * 1e9; }

/// Walks the XY path from s to d, calling f(from, to, dir) per hop.
template <class F>
void walk_xy(const Topology& t, int s, int d, F&& f) {
  int x = t.x(s), y = t.y(s);
  while (x != t.x(d)) {
    const int nx = x + (t.x(d) > x ? 1 : -1);
    f(t.id(x, y), t.id(nx, y), nx > x ? kE : kW);
    x = nx;
  }
  while (y != t.y(d)) {
    const int ny = y + (t.y(d) > y ? 1 : -1);
    f(t.id(x, y), t.id(x, ny), ny > y ? kS : kN);
    y = ny;
  }
}
}  // namespace

double compute_seconds(const AnalyticalHardware& hw, double flops, double bytes) {
  if (flops <= 0 && bytes <= 0) return 0.0;
  const double mem = bytes > 0 ? hw.memory_first_access_s + bytes / hw.memory_bytes_per_s : 0.0;
  return hw.startup_s + std::max(flops / hw.peak_flops, mem);
}

std::vector<double> link_loads(const Topology& t, const std::vector<double>& bytes) {
  const int n = t.nodes();
  std::vector<double> load(static_cast<size_t>(n) * 4, 0.0);
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      const double b = bytes[static_cast<size_t>(s) * n + d];
      if (b <= 0 || s == d) continue;
      walk_xy(t, s, d, [&](int from, int, int dir) { load[static_cast<size_t>(from) * 4 + dir] += b; });
    }
  return load;
}

double traffic_seconds(const AnalyticalHardware& hw, const std::vector<double>& bytes) {
  const Topology& t = hw.topology;
  const int n = t.nodes();
  std::vector<double> inject(static_cast<size_t>(n), 0.0), eject(static_cast<size_t>(n), 0.0);
  std::vector<double> link_time(static_cast<size_t>(n) * 4, 0.0);
  double latency = 0.0;
  const double cycle = 1.0 / hw.clock_hz;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      const double b = bytes[static_cast<size_t>(s) * n + d];
      if (b <= 0 || s == d) continue;
      inject[s] += b;
      eject[d] += b;
      // Zero-load latency of the head: injection, R cycles per router, each link's latency.
      double lat = (1 + hw.router_delay_cycles) * cycle;
      walk_xy(t, s, d, [&](int from, int to, int dir) {
        link_time[static_cast<size_t>(from) * 4 + dir] += b / link_bytes_per_s(t, from, to);
        lat += hw.router_delay_cycles * cycle + std::max(cycle, t.link(from, to).latency_ns * 1e-9);
      });
      latency = std::max(latency, lat);
    }
  double busiest = 0.0;
  for (double lt : link_time) busiest = std::max(busiest, lt);
  for (int v = 0; v < n; ++v) busiest = std::max({busiest, inject[v] / hw.ni_bytes_per_s(), eject[v] / hw.ni_bytes_per_s()});
  return busiest > 0 ? busiest + latency : 0.0;
}

double ring_seconds(const AnalyticalHardware& hw, const Groups& groups, const std::vector<double>& chunk, bool reduce) {
  const int n = static_cast<int>(groups.group_of.size());
  size_t g_max = 0;
  for (const auto& r : groups.ring) g_max = std::max(g_max, r.size());
  double total = 0.0;
  std::vector<double> step(static_cast<size_t>(n) * n);
  for (size_t s = 0; s + 1 < g_max; ++s) {
    std::fill(step.begin(), step.end(), 0.0);
    double reduce_s = 0.0;
    for (const auto& ring : groups.ring) {
      const size_t g = ring.size();
      if (s + 1 >= g) continue;
      for (size_t p = 0; p < g; ++p) {
        // All-gather: position p forwards chunk (p - s); reduce-scatter: chunk (p - s - 1).
        const size_t c = (p + 2 * g - s - (reduce ? 1 : 0)) % g;
        const double b = chunk[ring[c]];
        step[static_cast<size_t>(ring[p]) * n + ring[(p + 1) % g]] += b;
        if (reduce) {
          const double received = chunk[ring[(p + 2 * g - s - 2) % g]];
          reduce_s = std::max(reduce_s, compute_seconds(hw, received / hw.element_bytes, 0.0));
        }
      }
    }
    total += traffic_seconds(hw, step) + reduce_s;
  }
  return total;
}

PhaseTimes flow_layer_times(const AnalyticalHardware& hw, const LayerPlan& plan, const Groups& groups) {
  PhaseTimes t;
  const int n = plan.nodes;
  t.allgather_s = ring_seconds(hw, groups, plan.home_bytes, false);
  t.reduce_scatter_s = ring_seconds(hw, groups, plan.home_bytes, true);
  for (int v = 0; v < n; ++v) {
    t.attention_s = std::max(t.attention_s, compute_seconds(hw, plan.attn_flops[v], plan.attn_bytes[v]));
    t.gate_s = std::max(t.gate_s, compute_seconds(hw, plan.gate_flops[v], plan.gate_bytes[v]));
    double node_s = 0.0;
    for (const ExpertWork& w : plan.expert_work[v]) node_s += compute_seconds(hw, w.flops, w.bytes);
    t.experts_s = std::max(t.experts_s, node_s);
  }
  bool shared = false;
  for (int v = 0; v < n; ++v) {
    t.shared_s = std::max(t.shared_s, compute_seconds(hw, plan.shared_flops[v], plan.shared_bytes[v]));
    shared = shared || plan.shared_flops[v] > 0;
  }
  if (shared) {
    t.shared_allgather_s = t.allgather_s;
    t.shared_reduce_scatter_s = t.reduce_scatter_s;
  }
  t.dispatch_s = traffic_seconds(hw, plan.dispatch);
  double reduce_s = 0.0;
  for (int v = 0; v < n; ++v) reduce_s = std::max(reduce_s, compute_seconds(hw, plan.reduce_flops[v], 0.0));
  t.combine_s = traffic_seconds(hw, plan.combine) + reduce_s;
  return t;
}

}  // namespace nmpsim::mapping
