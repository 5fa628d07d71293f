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

nlohmann::json analytical_to_json(const AnalyticalHardware& hw) {
  const Topology& t = hw.topology;
  nlohmann::json links = nlohmann::json::array();
  for (const LinkParams& l : t.links) links.push_back({l.gbytes_per_s, l.latency_ns, l.pj_per_bit});
  return {{"mesh", {t.width, t.height}},
          {"die", {t.die_width, t.die_height}},
          {"wafer", {t.wafer_width, t.wafer_height}},
          {"links", links},
          {"peak_flops", hw.peak_flops},
          {"startup_s", hw.startup_s},
          {"memory_bytes_per_s", hw.memory_bytes_per_s},
          {"memory_first_access_s", hw.memory_first_access_s},
          {"element_bytes", hw.element_bytes},
          {"clock_hz", hw.clock_hz},
          {"flit_bytes", hw.flit_bytes},
          {"router_delay_cycles", hw.router_delay_cycles}};
}

double compute_seconds(const AnalyticalHardware& hw, double flops, double bytes) {
  if (flops <= 0 && bytes <= 0) return 0.0;
  const double mem = bytes > 0 ? hw.memory_first_access_s + bytes / hw.memory_bytes_per_s : 0.0;
  return hw.startup_s + std::max(flops / hw.peak_flops, mem);
}

void add_link_load(const Topology& t, int src, int dst, double bytes, std::vector<double>& load) {
  if (bytes <= 0 || src == dst) return;
  walk_xy(t, src, dst, [&](int from, int, int dir) { load[static_cast<size_t>(from) * 4 + dir] += bytes; });
}

std::vector<double> link_loads(const Topology& t, const std::vector<double>& bytes) {
  const int n = t.nodes();
  std::vector<double> load(static_cast<size_t>(n) * 4, 0.0);
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) add_link_load(t, s, d, bytes[static_cast<size_t>(s) * n + d], load);
  return load;
}

double traffic_seconds(const AnalyticalHardware& hw, const std::vector<Message>& messages) {
  const Topology& t = hw.topology;
  const int n = t.nodes();
  std::vector<double> inject(static_cast<size_t>(n), 0.0), eject(static_cast<size_t>(n), 0.0);
  std::vector<double> link_time(static_cast<size_t>(n) * 4, 0.0);
  double latency = 0.0;
  const double cycle = 1.0 / hw.clock_hz;
  for (const Message& m : messages) {
    if (m.bytes <= 0 || m.src == m.dst) continue;
    inject[static_cast<size_t>(m.src)] += m.bytes;
    eject[static_cast<size_t>(m.dst)] += m.bytes;
    // Zero-load latency of the head: injection, R cycles per router, each link's latency.
    double lat = (1 + hw.router_delay_cycles) * cycle;
    walk_xy(t, m.src, m.dst, [&](int from, int to, int dir) {
      link_time[static_cast<size_t>(from) * 4 + dir] += m.bytes / link_bytes_per_s(t, from, to);
      lat += hw.router_delay_cycles * cycle + std::max(cycle, t.link(from, to).latency_ns * 1e-9);
    });
    latency = std::max(latency, lat);
  }
  double busiest = 0.0;
  for (double lt : link_time) busiest = std::max(busiest, lt);
  for (int v = 0; v < n; ++v)
    busiest = std::max({busiest, inject[v] / hw.ni_bytes_per_s(), eject[v] / hw.ni_bytes_per_s()});
  return busiest > 0 ? busiest + latency : 0.0;
}

double traffic_seconds(const AnalyticalHardware& hw, const std::vector<double>& bytes) {
  const int n = hw.topology.nodes();
  std::vector<Message> messages;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      if (bytes[static_cast<size_t>(s) * n + d] > 0) messages.push_back({s, d, bytes[static_cast<size_t>(s) * n + d]});
  return traffic_seconds(hw, messages);
}

}  // namespace nmpsim::mapping
