#include "nmpsim/methods/hdmoe/hdmoe_strategy.h"

#include <algorithm>
#include <numeric>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

NodeBalanceProblem node_balance_problem(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                                        int l, const HdmoeOptions& opt) {
  NodeBalanceProblem pb;
  const int D = hw.topology.nodes();
  pb.experts = m.experts;
  pb.nodes = D;
  pb.top_k = m.top_k;
  pb.batch = opt.batch;
  pb.freq = profile.frequencies(l % profile.layers());
  pb.groups = coactivation_groups(profile, l % profile.layers(), opt.max_groups);
  if (opt.sampled_batches > 1) {
    // Batches spread evenly over the profile.
    const size_t stride = std::max<size_t>(1, profile.tokens() / opt.sampled_batches);
    for (int s = 0; s < opt.sampled_batches; ++s) {
      const std::vector<int> cnt = profile.expert_counts(l % profile.layers(), s * stride, opt.batch);
      std::vector<double> f(cnt.size());
      for (size_t e = 0; e < cnt.size(); ++e) f[e] = double(cnt[e]) / opt.batch;
      pb.batch_freq.push_back(f);
    }
  }
  pb.expert_flops_per_token = m.expert_flops_per_token();
  pb.expert_bytes = m.expert_bytes();
  pb.token_bytes = m.token_bytes();
  if (opt.authors_objective) {
    pb.batch_freq.clear();                                        // expected loads, no sampled batches
    pb.expert_flops_per_token = 2.0 * m.hidden * m.intermediate;  // one matrix
    pb.expert_bytes = 0;                                          // no memory term
    pb.token_bytes = 4.0 * m.hidden;                              // 4 bytes per element
  }
  pb.peak_flops = hw.peak_flops;
  pb.memory_bytes_per_s = hw.memory_bytes_per_s;
  double link = 1e300;  // the slowest link level that occurs
  for (int n = 0; n < D; ++n) {
    if (hw.topology.x(n) + 1 < hw.topology.width) link = std::min(link, hw.topology.link(n, n + 1).gbytes_per_s * 1e9);
    if (hw.topology.y(n) + 1 < hw.topology.height)
      link = std::min(link, hw.topology.link(n, n + hw.topology.width).gbytes_per_s * 1e9);
  }
  pb.link_bytes_per_s = link < 1e300 ? link : hw.topology.links[0].gbytes_per_s * 1e9;
  pb.gamma = opt.gamma;
  // Memory: what is left after attention, gates, dense layers and the KV cache, in whole experts per layer.
  Placement empty("probe", m.experts, D, m.moe_layers);
  const int g = opt.attn_tp > 0 ? opt.attn_tp : D;
  // Decode: the batch the placement is optimised for (the option); prompts: the run's steps.
  const double fixed = (opt.shape.kind == StepKind::kDecode ? memory_demand(empty, m, g, opt.batch, opt.context)
                                                            : memory_demand(empty, m, g, opt.shape))
                           .max_bytes;
  pb.max_shares_per_node = std::max(0.0, (opt.memory_capacity_bytes - fixed) / (m.moe_layers * m.expert_bytes()));
  return pb;
}

MappingCost mapping_cost(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                         const Placement& p, const HdmoeOptions& opt) {
  Placement logical = p;
  logical.set_identity_map();  // logical == physical ids
  const auto shares = physical_shares(logical);
  const Groups groups = make_groups(hw.topology, opt.attn_tp);
  std::vector<LayerPlan> plans;
  for (int s = 0; s < opt.mapping_samples; ++s) {
    const int l = m.dense_layers + (s * m.moe_layers) / std::max(1, opt.mapping_samples);
    plans.push_back(plan_layer(m, shares, l, profile, static_cast<size_t>(s) * opt.batch, groups,
                               RunShape{opt.batch, opt.context}));
  }
  return MappingCost(hw, plans);
}

const char* mapper_name(Mapper m) {
  switch (m) {
    case Mapper::kBayesian:
      return "bo";
    case Mapper::kAnnealing:
      return "sa";
    case Mapper::kRandom:
      return "random";
  }
  return "bo";
}

Mapper parse_mapper(const std::string& text, const std::string& where) {
  if (text == "bo") return Mapper::kBayesian;
  if (text == "sa") return Mapper::kAnnealing;
  if (text == "random") return Mapper::kRandom;
  throw InputError(where + ": expected bo, sa or random, got '" + text + "'");
}

HeldOut held_out(const HdmoeOptions& opt, const RoutingTrace& profile) {
  HeldOut h;
  h.batch = opt.batch;
  h.context = opt.context;
  h.attn_tp = opt.attn_tp;
  if (opt.selection_batches > 0)
    h.first_tokens = held_out_offsets(profile.tokens(), opt.batch, opt.sampled_batches, opt.selection_batches);
  return h;
}

namespace {
/// Per layer, the fastest of the node balance, TP, EP and CB on the held-out batches, TP unless
/// another is clearly faster (choose_candidate).
Placement select_candidates(const Placement& node, const ModelSpec& m, const AnalyticalHardware& hw,
                            const RoutingTrace& profile, const HdmoeOptions& opt) {
  const int D = hw.topology.nodes();
  const Placement tp = make_tp(m, D), ep = make_ep(m, D);
  const Placement cb = make_cb(m, hw.topology, profile, default_cb_regions(m, hw.topology));
  const std::vector<Candidate> cands{{"milp", &node}, {"tp", &tp}, {"ep", &ep}, {"cb", &cb}};
  const HeldOut h = held_out(opt, profile);
  // TP is the reference: the other candidates replace it in a layer only when clearly faster there.
  Selection sel = select_per_layer(cands, m, hw, profile, h, node.strategy, 1);
  sel.placement.solver = node.solver;
  nlohmann::json s = sel.to_json(cands);
  s["first_tokens"] = h.first_tokens;
  s["reference"] = "tp";
  s["clearly_faster_z"] = kSelectionZ;
  s["clearly_faster_min_gain"] = kSelectionMinGain;
  sel.placement.solver["selection"] = s;
  sel.placement.validate(node.strategy);
  return sel.placement;
}

double held_out_total_s(const Placement& p, const ModelSpec& m, const AnalyticalHardware& hw,
                        const RoutingTrace& profile, const HeldOut& h) {
  double s = 0;
  for (double x : held_out_layer_seconds(p, m, hw, profile, h)) s += x;
  return s;
}
}  // namespace

Placement make_node_balance(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                            const HdmoeOptions& opt) {
  const int D = hw.topology.nodes();
  Placement p("hdmoe-node", m.experts, D, m.moe_layers);
  const Placement ep = make_ep(m, D), tp = make_tp(m, D);
  int tp_layers = 0;
  nlohmann::json layers = nlohmann::json::array();
  double total_s = 0, slowest_s = 0, worst_gap = 0, sum_obj = 0, sum_warm = 0;
  int optimal = 0, searched = 0, full = 0;
  for (int l = 0; l < m.moe_layers; ++l) {
    const NodeBalanceProblem pb = node_balance_problem(m, hw, profile, l, opt);
    if (pb.max_shares_per_node * D < m.experts)
      throw InputError("hdmoe: the experts of " + m.name + " do not fit in " + std::to_string(D) + " nodes' memory");
    NodeBalanceResult r = solve_node_balance(pb, ep.share[l], opt.time_limit_s);
    // TP is a valid placement too: keep it when the model rates it better (compute-bound points).
    const NodeBalanceEval tp_eval = evaluate(pb, tp.share[l]);
    const bool chose_tp = tp_eval.objective < r.eval.objective;
    if (chose_tp) {
      r.P = tp.share[l];
      r.eval = tp_eval;
      r.gap = r.eval.objective > 0 ? std::max(0.0, (r.eval.objective - r.best_bound) / r.eval.objective) : 0.0;
      ++tp_layers;
    }
    p.share[l] = r.P;
    total_s += r.seconds;
    slowest_s = std::max(slowest_s, r.seconds);
    searched += r.used_cbc;
    full += r.full_model;
    worst_gap = std::max(worst_gap, r.gap);
    sum_obj += r.eval.objective;
    sum_warm += r.warm_objective;
    optimal += r.optimal;
    layers.push_back({{"layer", l},
                      {"objective_us", r.eval.objective * 1e6},
                      {"t_comp_us", r.eval.t_comp * 1e6},
                      {"t_comm_us", r.eval.t_comm * 1e6},
                      {"ep_objective_us", r.warm_objective * 1e6},
                      {"tp_objective_us", tp_eval.objective * 1e6},
                      {"chose_tp", chose_tp},
                      {"bound_us", r.best_bound * 1e6},
                      {"gap", r.gap},
                      {"optimal", r.optimal},
                      {"branch_and_bound", r.used_cbc},
                      {"full_model", r.full_model},
                      {"search_gap", r.search_gap},
                      {"answer_from", r.start},
                      {"seconds", r.seconds},
                      {"branch_nodes", r.branch_nodes},
                      {"groups_kept", pb.groups.experts.size()},
                      {"groups_total", pb.groups.total_groups},
                      {"group_mass_kept", pb.groups.kept_mass},
                      {"variables", r.variables},
                      {"constraints", r.constraints}});
  }
  p.solver = {{"method", "node balance: MILP (Eq. 5-12) with COIN-OR CBC, starts EP and the wrap-around split"},
              {"gamma", opt.gamma},
              {"batch", opt.batch},
              {"time_limit_s_per_layer", opt.time_limit_s},
              {"max_groups", opt.max_groups},
              {"sampled_batches", opt.sampled_batches},
              {"selection_batches", opt.selection_batches},
              {"solve_seconds", total_s},
              {"slowest_layer_seconds", slowest_s},
              {"layers_branch_and_bound", searched},
              {"layers_full_model", full},
              {"layers_proven_optimal", optimal},
              {"layers_where_tp_was_best", tp_layers},
              {"worst_gap", worst_gap},
              {"objective_us_sum", sum_obj * 1e6},
              {"ep_objective_us_sum", sum_warm * 1e6},
              {"layers", layers}};
  p.validate("hdmoe-node");
  return opt.selection_batches > 0 ? select_candidates(p, m, hw, profile, opt) : p;
}

MappingResult link_balance(const Placement& node_balanced, const ModelSpec& m, const AnalyticalHardware& hw,
                           const RoutingTrace& profile, const HdmoeOptions& opt) {
  const MappingCost cost = mapping_cost(m, hw, profile, node_balanced, opt);
  switch (opt.mapper) {
    case Mapper::kAnnealing:
      return map_annealing(cost, opt.evaluations, opt.seed);
    case Mapper::kRandom:
      return map_random(cost, opt.evaluations, opt.seed);
    case Mapper::kBayesian:
      break;
  }
  return map_bayesian(cost, opt.evaluations, opt.seed, hw.topology);
}

Placement with_link_balance(Placement p, const MappingResult& mr, const ModelSpec& m, const AnalyticalHardware& hw,
                            const RoutingTrace& profile, const HdmoeOptions& opt) {
  p.strategy = "hdmoe";
  Placement identity = p;
  for (size_t n = 0; n < mr.node_map.size(); ++n) p.node_map[n] = mapping::PhysicalNode(mr.node_map[n]);
  p.solver["link_balance"] = {{"method", mr.method},
                              {"cost", "flow"},
                              {"evaluations", mr.best_by_evaluation.size()},
                              {"identity_cost_us", mr.identity_cost * 1e6},
                              {"best_cost_us", mr.cost * 1e6},
                              {"seconds", mr.seconds}};
  return kept_if_faster(std::move(p), std::move(identity), m, hw, profile, opt);
}

Placement kept_if_faster(Placement linked, Placement identity, const ModelSpec& m, const AnalyticalHardware& hw,
                         const RoutingTrace& profile, const HdmoeOptions& opt) {
  nlohmann::json& lb = linked.solver["link_balance"];
  const HeldOut h = held_out(opt, profile);
  if (!h.first_tokens.empty()) {
    // The search's cost is a model (the link-load bound, or the authors' store-and-forward); keep its
    // map only if the layers run faster with it on the held-out batches.
    const double with = held_out_total_s(linked, m, hw, profile, h),
                 without = held_out_total_s(identity, m, hw, profile, h);
    lb["held_out_moe_us"] = with * 1e6;
    lb["held_out_moe_us_identity"] = without * 1e6;
    lb["kept"] = with <= without;
    if (with > without) {
      identity.strategy = linked.strategy;
      identity.solver = linked.solver;
      linked = std::move(identity);
    }
  }
  linked.validate("hdmoe");
  return linked;
}

Placement make_hdmoe(const ModelSpec& m, const AnalyticalHardware& hw, const RoutingTrace& profile,
                     const HdmoeOptions& opt, MappingResult* mapping_out) {
  const Placement node = make_node_balance(m, hw, profile, opt);
  MappingResult mr = link_balance(node, m, hw, profile, opt);
  Placement p = with_link_balance(node, mr, m, hw, profile, opt);
  if (mapping_out) *mapping_out = std::move(mr);
  return p;
}

}  // namespace nmpsim::methods::hdmoe
