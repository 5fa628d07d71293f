// `nmpsim place`: build a placement file (TP, EP, CB, HD-MoE node / node+link balance), fit gamma.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <sstream>

#include "apps/cli_common.h"
#include "apps/commands.h"
#include "apps/workload_options.h"
#include "firmware/runtime.h"
#include "mapping/hdmoe_strategy.h"
#include "mapping/json_fields.h"
#include "mapping/rng.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

namespace {

/// (estimate, measured) dispatch-time pairs over sampled batches and placements for Eq. 3.
struct GammaSamples {
  std::vector<double> estimate, measured;
};

std::vector<mapping::Placement> sample_placements(const mapping::ModelSpec& m, const mapping::Topology& t,
                                                  const mapping::RoutingTrace& tr, uint64_t seed) {
  std::vector<mapping::Placement> ps = {mapping::make_tp(m, t.nodes()), mapping::make_ep(m, t.nodes()),
                                        mapping::make_cb(m, t, tr, mapping::default_cb_regions(m, t))};
  mapping::Rng rng(seed);
  for (int k = 0; k < 5; ++k) {  // random sparse placements: each expert over 1..4 random nodes
    mapping::Placement p("random", m.experts, t.nodes(), m.moe_layers);
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

}  // namespace

int cmd_place(const std::vector<std::string>& args) {
  std::string hw_name = "hdmoe-4x8-5t50g", strategy = "hdmoe", out = "placement.json", mapper = "bo",
              gamma_arg = "1", convergence, fit;
  long long batch = 64, evaluations = 150, max_groups = 32, attn_tp = 0, context = 1024, profile_tokens = 0,
            samples = 4;
  double time_limit = 1.0;
  WorkloadOptions wl;
  po::options_description desc(
      "nmpsim place: build a placement file for nmpsim run --strategy FILE\n\n"
      "Usage: nmpsim place --strategy hdmoe|hdmoe-node|tp|ep|cb [options] --out FILE\n"
      "       nmpsim place --fit-gamma flow|cycle [options]\n\nOptions");
  // clang-format off
  desc.add_options()
    ("help", "show this help")
    ("hw", po::value(&hw_name)->default_value(hw_name), "hardware preset or JSON file")
    ("strategy", po::value(&strategy)->default_value(strategy),
     "hdmoe (node + link balance) | hdmoe-node (node balance only) | tp | ep | cb")
    ("out", po::value(&out)->default_value(out), "placement JSON to write (format in docs/FORMATS.md)")
    ("batch", po::value(&batch)->default_value(batch), "batch size the placement is optimised for (tokens)")
    ("profile-tokens", po::value(&profile_tokens)->default_value(0, "all"),
     "use only the trace's first N tokens as the activation profile")
    ("gamma", po::value(&gamma_arg)->default_value(gamma_arg), "Eq. 3 scaling of the communication estimate")
    ("time-limit", po::value(&time_limit)->default_value(time_limit, "1"), "CBC time limit per layer, seconds")
    ("max-groups", po::value(&max_groups)->default_value(max_groups),
     "co-activation groups kept exactly per layer (the rest are folded into per-expert terms)")
    ("mapper", po::value(&mapper)->default_value(mapper), "link balance: bo (Bayesian optimisation) | sa (annealing) | random")
    ("evaluations", po::value(&evaluations)->default_value(evaluations), "link balance: mapping cost evaluations")
    ("mapping-samples", po::value(&samples)->default_value(samples), "link balance: sampled batches in the cost")
    ("convergence", po::value(&convergence), "write best cost vs evaluations of BO, SA and random search to this CSV")
    ("attn-tp", po::value(&attn_tp)->default_value(attn_tp), "nodes per attention TP group (0 = all)")
    ("context", po::value(&context)->default_value(context), "KV-cache length for the memory check (tokens)")
    ("fit-gamma", po::value(&fit), "fit Eq. 3's gamma against flow- or cycle-level dispatch times and print it");
  // clang-format on
  wl.add_to(desc);
  const po::variables_map vm = parse_options(args, desc);
  if (vm.count("help")) {
    std::cout << desc;
    return kExitOk;
  }
  const hw::HardwareSpec hw = hw::load_hardware(hw_name);
  const mapping::ModelSpec m = wl.make_model();
  mapping::RoutingTrace trace = wl.make_trace(m);
  if (profile_tokens > 0)
    trace = trace.slice(0, checked_count(profile_tokens, "profile-tokens", 1, static_cast<long long>(trace.tokens())));
  const mapping::AnalyticalHardware ah = firmware::to_analytical(hw);
  mapping::HdmoeOptions opt;
  opt.batch = static_cast<int>(checked_count(batch, "batch", 1, 1 << 20));
  opt.time_limit_s = time_limit;
  if (!(time_limit > 0)) throw UsageError("--time-limit: must be positive");
  opt.max_groups = checked_count(max_groups, "max-groups", 1, 1 << 20);
  opt.mapper = mapper;
  if (mapper != "bo" && mapper != "sa" && mapper != "random") throw UsageError("--mapper: expected bo, sa or random");
  opt.evaluations = static_cast<int>(checked_count(evaluations, "evaluations", 1, 1 << 20));
  opt.mapping_samples = static_cast<int>(checked_count(samples, "mapping-samples", 1, 1024));
  opt.seed = checked_count(wl.seed, "seed", 0);
  opt.memory_capacity_bytes = static_cast<double>(hw.memory.capacity_bytes);
  opt.attn_tp = static_cast<int>(checked_count(attn_tp, "attn-tp", 0, 1 << 16));
  opt.context = static_cast<int>(checked_count(context, "context", 0, 1 << 24));
  const mapping::Groups groups = mapping::make_groups(hw.topology, opt.attn_tp);

  if (!fit.empty()) {
    if (fit != "flow" && fit != "cycle") throw UsageError("--fit-gamma: expected flow or cycle");
    // Samples: placements x batches (windows of the trace) x layers; estimate = Eq. 2 with gamma 1 for
    // that batch's own routing, measured = dispatch time of the same plan.
    GammaSamples gs;
    const auto placements = sample_placements(m, hw.topology, trace, opt.seed);
    std::unique_ptr<hw::System> sys;
    if (fit == "cycle") sys = std::make_unique<hw::System>("system", hw);
    for (const auto& p : placements) {
      const auto phys = mapping::physical_shares(p);
      for (int w = 0; w < 3; ++w) {
        const int l = (w * 7) % m.moe_layers;
        const size_t first = static_cast<size_t>(w) * opt.batch;
        const mapping::RoutingTrace window = trace.slice(first, static_cast<size_t>(opt.batch));
        mapping::HdmoeOptions o = opt;
        o.max_groups = 1 << 20;  // exact for the estimate
        const mapping::NodeBalanceProblem pb = mapping::node_balance_problem(m, ah, window, l, o);
        gs.estimate.push_back(mapping::evaluate(pb, p.share[l]).t_comm);
        const mapping::LayerPlan plan =
            mapping::plan_layer(m, phys, m.dense_layers + l, trace, first, groups, mapping::RunShape{opt.batch, opt.context});
        if (fit == "flow") {
          gs.measured.push_back(mapping::traffic_seconds(ah, plan.dispatch));
        } else {
          // One layer through the SystemC model: the dispatch phase's time.
          mapping::ModelSpec one = m;
          one.moe_layers = 1;
          one.dense_layers = 0;
          mapping::RoutingTrace layer_trace = mapping::RoutingTrace(1, m.experts, m.top_k, trace.tokens(), "layer");
          for (size_t i = 0; i < trace.tokens(); ++i)
            std::copy_n(trace.experts_of(l, i), m.top_k, layer_trace.mutable_experts_of(0, i));
          mapping::Placement p1(p.strategy, m.experts, p.nodes, 1);
          p1.share[0] = p.share[l];
          p1.node_map = p.node_map;
          mapping::RunConfig cfg;
          cfg.shape = {opt.batch, opt.context};
          cfg.steps = 1;
          cfg.attn_tp = opt.attn_tp;
          cfg.first_token = first;
          firmware::Runtime rt(*sys, one, layer_trace, cfg);
          gs.measured.push_back(rt.run(p1).steps[0][0].t.dispatch_s);
        }
      }
    }
    const mapping::LinearFit f = mapping::fit_through_origin(gs.estimate, gs.measured);
    std::printf("gamma = %.4f   R^2 = %.4f   (%d samples: %zu placements x 3 batches; %s-level dispatch time vs Eq. 2 estimate)\n",
                f.gamma, f.r2, f.samples, placements.size(), fit.c_str());
    return kExitOk;
  }

  opt.gamma = std::stod(gamma_arg);
  if (!(opt.gamma > 0)) throw UsageError("--gamma: must be positive");
  mapping::Placement p;
  if (strategy == "tp") {
    p = mapping::make_tp(m, hw.topology.nodes());
  } else if (strategy == "ep") {
    p = mapping::make_ep(m, hw.topology.nodes());
  } else if (strategy == "cb") {
    p = mapping::make_cb(m, hw.topology, trace, mapping::default_cb_regions(m, hw.topology));
  } else if (strategy == "hdmoe" || strategy == "hdmoe-node") {
    opt.link_balance = strategy == "hdmoe";
    mapping::MappingResult bo;
    p = mapping::make_hdmoe(m, ah, trace, opt, &bo);
    if (!convergence.empty() && opt.link_balance) {
      // Compare mappers on the same cost, from the node-balance placement.
      const mapping::MappingCost cost = mapping::mapping_cost(m, ah, trace, p, opt);
      const auto sa = mapping::map_annealing(cost, opt.evaluations, opt.seed);
      const auto rnd = mapping::map_random(cost, opt.evaluations, opt.seed);
      const auto b = opt.mapper == "bo" ? bo : mapping::map_bayesian(cost, opt.evaluations, opt.seed, hw.topology);
      std::ostringstream csv;
      csv << "evaluation,bo_best_us,sa_best_us,random_best_us\n";
      for (size_t e = 0; e < b.best_by_evaluation.size(); ++e)
        csv << e + 1 << "," << b.best_by_evaluation[e] * 1e6 << "," << sa.best_by_evaluation[e] * 1e6 << ","
            << rnd.best_by_evaluation[e] * 1e6 << "\n";
      write_file_atomic(convergence, csv.str());
    }
  } else {
    throw UsageError("--strategy: expected hdmoe, hdmoe-node, tp, ep or cb, got '" + strategy + "'");
  }
  mapping::check_memory(p, m, hw.topology, static_cast<double>(hw.memory.capacity_bytes),
                        opt.attn_tp > 0 ? opt.attn_tp : hw.topology.nodes(), opt.batch, opt.context);
  write_json_atomic(out, mapping::placement_to_json(p));
  std::printf("nmpsim place: %s placement of %s on %s written to %s\n", p.strategy.c_str(), m.name.c_str(),
              hw.name.c_str(), out.c_str());
  if (p.solver.contains("solve_seconds")) {
    std::printf("  node balance: %d layers, %.1f s, %d proven optimal, worst gap %.1f%%, objective %.1f us vs EP %.1f us "
                "(sum over layers)\n",
                m.moe_layers, p.solver["solve_seconds"].get<double>(), p.solver["layers_proven_optimal"].get<int>(),
                100 * p.solver["worst_gap"].get<double>(), p.solver["objective_us_sum"].get<double>(),
                p.solver["ep_objective_us_sum"].get<double>());
  }
  if (p.solver.contains("link_balance")) {
    const auto& lb = p.solver["link_balance"];
    std::printf("  link balance (%s, %d evaluations): communication %.2f us -> %.2f us over %lld sampled batches\n",
                lb["method"].get<std::string>().c_str(), lb["evaluations"].get<int>(),
                lb["identity_cost_us"].get<double>(), lb["best_cost_us"].get<double>(), samples);
  }
  return kExitOk;
}

}  // namespace nmpsim::apps
