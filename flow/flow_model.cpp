#include "nmpsim/flow/flow_model.h"

#include <algorithm>
#include <cmath>

namespace nmpsim::flow {

using mapping::LinkParams;
using mapping::walk_xy;

namespace {
double link_bytes_per_s(const Topology& t, int a, int b) { return t.link(a, b).gbytes_per_s * 1e9; }

}  // namespace

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

LinkLoadModel::LinkLoadModel(const AnalyticalHardware& hw)
    : hw_(hw),
      link_bytes_per_s_(static_cast<size_t>(hw.topology.nodes()) * 4, 0.0),
      hop_latency_s_(static_cast<size_t>(hw.topology.nodes()) * 4, 0.0),
      inject_(static_cast<size_t>(hw.topology.nodes())),
      eject_(static_cast<size_t>(hw.topology.nodes())),
      link_time_(static_cast<size_t>(hw.topology.nodes()) * 4) {
  const Topology& t = hw.topology;
  const double cycle = 1.0 / hw.clock_hz;
  for (int v = 0; v < t.nodes(); ++v)
    for (int d = 0; d < 4; ++d) {
      const int to = neighbour(t, v, d);
      if (to < 0) continue;
      link_bytes_per_s_[static_cast<size_t>(v) * 4 + d] = link_bytes_per_s(t, v, to);
      hop_latency_s_[static_cast<size_t>(v) * 4 + d] =
          hw.router_delay_cycles * cycle + std::max(cycle, t.link(v, to).latency_ns * 1e-9);
    }
}

void LinkLoadModel::clear() const {
  std::fill(inject_.begin(), inject_.end(), 0.0);
  std::fill(eject_.begin(), eject_.end(), 0.0);
  std::fill(link_time_.begin(), link_time_.end(), 0.0);
}

double LinkLoadModel::load(int src, int dst, double bytes) const {
  inject_[static_cast<size_t>(src)] += bytes;
  eject_[static_cast<size_t>(dst)] += bytes;
  // Zero-load latency of the head: injection, R cycles per router, each link's latency.
  double lat = (1 + hw_.router_delay_cycles) * (1.0 / hw_.clock_hz);
  walk_xy(hw_.topology, src, dst, [&](int from, int, int dir) {
    const size_t link = static_cast<size_t>(from) * 4 + dir;
    link_time_[link] += bytes / link_bytes_per_s_[link];
    lat += hop_latency_s_[link];
  });
  return lat;
}

double LinkLoadModel::finish(double latency) const {
  double busiest = 0.0;
  for (double lt : link_time_) busiest = std::max(busiest, lt);
  const double ni = hw_.node_ni_bytes_per_s();
  for (size_t v = 0; v < inject_.size(); ++v) busiest = std::max({busiest, inject_[v] / ni, eject_[v] / ni});
  return busiest > 0 ? busiest + latency : 0.0;
}

double LinkLoadModel::seconds(const std::vector<Message>& messages) const {
  clear();
  double latency = 0.0;
  for (const Message& m : messages)
    if (m.bytes > 0 && m.src != m.dst) latency = std::max(latency, load(m.src, m.dst, m.bytes));
  return finish(latency);
}

double LinkLoadModel::seconds_matrix(const std::vector<double>& bytes) const {
  clear();
  const int n = hw_.topology.nodes();
  double latency = 0.0;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      const double b = bytes[static_cast<size_t>(s) * n + d];
      if (b > 0 && s != d) latency = std::max(latency, load(s, d, b));
    }
  return finish(latency);
}

double traffic_seconds(const AnalyticalHardware& hw, const std::vector<Message>& messages) {
  return LinkLoadModel(hw).seconds(messages);
}

double traffic_seconds(const AnalyticalHardware& hw, const std::vector<double>& bytes) {
  return LinkLoadModel(hw).seconds_matrix(bytes);
}

}  // namespace nmpsim::flow
