#include "nmpsim/methods/moentwine/balancer.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::methods::moentwine {

ExpertCopies native_copies(int experts, int devices, int slots) {
  ExpertCopies c;
  c.holders.resize(static_cast<size_t>(experts));
  for (int e = 0; e < experts; ++e) c.holders[static_cast<size_t>(e)].push_back(e % devices);
  c.free_shadow.assign(static_cast<size_t>(devices), slots);
  return c;
}

bool ExpertCopies::holds(int e, int d) const {
  const auto& h = holders[static_cast<size_t>(e)];
  return std::find(h.begin(), h.end(), d) != h.end();
}

ExpertCopies copies_from_shares(const std::vector<std::vector<double>>& rows, int slots, const std::string& where) {
  ExpertCopies c;
  c.holders.resize(rows.size());
  c.free_shadow.assign(rows.empty() ? 0 : rows[0].size(), slots);
  for (size_t e = 0; e < rows.size(); ++e) {
    for (size_t v = 0; v < rows[e].size(); ++v)
      if (rows[e][v] > 1 - 1e-9) c.holders[e].push_back(static_cast<int>(v));
    if (c.holders[e].size() != 1)
      throw mapping::InputError(where + ": expert " + std::to_string(e) +
                                " is not whole on one node; the balancer needs whole experts (ep, moentwine-*)");
  }
  return c;
}

std::vector<double> heats(const ExpertCopies& c, const std::vector<double>& load, int devices) {
  std::vector<double> h(static_cast<size_t>(devices), 0.0);
  for (size_t e = 0; e < c.holders.size(); ++e)
    for (int d : c.holders[e]) h[static_cast<size_t>(d)] += load[e] / static_cast<double>(c.holders[e].size());
  return h;
}

double imbalance(const std::vector<double>& heat) {
  if (heat.empty()) return 0.0;
  const double mean = std::accumulate(heat.begin(), heat.end(), 0.0) / static_cast<double>(heat.size());
  return mean > 0 ? (*std::max_element(heat.begin(), heat.end()) - mean) / mean : 0.0;
}

namespace {

/// The nearest qualifying target for expert e from the hottest device `hot` (-1 if none).
int target_for(const mapping::Topology& t, const ExpertCopies& c, const std::vector<double>& load,
               const std::vector<double>& heat, int e, int hot, const ExpertCopies* existing) {
  const double copies = static_cast<double>(c.holders[static_cast<size_t>(e)].size()) + 1;
  // Distance from the hottest device; a device already holding a replica of e is nearer than any.
  auto dist = [&](int d) { return existing && existing->holds(e, d) ? -1 : t.hops(hot, d); };
  int best = -1;
  for (int d = 0; d < static_cast<int>(heat.size()); ++d) {
    if (c.free_shadow[static_cast<size_t>(d)] <= 0 || c.holds(e, d)) continue;
    if (heat[static_cast<size_t>(d)] + load[static_cast<size_t>(e)] / copies >= heat[static_cast<size_t>(hot)])
      continue;
    if (best < 0 || dist(d) < dist(best)) best = d;
  }
  return best;
}

}  // namespace

std::vector<Move> topology_aware_balance(const mapping::Topology& t, ExpertCopies& c, const std::vector<double>& load,
                                         const ExpertCopies* existing) {
  const int devices = static_cast<int>(c.free_shadow.size());
  if (static_cast<int>(load.size()) != static_cast<int>(c.holders.size()) || devices != t.nodes())
    throw mapping::InputError("moentwine balancer: loads, experts and devices do not match");
  std::vector<Move> moves;
  while (true) {
    const std::vector<double> heat = heats(c, load, devices);
    const int hot = static_cast<int>(std::max_element(heat.begin(), heat.end()) - heat.begin());
    // The hottest device's experts, most popular first (ties: lower id).
    std::vector<int> mine;
    for (int e = 0; e < static_cast<int>(c.holders.size()); ++e)
      if (c.holds(e, hot) && load[static_cast<size_t>(e)] > 0) mine.push_back(e);
    std::stable_sort(mine.begin(), mine.end(),
                     [&](int a, int b) { return load[static_cast<size_t>(a)] > load[static_cast<size_t>(b)]; });
    Move m{-1, -1, -1};
    for (int e : mine) {
      const int to = target_for(t, c, load, heat, e, hot, existing);
      if (to < 0) continue;
      m.expert = e;
      m.to = to;
      for (int h : c.holders[static_cast<size_t>(e)])
        if (m.from < 0 || t.hops(h, to) < t.hops(m.from, to)) m.from = h;
      break;
    }
    if (m.expert < 0) return moves;
    c.holders[static_cast<size_t>(m.expert)].push_back(m.to);
    --c.free_shadow[static_cast<size_t>(m.to)];
    moves.push_back(m);
  }
}

std::vector<Move> greedy_balance(ExpertCopies& c, const std::vector<double>& load) {
  const int devices = static_cast<int>(c.free_shadow.size());
  if (load.size() != c.holders.size()) throw mapping::InputError("greedy balancer: loads and experts do not match");
  std::vector<Move> moves;
  while (true) {
    auto per_copy = [&](int e) {
      return load[static_cast<size_t>(e)] / static_cast<double>(c.holders[static_cast<size_t>(e)].size());
    };
    int hot = -1;  // the expert of highest load per copy
    for (int e = 0; e < static_cast<int>(load.size()); ++e)
      if (per_copy(e) > 0 && (hot < 0 || per_copy(e) > per_copy(hot))) hot = e;
    if (hot < 0) return moves;
    const std::vector<double> heat = heats(c, load, devices);
    int cold = -1;
    for (int d = 0; d < devices; ++d)
      if (c.free_shadow[static_cast<size_t>(d)] > 0 && !c.holds(hot, d) &&
          (cold < 0 || heat[static_cast<size_t>(d)] < heat[static_cast<size_t>(cold)]))
        cold = d;
    if (cold < 0) return moves;
    moves.push_back(Move{hot, c.holders[static_cast<size_t>(hot)].front(), cold});
    c.holders[static_cast<size_t>(hot)].push_back(cold);
    --c.free_shadow[static_cast<size_t>(cold)];
  }
}

std::vector<Stage> migration_stages(const mapping::Topology& t, const std::vector<int>& domain_of, int from, int to) {
  std::vector<Stage> out;
  auto dom = [&](int v) { return domain_of.empty() ? 0 : domain_of.at(static_cast<size_t>(v)); };
  mapping::walk_xy(t, from, to, [&](int a, int b, mapping::LinkDir) {
    const bool global = dom(a) != dom(b);
    if (out.empty() || out.back().global != global) out.push_back(Stage{a, a, 0, global});
    out.back().dst = b;
    ++out.back().hops;
  });
  return out;
}

std::vector<CopyChain> copy_chains(const std::vector<Copy>& copies) {
  std::vector<CopyChain> chains;
  std::vector<std::pair<int, size_t>> where(copies.size());  // copy -> (chain, position)
  for (size_t i = 0; i < copies.size(); ++i) {
    const Copy& c = copies[i];
    int wait = -1;
    if (c.after >= 0) {
      if (static_cast<size_t>(c.after) >= i) throw std::logic_error("copy_chains: a copy after a later one");
      const auto [k, pos] = where[static_cast<size_t>(c.after)];
      if (pos + 1 == chains[static_cast<size_t>(k)].nodes.size()) {
        chains[static_cast<size_t>(k)].nodes.push_back(c.to);
        where[i] = {k, pos + 1};
        continue;
      }
      wait = k;
    }
    chains.push_back(CopyChain{c.from, wait, {c.to}});
    where[i] = {static_cast<int>(chains.size() - 1), 0};
  }
  return chains;
}

LoadPredictor::LoadPredictor(int layers, int window, double ema)
    : window_(std::max(1, window)),
      ema_(ema),
      history_(static_cast<size_t>(layers)),
      average_(static_cast<size_t>(layers)) {}

void LoadPredictor::observe(int layer, const std::vector<double>& load) {
  auto& avg = average_.at(static_cast<size_t>(layer));
  if (ema_ > 0) {
    if (avg.empty()) avg = load;
    for (size_t e = 0; e < load.size(); ++e) avg[e] = ema_ * load[e] + (1 - ema_) * avg[e];
    return;
  }
  auto& h = history_.at(static_cast<size_t>(layer));
  h.push_back(load);
  if (static_cast<int>(h.size()) > window_) h.pop_front();
  avg.assign(load.size(), 0.0);
  for (const auto& step : h)
    for (size_t e = 0; e < load.size(); ++e) avg[e] += step[e] / static_cast<double>(h.size());
}

std::vector<double> LoadPredictor::predict(int layer) const { return average_.at(static_cast<size_t>(layer)); }

bool should_migrate(const std::vector<double>& imbalance_per_layer, double alpha, int steps_since_last, int beta) {
  const double total = std::accumulate(imbalance_per_layer.begin(), imbalance_per_layer.end(), 0.0);
  return total > alpha && steps_since_last >= beta;
}

}  // namespace nmpsim::methods::moentwine
