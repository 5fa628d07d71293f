#include "nmpsim/mapping/group_collective.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace nmpsim::mapping {

GroupRect group_rect(const Topology& t, const std::vector<int>& members) {
  GroupRect r;
  if (members.empty()) return r;
  int x0 = t.width, y0 = t.height, x1 = -1, y1 = -1;
  for (int v : members) {
    x0 = std::min(x0, t.x(v));
    y0 = std::min(y0, t.y(v));
    x1 = std::max(x1, t.x(v));
    y1 = std::max(y1, t.y(v));
  }
  const int a = x1 - x0 + 1, b = y1 - y0 + 1;
  if (static_cast<size_t>(a) * static_cast<size_t>(b) != members.size()) return r;
  std::vector<char> in(static_cast<size_t>(t.nodes()), 0);
  for (int v : members) in[static_cast<size_t>(v)] = 1;
  r.rows.assign(static_cast<size_t>(b), {});
  r.cols.assign(static_cast<size_t>(a), {});
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) {
      const int v = t.id(x, y);
      if (!in[static_cast<size_t>(v)]) return GroupRect{};
      r.rows[static_cast<size_t>(y - y0)].push_back(v);
      r.cols[static_cast<size_t>(x - x0)].push_back(v);
    }
  r.a = a;
  r.b = b;
  return r;
}

CollectiveCosts collective_costs(const AnalyticalHardware& hw, const std::vector<int>& members) {
  const Topology& t = hw.topology;
  CollectiveCosts k;
  // The links between members: each member's mesh neighbours that are members too (O(g log g), not
  // every pair of members).
  std::vector<int> sorted = members;
  std::sort(sorted.begin(), sorted.end());
  double beta = std::numeric_limits<double>::infinity(), lat_ns = 0;
  for (int u : members)
    for (int dir = 0; dir < 4; ++dir) {
      const int v = neighbour(t, u, dir);
      if (v < 0 || !std::binary_search(sorted.begin(), sorted.end(), v)) continue;
      beta = std::min(beta, t.link(u, v).gbytes_per_s * 1e9);
      lat_ns = std::max(lat_ns, t.link(u, v).latency_ns);
    }
  k.link_bytes_per_s = std::isfinite(beta) ? beta : hw.ni_bytes_per_s();
  k.node_ni_bytes_per_s = hw.node_ni_bytes_per_s();
  k.hop_s = hw.router_delay_cycles / hw.clock_hz + lat_ns * 1e-9;
  k.startup_s = hw.reduce == ReduceMode::kKernel ? hw.startup_s : 0.0;
  return k;
}

double group_collective_s(RingAlgorithm alg, const std::vector<int>& ring, const GroupRect& rect, double chunk_bytes,
                          bool reduce, const CollectiveCosts& k) {
  const double g = static_cast<double>(ring.size()), c = chunk_bytes, l = k.hop_s;
  const double beta = k.link_bytes_per_s, ni = k.node_ni_bytes_per_s;
  if (ring.size() < 2) return 0.0;
  if (alg == RingAlgorithm::kOneWay || (alg == RingAlgorithm::kBidirectional && ring.size() < 3))
    return (g - 1) * (c / std::min(beta, ni) + l + (reduce ? k.startup_s : 0.0));
  // Both directions (two rings, or the 2D halves) share the node's NI ports; two adds per step.
  const double r = std::min(beta, ni / 2), s = reduce ? 2 * k.startup_s : 0.0;
  if (alg == RingAlgorithm::kBidirectional) return (g - 1) * (c / 2 / r + l + s);
  if (rect.a < 2 || rect.b < 2) return std::numeric_limits<double>::infinity();
  // Half along x then y, half along y then x; a line's ring wraps back over x - 1 hops.
  const double a = rect.a, b = rect.b;
  const double x_first = (a - 1) * (c / 2 / r + (a - 1) * l + s) + (b - 1) * (a * c / 2 / r + (b - 1) * l + s);
  const double y_first = (b - 1) * (c / 2 / r + (b - 1) * l + s) + (a - 1) * (b * c / 2 / r + (a - 1) * l + s);
  return std::max(x_first, y_first);
}

namespace {

/// The ring collective of `c`'s kind round `line` (in order), chunk[i] for line[i] (one way).
Collective line_collective(const GroupCollective& c, const std::vector<int>& line, const std::vector<double>& chunk) {
  Collective k;
  k.kind = c.kind;
  k.element_bytes = c.element_bytes;
  k.reduce = c.reduce;
  for (size_t i = 0; i < line.size(); ++i) {
    k.ring.push_back(PhysicalNode(line[i]));
    k.chunk_bytes.push_back(chunk[i]);
  }
  return k;
}

/// One half of a 2D collective: rings along `first` lines, then along `second` lines. `home`: each
/// member's chunk; the half moves half of every chunk.
DepList add_half(LayerSchedule& s, int ph, const GroupCollective& c, const std::vector<std::vector<int>>& first,
                 const std::vector<std::vector<int>>& second, const std::map<int, double>& home, const DepList& deps) {
  // line_sum[v]: half the chunks of the members of v's line in `lines` (what v holds after gathering
  // along it, or what v reduces for them).
  auto line_sum = [&](const std::vector<std::vector<int>>& lines) {
    std::map<int, double> sum;
    for (const auto& line : lines) {
      double t = 0;
      for (int v : line) t += home.at(v) / 2;
      for (int v : line) sum[v] = t;
    }
    return sum;
  };
  const bool gather = c.kind == CollectiveKind::kRingAllGather;
  // All-gather: half its own chunk along `first`, then what it gathered along `second`. Reduce-scatter
  // mirrors it: the partial sums for its `second` line along `first`, then half its own along `second`.
  const std::map<int, double> sum = line_sum(gather ? first : second);
  auto chunks = [&](const std::vector<int>& line, bool own) {
    std::vector<double> v;
    for (int n : line) v.push_back(own ? home.at(n) / 2 : sum.at(n));
    return v;
  };
  DepList stage1, joins;
  for (const auto& line : first)
    stage1.push_back(s.collective(ph, line_collective(c, line, chunks(line, gather)), deps));
  for (const auto& line : second)
    joins.push_back(s.collective(ph, line_collective(c, line, chunks(line, !gather)), stage1));
  return joins;
}

}  // namespace

void resolve_algorithm(GroupCollective& c, RingAlgorithm want, const AnalyticalHardware* hw) {
  c.algorithm = want;
  if (want != RingAlgorithm::k2d && want != RingAlgorithm::kAuto) return;
  if (!hw) {
    c.algorithm = RingAlgorithm::kOneWay;
    return;
  }
  c.rect = group_rect(hw->topology, c.ring);
  if (want != RingAlgorithm::kAuto) return;
  double mean = 0;
  for (double b : c.chunk_bytes) mean += b / static_cast<double>(c.chunk_bytes.size());
  const CollectiveCosts k = collective_costs(*hw, c.ring);
  const bool reduce = c.kind == CollectiveKind::kRingReduceScatter;
  double best = std::numeric_limits<double>::infinity();
  for (RingAlgorithm a : {RingAlgorithm::kOneWay, RingAlgorithm::kBidirectional, RingAlgorithm::k2d}) {
    const double t = group_collective_s(a, c.ring, c.rect, mean, reduce, k);
    if (t < best * (1 - 1e-9)) {  // ties go to the simpler algorithm
      best = t;
      c.algorithm = a;
    }
  }
}

DepList add_group_collective(LayerSchedule& s, int ph, const GroupCollective& c, const DepList& deps) {
  if (c.algorithm != RingAlgorithm::k2d || c.rect.a < 2 || c.rect.b < 2) {
    Collective k = line_collective(c, c.ring, c.chunk_bytes);
    k.bidirectional = c.algorithm != RingAlgorithm::kOneWay;
    return {s.collective(ph, std::move(k), deps)};
  }
  std::map<int, double> home;
  for (size_t i = 0; i < c.ring.size(); ++i) home[c.ring[i]] = c.chunk_bytes[i];
  DepList joins = add_half(s, ph, c, c.rect.rows, c.rect.cols, home, deps);
  const DepList other = add_half(s, ph, c, c.rect.cols, c.rect.rows, home, deps);
  joins.insert(joins.end(), other.begin(), other.end());
  return joins;
}

}  // namespace nmpsim::mapping
