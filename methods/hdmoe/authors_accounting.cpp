#include "nmpsim/methods/hdmoe/authors_accounting.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <utility>

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

std::vector<double> authors_frequencies(const RoutingTrace& t, int layer, int experts) {
  const std::vector<int> cnt = t.expert_counts(layer, 0, t.tokens());
  const double extra = layer >= experts ? 1.0 : 0.0;
  std::vector<double> f(static_cast<size_t>(experts), 0.0);
  for (int e = 0; e < experts && e < static_cast<int>(cnt.size()); ++e)
    f[static_cast<size_t>(e)] = (cnt[static_cast<size_t>(e)] + extra) / static_cast<double>(t.tokens());
  return f;
}

AuthorsGroups authors_groups(const RoutingTrace& t, int layer) { return authors_groups(t, layer, 0, t.tokens()); }

AuthorsGroups authors_groups(const RoutingTrace& t, int layer, size_t first, size_t tokens) {
  std::map<std::vector<int>, size_t> count;
  std::vector<int> set(static_cast<size_t>(t.top_k()));
  for (size_t tok = first; tok < first + tokens; ++tok) {
    const uint16_t* ids = t.experts_of(layer, tok);
    set.assign(ids, ids + t.top_k());
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    ++count[set];
  }
  AuthorsGroups g;
  for (const auto& [experts, n] : count) {
    g.experts.push_back(experts);
    g.phi.push_back(static_cast<double>(n) / static_cast<double>(tokens));
  }
  return g;
}

double authors_constant_s(const ModelSpec& m, int intermediate, int batch, int context, int nodes, double flops,
                          bool expert_weights) {
  const double B = batch, h = m.hidden, L = context, E = m.experts, IS = intermediate, D = nodes;
  const double compute = (4 * B * h * h + 2 * B * L * h) / (D * flops);
  const double weights = expert_weights ? 2 * E * IS * h : 0.0;
  const double memory = (2 * B * h * L + 4 * h * (B + h) + weights + B * (IS + h)) / (D * 625e9);
  return compute + memory;
}

double authors_compute_s(const std::vector<double>& P, int nodes, const std::vector<double>& f, int batch, int hidden,
                         int intermediate, double flops) {
  double worst = 0;
  for (int d = 0; d < nodes; ++d) {
    double load = 0;
    for (size_t i = 0; i < f.size(); ++i) load += P[i * static_cast<size_t>(nodes) + static_cast<size_t>(d)] * f[i];
    worst = std::max(worst, load);
  }
  return worst * batch * 2.0 * hidden * intermediate / flops;
}

namespace {

enum { kN = 0, kE = 1, kS = 2, kW = 3 };

/// Reserves `duration` on a link's sorted, disjoint busy intervals, first fit from t0, split around
/// reservations; returns when the last piece ends.
double reserve(std::vector<std::pair<double, double>>& busy, double t0, double duration) {
  double cur = t0, left = duration;
  const double tiny = duration * 1e-12;
  auto it = std::upper_bound(busy.begin(), busy.end(), cur,
                             [](double t, const std::pair<double, double>& b) { return t < b.second; });
  std::vector<std::pair<double, double>> pieces;
  while (left > tiny) {
    const double next = it == busy.end() ? std::numeric_limits<double>::infinity() : it->first;
    if (next > cur) {
      const double take = std::min(left, next - cur);
      pieces.emplace_back(cur, cur + take);
      cur += take;
      left -= take;
      if (left <= tiny) break;
    }
    cur = std::max(cur, it->second);
    ++it;
  }
  for (const auto& p : pieces) busy.insert(std::upper_bound(busy.begin(), busy.end(), p), p);
  return cur;
}

}  // namespace

double store_and_forward_makespan(const Topology& t, const std::vector<AuthorsMessage>& msgs, double link_bytes_per_s) {
  std::vector<std::vector<std::pair<double, double>>> busy(static_cast<size_t>(t.nodes()) * 4);
  double makespan = 0;
  for (const AuthorsMessage& m : msgs) {
    const double hop_s = m.bytes / link_bytes_per_s;
    double at = 0;
    int x = t.x(m.src), y = t.y(m.src);
    auto hop = [&](int dir, int nx, int ny) {
      at = reserve(busy[static_cast<size_t>(t.id(x, y)) * 4 + dir], at, hop_s);
      x = nx;
      y = ny;
    };
    while (x != t.x(m.dst)) hop(t.x(m.dst) > x ? kE : kW, x + (t.x(m.dst) > x ? 1 : -1), y);
    while (y != t.y(m.dst)) hop(t.y(m.dst) > y ? kS : kN, x, y + (t.y(m.dst) > y ? 1 : -1));
    makespan = std::max(makespan, at);
  }
  return makespan;
}

std::vector<AuthorsMessage> authors_messages(const std::vector<double>& P, int nodes, const AuthorsGroups& g, int batch,
                                             int hidden, const std::vector<int>& cell, Rng& rng) {
  std::vector<AuthorsMessage> msgs;
  const size_t D = static_cast<size_t>(nodes);
  std::vector<char> holds(D);
  for (size_t k = 0; k < g.experts.size(); ++k) {
    const std::vector<int>& members = g.experts[k];
    const size_t chosen = static_cast<size_t>(members[rng.below(members.size())]);
    size_t agg = 0;
    while (agg + 1 < D && P[chosen * D + agg] <= 0) ++agg;
    std::fill(holds.begin(), holds.end(), 0);
    for (int i : members)
      for (size_t d = 0; d < D; ++d) holds[d] |= P[static_cast<size_t>(i) * D + d] > 0;
    const double bytes = g.phi[k] * batch * hidden;  // 1 byte per element
    for (size_t d = 0; d < D; ++d)
      if (holds[d] && d != agg) msgs.push_back({cell[d], cell[agg], bytes});
  }
  return msgs;
}

double AuthorsResult::compute_s() const {
  double s = 0;
  for (const AuthorsLayer& l : layers) s += l.compute_s;
  return s;
}

double AuthorsResult::comm_s() const {
  double s = 0;
  for (const AuthorsLayer& l : layers) s += 2 * l.comm_s;
  return s;
}

bool authors_tp_shaped(const std::vector<double>& P, int nodes) {
  const double share = 1.0 / nodes;
  return std::all_of(P.begin(), P.end(), [&](double x) { return std::abs(x - share) < 1e-12; });
}

namespace {

/// t_comp of one layer under the toggles (with none, authors_compute_s).
double toggled_compute_s(const std::vector<double>& P, int nodes, const std::vector<double>& f, const ModelSpec& m,
                         int IS, const AnalyticalHardware& hw, const AuthorsConfig& cfg) {
  const AuthorsToggles& tg = cfg.toggles;
  const double F = hw.peak_flops, B = cfg.batch, h = m.hidden;
  const double shared_flops =
      tg.shared_experts ? m.shared_experts * tg.matrices * 2.0 * h * m.shared_intermediate * B / nodes : 0.0;
  if (!tg.dram) return tg.matrices * authors_compute_s(P, nodes, f, cfg.batch, m.hidden, IS, F) + shared_flops / F;
  const double expert_bytes = m.ffn_matrices * h * IS * m.weight_bytes;
  const double shared_bytes =
      tg.shared_experts ? m.shared_experts * m.ffn_matrices * h * m.shared_intermediate * m.weight_bytes / nodes : 0.0;
  double worst = 0;
  for (size_t d = 0; d < static_cast<size_t>(nodes); ++d) {
    double load = 0, bytes = shared_bytes;
    for (size_t i = 0; i < f.size(); ++i) {
      const double share = P[i * static_cast<size_t>(nodes) + d];
      load += share * f[i];
      if (f[i] > 0) bytes += share * expert_bytes;  // an expert no token chose is not read
    }
    const double flop_s = (load * B * tg.matrices * 2.0 * h * IS + shared_flops) / F;
    worst = std::max(worst, std::max(flop_s, bytes / hw.memory_bytes_per_s));
  }
  return worst;
}

/// The first tokens of the charged batches: none (the whole trace's expected loads) or N spread evenly.
std::vector<size_t> charged_batches(size_t tokens, int batch, int n) {
  std::vector<size_t> firsts;
  const size_t B = static_cast<size_t>(batch);
  if (n <= 0 || tokens < B) return firsts;
  for (int s = 0; s < n; ++s)
    firsts.push_back(n == 1 ? 0 : (tokens - B) * static_cast<size_t>(s) / static_cast<size_t>(n - 1));
  return firsts;
}
}  // namespace

AuthorsResult authors_account(const Placement& p, const ModelSpec& m, const AnalyticalHardware& hw,
                              const RoutingTrace& trace, const AuthorsConfig& cfg) {
  const int D = hw.topology.nodes();
  const int IS = cfg.eval_intermediate > 0 ? cfg.eval_intermediate : m.intermediate;
  const double W = hw.topology.links[0].gbytes_per_s * 1e9, F = hw.peak_flops;
  const AuthorsToggles& tg = cfg.toggles;
  if (tg.sampled_batches > 0 && trace.tokens() < static_cast<size_t>(cfg.batch))
    throw InputError("hdmoe-authors: sampled_batches needs a trace of at least the batch's " +
                     std::to_string(cfg.batch) + " tokens");
  const std::vector<size_t> firsts = charged_batches(trace.tokens(), cfg.batch, tg.sampled_batches);
  AuthorsResult r;
  r.constant_s = authors_constant_s(m, IS, cfg.batch, cfg.context, D, F, !tg.dram);
  Rng rng(cfg.seed);
  for (int l = 0; l < m.moe_layers; ++l) {
    const int tl = l % trace.layers();
    std::vector<double> P(static_cast<size_t>(m.experts) * D);
    for (int e = 0; e < m.experts; ++e) {
      const std::vector<double> row = p.physical_row(l, e);
      std::copy(row.begin(), row.end(), P.begin() + static_cast<long>(e) * D);
    }
    AuthorsLayer a;
    a.analytic_tp = authors_tp_shaped(P, D);
    std::vector<int> where(static_cast<size_t>(D));
    std::iota(where.begin(), where.end(), 0);  // P is on physical nodes already
    if (!a.analytic_tp && cfg.random_mesh)
      for (size_t i = where.size(); i > 1; --i) std::swap(where[i - 1], where[rng.below(i)]);
    auto charge = [&](const std::vector<double>& f, const AuthorsGroups& g, double weight) {
      a.compute_s += weight * toggled_compute_s(P, D, f, m, IS, hw, cfg);
      a.comm_s +=
          weight * (a.analytic_tp ? tg.tp_bytes * cfg.batch * m.hidden / W
                                  : store_and_forward_makespan(
                                        hw.topology, authors_messages(P, D, g, cfg.batch, m.hidden, where, rng), W));
    };
    // Their layer index counts MoE layers only (the +1 rule of authors_frequencies).
    if (firsts.empty()) charge(authors_frequencies(trace, tl, m.experts), authors_groups(trace, tl), 1.0);
    for (size_t first : firsts) {
      const std::vector<int> cnt = trace.expert_counts(tl, first, static_cast<size_t>(cfg.batch));
      std::vector<double> f(static_cast<size_t>(m.experts), 0.0);
      for (size_t e = 0; e < f.size() && e < cnt.size(); ++e) f[e] = double(cnt[e]) / cfg.batch;
      charge(f, authors_groups(trace, tl, first, static_cast<size_t>(cfg.batch)), 1.0 / firsts.size());
    }
    r.layers.push_back(a);
  }
  return r;
}

}  // namespace nmpsim::methods::hdmoe
