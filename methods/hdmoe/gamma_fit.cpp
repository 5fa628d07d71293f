#include "nmpsim/methods/hdmoe/gamma_fit.h"

#include <memory>
#include <sstream>

#include "nmpsim/base/rng.h"
#include "nmpsim/flow/flow_model.h"
#include "nmpsim/mapping/layer_runner.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

namespace {

std::vector<Placement> sample_placements(const ModelSpec& m, const Topology& t, const RoutingTrace& tr, uint64_t seed) {
  std::vector<Placement> ps = {make_tp(m, t.nodes()), make_ep(m, t.nodes()),
                               make_cb(m, t, tr, default_cb_regions(m, t))};
  Rng rng(seed);
  for (int k = 0; k < 5; ++k) {  // random sparse placements: each expert over 1..4 random nodes
    Placement p("random", m.experts, t.nodes(), m.moe_layers);
    for (int l = 0; l < m.moe_layers; ++l)
      for (int e = 0; e < m.experts; ++e) {
        const int holders = 1 + static_cast<int>(rng.below(4));
        double sum = 0;
        std::vector<std::pair<int, double>> w;
        for (int h = 0; h < holders; ++h) {
          w.emplace_back(static_cast<int>(rng.below(t.nodes())), 0.2 + rng.uniform());
          sum += w.back().second;
        }
        for (auto& [n, v] : w) p.at(l, e, n) += v / sum;
      }
    ps.push_back(p);
  }
  return ps;
}

/// The dispatch time of MoE layer `l` of placement `p` for the batch at `first`, measured on one layer
/// of the SystemC model.
double cycle_dispatch_s(const ExecutorFactory& cycle, const AnalyticalHardware& ah, const ModelSpec& m,
                        const RoutingTrace& trace, const Placement& p, int l, size_t first, const HdmoeOptions& opt) {
  ModelSpec one = m;
  one.moe_layers = 1;
  one.dense_layers = 0;
  RoutingTrace layer_trace(1, m.experts, m.top_k, trace.tokens(), "layer");
  for (size_t i = 0; i < trace.tokens(); ++i)
    std::copy_n(trace.experts_of(l, i), m.top_k, layer_trace.mutable_experts_of(0, i));
  Placement p1(p.strategy, m.experts, p.nodes, 1);
  p1.share[0] = p.share[static_cast<size_t>(l)];
  p1.node_map = p.node_map;
  RunConfig cfg;
  cfg.shape = {opt.batch, opt.context};
  cfg.steps = 1;
  cfg.attn_tp = opt.attn_tp;
  cfg.first_token = first;
  const std::unique_ptr<Executor> ex = cycle();
  PolicyList none;
  const StrategyResult r = run_placement(*ex, RunInputs{one, layer_trace, ah, cfg}, p1, none);
  const int d = r.find_phase("dispatch");
  return d < 0 ? 0.0 : r.steps[0][0].phase(static_cast<size_t>(d));
}

}  // namespace

GammaFitResult fit_gamma(const ModelSpec& m, const AnalyticalHardware& ah, const RoutingTrace& trace,
                         const HdmoeOptions& opt, Fidelity fidelity, const ExecutorFactory& cycle) {
  // Samples: placements x batches (windows of the trace) x layers; estimate = Eq. 2 with gamma 1 for
  // that batch's own routing, measured = dispatch time of the same plan.
  const Groups groups = make_groups(ah.topology, opt.attn_tp);
  std::vector<double> estimate, measured;
  const auto placements = sample_placements(m, ah.topology, trace, opt.seed);
  for (const auto& p : placements) {
    const auto phys = physical_shares(p);
    for (int w = 0; w < 3; ++w) {
      const int l = (w * 7) % m.moe_layers;
      const size_t first = static_cast<size_t>(w) * opt.batch;
      const RoutingTrace window = trace.slice(first, static_cast<size_t>(opt.batch));
      HdmoeOptions o = opt;
      o.max_groups = 1 << 20;  // exact for the estimate
      const NodeBalanceProblem pb = node_balance_problem(m, ah, window, l, o);
      estimate.push_back(evaluate(pb, p.share[static_cast<size_t>(l)]).t_comm);
      if (fidelity == Fidelity::kFlow) {
        const LayerPlan plan =
            plan_layer(m, phys, m.dense_layers + l, trace, first, groups, RunShape{opt.batch, opt.context});
        measured.push_back(flow::traffic_seconds(ah, plan.dispatch));
      } else {
        measured.push_back(cycle_dispatch_s(cycle, ah, m, trace, p, l, first, opt));
      }
    }
  }
  return GammaFitResult{fit_through_origin(estimate, measured), static_cast<int>(placements.size())};
}

std::string convergence_csv(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                            const Placement& node_balanced, const HdmoeOptions& opt) {
  // Every mapper on the same cost, from the same node-balance placement.
  const MappingCost cost = mapping_cost(m, hw, profile, node_balanced, opt);
  const auto bo = map_bayesian(cost, opt.evaluations, opt.seed, hw.topology);
  const auto sa = map_annealing(cost, opt.evaluations, opt.seed);
  const auto rnd = map_random(cost, opt.evaluations, opt.seed);
  std::ostringstream csv;
  csv << "evaluation,bo_best_us,sa_best_us,random_best_us\n";
  for (size_t e = 0; e < bo.best_by_evaluation.size(); ++e)
    csv << e + 1 << "," << bo.best_by_evaluation[e] * 1e6 << "," << sa.best_by_evaluation[e] * 1e6 << ","
        << rnd.best_by_evaluation[e] * 1e6 << "\n";
  return csv.str();
}

}  // namespace nmpsim::methods::hdmoe
