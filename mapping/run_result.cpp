#include "mapping/run_result.h"

#include <chrono>

namespace nmpsim::mapping {

StrategyResult::StrategyResult(std::string strategy_name, std::string fidelity_name, int nodes)
    : strategy(std::move(strategy_name)),
      fidelity(std::move(fidelity_name)),
      node_flops(static_cast<size_t>(nodes), 0.0),
      node_expert_s(static_cast<size_t>(nodes), 0.0),
      node_token_work(static_cast<size_t>(nodes), 0.0),
      link_bytes(static_cast<size_t>(nodes) * 4, 0.0) {}

double StrategyResult::tbt_s(int step) const {
  double s = 0;
  for (const LayerRecord& r : steps[step]) s += r.t.total_s();
  return s;
}

double StrategyResult::mean_tbt_s() const {
  if (steps.empty()) return 0;
  double s = 0;
  for (size_t i = 0; i < steps.size(); ++i) s += tbt_s(static_cast<int>(i));
  return s / steps.size();
}

std::vector<LayerRecord> StrategyResult::mean_layers() const {
  std::vector<LayerRecord> out(steps.empty() ? 0 : steps[0].size());
  for (const auto& step : steps)
    for (size_t l = 0; l < step.size(); ++l) {
      const PhaseTimes& a = step[l].t;
      PhaseTimes& o = out[l].t;
      o.allgather_s += a.allgather_s / steps.size();
      o.attention_s += a.attention_s / steps.size();
      o.reduce_scatter_s += a.reduce_scatter_s / steps.size();
      o.gate_s += a.gate_s / steps.size();
      o.dispatch_s += a.dispatch_s / steps.size();
      o.experts_s += a.experts_s / steps.size();
      o.combine_s += a.combine_s / steps.size();
      o.shared_allgather_s += a.shared_allgather_s / steps.size();
      o.shared_s += a.shared_s / steps.size();
      o.shared_reduce_scatter_s += a.shared_reduce_scatter_s / steps.size();
      out[l].expert_imbalance_s += step[l].expert_imbalance_s / steps.size();
    }
  return out;
}

/// Bytes each ring hop carries in one all-gather plus one reduce-scatter: every chunk but one, twice.
std::vector<double> ring_traffic(const Groups& groups, const std::vector<double>& chunk, int n) {
  std::vector<double> m(static_cast<size_t>(n) * n, 0.0);
  for (const auto& ring : groups.ring) {
    const size_t g = ring.size();
    if (g < 2) continue;
    double total = 0;
    for (int v : ring) total += chunk[v];
    for (size_t p = 0; p < g; ++p) {
      // All-gather: position p forwards every chunk but (p + 1)'s; reduce-scatter every chunk but its own.
      m[static_cast<size_t>(ring[p]) * n + ring[(p + 1) % g]] += (total - chunk[ring[(p + 1) % g]]) + (total - chunk[ring[p]]);
    }
  }
  return m;
}

StrategyResult run_flow(const AnalyticalHardware& hw, const ModelSpec& m, const RoutingTrace& trace,
                        const Placement& p, const RunConfig& cfg) {
  const auto t0 = std::chrono::steady_clock::now();
  const Topology& t = hw.topology;
  const int n = t.nodes();
  const Groups groups = make_groups(t, cfg.attn_tp);
  const auto physical = physical_shares(p);
  StrategyResult r(p.strategy, "flow", n);
  for (int s = 0; s < cfg.steps; ++s) {
    std::vector<LayerRecord> layers;
    for (int l = 0; l < m.layers(); ++l) {
      const LayerPlan plan =
          plan_layer(m, physical, l, trace, cfg.first_token + static_cast<size_t>(s) * cfg.shape.batch, groups, cfg.shape);
      LayerRecord rec;
      rec.t = flow_layer_times(hw, plan, groups);
      double sum = 0;
      int busy = 0;
      for (int v = 0; v < n; ++v) {
        double node_s = 0, flops = plan.attn_flops[v] + plan.gate_flops[v] + plan.reduce_flops[v] + plan.shared_flops[v];
        for (const ExpertWork& w : plan.expert_work[v]) {
          node_s += compute_seconds(hw, w.flops, w.bytes);
          flops += w.flops;
        }
        r.node_flops[v] += flops;
        r.node_expert_s[v] += node_s;
        r.node_token_work[v] += plan.routed_token_work[v];
        if (node_s > 0) {
          sum += node_s;
          ++busy;
        }
      }
      rec.expert_imbalance_s = busy ? rec.t.experts_s - sum / busy : 0.0;
      const auto add_links = [&](const std::vector<double>& m2) {
        const auto loads = link_loads(t, m2);
        for (size_t i = 0; i < loads.size(); ++i) r.link_bytes[i] += loads[i];
      };
      add_links(plan.dispatch);
      add_links(plan.combine);
      add_links(ring_traffic(groups, plan.home_bytes, n));
      if (rec.t.shared_s > 0) add_links(ring_traffic(groups, plan.home_bytes, n));
      r.dispatch_bytes += plan.dispatch_total();
      r.combine_bytes += plan.combine_total();
      layers.push_back(rec);
    }
    r.steps.push_back(std::move(layers));
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace nmpsim::mapping
