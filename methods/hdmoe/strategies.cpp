// The HD-MoE placement strategies as registered: "hdmoe-node" (node balance) and "hdmoe" (node +
// link balance), with their options and the cache of solved placements.
#include "nmpsim/methods/hdmoe/strategies.h"

#include <cstdio>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/methods/hdmoe/authors_link_balance.h"
#include "nmpsim/methods/hdmoe/gamma_fit.h"
#include "nmpsim/methods/hdmoe/hdmoe_strategy.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

namespace {

std::vector<OptionDoc> node_option_docs() {
  return {
      {"batch", "the run's batch", "batch size the placement is optimised for (tokens)"},
      {"gamma", "1", "Eq. 3 scaling of the communication estimate"},
      {"time_limit_s", "1", "time per layer for the MILP (relaxation and CBC), seconds"},
      {"max_groups", "32", "co-activation groups kept exactly per layer (the rest folded into per-expert terms)"},
      {"sampled_batches", "4", "t_comp is the mean over this many batches of the profile (1: average frequencies)"},
      {"selection_batches", "16",
       "held-out batches of the profile on which each layer keeps TP unless the MILP's placement, EP or CB "
       "is clearly faster (by 2 standard errors), and link balance must beat the identity map (flow fidelity; 0: off)"},
      {"objective", "nmpsim",
       "nmpsim (roofline compute, our token bytes, sampled batches) | authors (their released code's MILP "
       "coefficients: FLOPs only, one matrix, 4 bytes per element, expected loads)"}};
}

std::vector<OptionDoc> link_option_docs() {
  return {{"mapper", "bo", "link-balance search: bo (Bayesian optimisation), sa (annealing), random"},
          {"evaluations", "150", "link balance: mapping-cost evaluations"},
          {"mapping_samples", "4", "link balance: sampled batches in the mapping cost"},
          {"link_cost", "flow",
           "flow (one node map for the model; cost: flow-level link load of sampled batches) | authors (a map per "
           "layer; cost: the authors' store-and-forward simulation of the layer, as their released code)"}};
}

std::vector<FlagAlias> node_flags() {
  return {
      {"gamma", "gamma", "hdmoe: Eq. 3 scaling of the communication estimate (default 1)"},
      {"time-limit", "time_limit_s", "hdmoe: MILP time limit per layer (relaxation and CBC), seconds (default 1)"},
      {"max-groups", "max_groups",
       "hdmoe: co-activation groups kept exactly per layer (the rest are folded into per-expert terms; default 32)"}};
}

std::vector<FlagAlias> link_flags() {
  return {
      {"mapper", "mapper", "hdmoe: link balance by bo (Bayesian optimisation) | sa | random (default bo)"},
      {"evaluations", "evaluations", "hdmoe: link-balance cost evaluations (default 150)"},
      {"mapping-samples", "mapping_samples", "hdmoe: sampled batches in the link-balance cost (default 4)"},
      {"link-cost", "link_cost", "hdmoe: link-balance cost, flow (one map) | authors (a map per layer; default flow)"}};
}

/// Reads the node-balance options of `f` into a resolved JSON object.
nlohmann::json node_options(const JsonFields& f, const StrategyContext& ctx) {
  const double gamma = f.number("gamma", 1.0), limit = f.number("time_limit_s", 1.0);
  if (!(gamma > 0 && gamma <= 1e6)) f.fail("gamma", "must be in (0, 1e6]");
  if (!(limit > 0 && limit <= 86400)) f.fail("time_limit_s", "must be in (0, 86400] seconds");
  const std::string objective = f.string("objective", "nmpsim");
  if (objective != "nmpsim" && objective != "authors") f.fail("objective", "expected nmpsim or authors");
  return {{"batch", f.integer("batch", 1, 1 << 24, ctx.batch)},
          {"gamma", gamma},
          {"time_limit_s", limit},
          {"max_groups", f.integer("max_groups", 1, 1 << 20, 32)},
          {"sampled_batches", f.integer("sampled_batches", 1, 1024, 4)},
          {"selection_batches", f.integer("selection_batches", 0, 1024, 16)},
          {"objective", objective}};
}

HdmoeOptions to_options(const nlohmann::json& o, const StrategyContext& ctx) {
  HdmoeOptions opt;
  opt.batch = o.at("batch").get<int>();
  opt.gamma = o.at("gamma").get<double>();
  opt.time_limit_s = o.at("time_limit_s").get<double>();
  opt.max_groups = o.at("max_groups").get<size_t>();
  opt.sampled_batches = o.at("sampled_batches").get<int>();
  opt.selection_batches = o.at("selection_batches").get<int>();
  opt.authors_objective = o.at("objective").get<std::string>() == "authors";
  if (o.contains("mapper")) {
    opt.mapper = parse_mapper(o.at("mapper").get<std::string>(), "mapper");
    opt.evaluations = o.at("evaluations").get<int>();
    opt.mapping_samples = o.at("mapping_samples").get<int>();
    opt.authors_link_cost = o.value("link_cost", "flow") == "authors";
  }
  opt.seed = ctx.seed;
  opt.memory_capacity_bytes = ctx.memory_capacity_bytes;
  opt.attn_tp = ctx.attn_tp;
  opt.context = ctx.context;
  opt.shape = ctx.shape;
  return opt;
}

/// Node balance, solved once per set of inputs (hdmoe and hdmoe-node share it).
Placement solved_node_balance(const StrategyContext& ctx, const nlohmann::json& node_opts) {
  return ctx.cached(ctx.cache_key("hdmoe-node", node_opts), [&] {
    ctx.say("hdmoe: solving node balance (a MILP per MoE layer, " + std::to_string(ctx.model.moe_layers) +
            " layers, up to " + node_opts.at("time_limit_s").dump() + " s each)");
    return make_node_balance(ctx.model, ctx.hw, ctx.profile, to_options(node_opts, ctx));
  });
}

std::vector<std::string> solver_summary(const Placement& p) {
  std::vector<std::string> lines;
  const nlohmann::json& s = p.solver;
  char buf[400];
  if (s.contains("solve_seconds")) {
    std::snprintf(
        buf, sizeof buf,
        "node balance: %zu layers, %.1f s, %d proven optimal, worst gap %.1f%%, objective %.1f us vs EP %.1f us "
        "(sum over layers)",
        s["layers"].size(), s["solve_seconds"].get<double>(), s["layers_proven_optimal"].get<int>(),
        100 * s["worst_gap"].get<double>(), s["objective_us_sum"].get<double>(),
        s["ep_objective_us_sum"].get<double>());
    lines.push_back(buf);
    if (s.contains("layers_branch_and_bound")) {
      std::snprintf(buf, sizeof buf,
                    "  branch and bound on %d of %zu layers (%d on the full model, the rest on a neighbourhood of "
                    "the starts), slowest layer %.2f s",
                    s["layers_branch_and_bound"].get<int>(), s["layers"].size(), s["layers_full_model"].get<int>(),
                    s["slowest_layer_seconds"].get<double>());
      lines.push_back(buf);
    }
  }
  if (s.contains("selection")) {
    const nlohmann::json& sel = s["selection"];
    std::string chosen;
    for (const auto& [name, n] : sel["layers_chosen"].items())
      if (n.get<int>() > 0) chosen += (chosen.empty() ? "" : ", ") + name + " " + n.dump();
    std::snprintf(buf, sizeof buf,
                  "selection on %zu held-out batches (flow fidelity): layers from %s; MoE layers %.1f us",
                  sel["first_tokens"].size(), chosen.c_str(), sel["held_out_moe_us_selected"].get<double>());
    lines.push_back(buf);
  }
  if (s.contains("link_balance")) {
    const nlohmann::json& lb = s["link_balance"];
    const bool per_layer = lb.value("cost", "flow") == "authors";
    std::snprintf(buf, sizeof buf, "link balance (%s, %d evaluations%s): communication %.2f us -> %.2f us %s",
                  lb["method"].get<std::string>().c_str(), lb["evaluations"].get<int>(), per_layer ? " a layer" : "",
                  lb["identity_cost_us"].get<double>(), lb["best_cost_us"].get<double>(),
                  per_layer ? "summed over the layers it searched" : "over the sampled batches");
    lines.push_back(buf);
    if (lb.contains("kept") && !lb["kept"].get<bool>()) {
      std::snprintf(buf, sizeof buf,
                    "link balance: map dropped, the held-out batches ran faster without it (%.1f us vs %.1f us)",
                    lb["held_out_moe_us_identity"].get<double>(), lb["held_out_moe_us"].get<double>());
      lines.push_back(buf);
    }
  }
  return lines;
}

class NodeBalanceStrategy : public PlacementStrategy {
 public:
  std::string name() const override { return "hdmoe-node"; }
  std::string description() const override {
    return "HD-MoE node balance: per-layer MILP over expert shares (Eq. 5-12, COIN-OR CBC), identity node map";
  }
  std::vector<OptionDoc> options() const override { return node_option_docs(); }
  nlohmann::json resolve_options(const nlohmann::json& given, const std::string& where,
                                 const StrategyContext& ctx) const override {
    const JsonFields f(given, where, "");
    nlohmann::json o = node_options(f, ctx);
    f.no_unknown_keys();
    return o;
  }
  Placement build(const StrategyContext& ctx) const override { return solved_node_balance(ctx, ctx.options); }
  bool expensive() const override { return true; }
  std::vector<std::string> summary(const Placement& p) const override { return solver_summary(p); }
  std::vector<FlagAlias> flag_aliases() const override { return node_flags(); }
};

class HdmoeStrategy : public PlacementStrategy {
 public:
  std::string name() const override { return "hdmoe"; }
  std::string description() const override {
    return "HD-MoE: node balance, then link balance (logical-to-physical node map by Bayesian optimisation)";
  }
  std::vector<OptionDoc> options() const override {
    std::vector<OptionDoc> d = node_option_docs();
    for (const OptionDoc& o : link_option_docs()) d.push_back(o);
    return d;
  }
  nlohmann::json resolve_options(const nlohmann::json& given, const std::string& where,
                                 const StrategyContext& ctx) const override {
    const JsonFields f(given, where, "");
    nlohmann::json o = node_options(f, ctx);
    o["mapper"] = mapper_name(parse_mapper(f.string("mapper", "bo"), where + ": mapper"));
    o["evaluations"] = f.integer("evaluations", 1, 1 << 20, 150);
    o["mapping_samples"] = f.integer("mapping_samples", 1, 1024, 4);
    const std::string cost = f.string("link_cost", "flow");
    if (cost != "flow" && cost != "authors") f.fail("link_cost", "expected flow or authors");
    // Absent at the default so that placements cached before the option keep their key.
    if (cost != "flow") o["link_cost"] = cost;
    f.no_unknown_keys();
    return o;
  }
  Placement build(const StrategyContext& ctx) const override {
    nlohmann::json node_opts = ctx.options;
    for (const char* k : {"mapper", "evaluations", "mapping_samples", "link_cost"}) node_opts.erase(k);
    const Placement node = solved_node_balance(ctx, node_opts);
    const HdmoeOptions opt = to_options(ctx.options, ctx);
    ctx.say("hdmoe: link balance (" + ctx.options.at("mapper").get<std::string>() + ", " +
            ctx.options.at("evaluations").dump() + " evaluations" +
            (opt.authors_link_cost ? " per layer, the authors' store-and-forward cost)" : ")"));
    if (opt.authors_link_cost)
      return kept_if_faster(with_authors_link_balance(node, ctx.model, ctx.hw, ctx.profile, opt), node, ctx.model,
                            ctx.hw, ctx.profile, opt);
    return with_link_balance(node, link_balance(node, ctx.model, ctx.hw, ctx.profile, opt), ctx.model, ctx.hw,
                             ctx.profile, opt);
  }
  bool expensive() const override { return true; }
  std::vector<std::string> summary(const Placement& p) const override { return solver_summary(p); }
  std::vector<FlagAlias> flag_aliases() const override {
    std::vector<FlagAlias> f = node_flags();
    for (const FlagAlias& a : link_flags()) f.push_back(a);
    return f;
  }
  std::vector<ExtraOutput> extra_outputs() const override {
    return {{"convergence", "hdmoe: write best cost vs evaluations of BO, SA and random search to this CSV",
             [](const Placement& built, const StrategyContext& ctx) {
               return convergence_csv(ctx.model, ctx.hw, ctx.profile, built, to_options(ctx.options, ctx));
             }}};
  }
};

/// `nmpsim place --fit-gamma flow|cycle`: Eq. 3's gamma fitted against measured dispatch times.
std::string fit_gamma_tool(const StrategyContext& ctx, const std::string& value, const ExecutorFactory& cycle) {
  const Fidelity f = parse_fidelity(value, "--fit-gamma");
  const JsonFields none(nlohmann::json::object(), "--fit-gamma", "");
  const auto r = fit_gamma(ctx.model, ctx.hw, ctx.profile, to_options(node_options(none, ctx), ctx), f, cycle);
  char line[256];
  std::snprintf(line, sizeof line,
                "gamma = %.4f   R^2 = %.4f   (%d samples: %d placements x 3 batches; %s-level dispatch time vs Eq. 2 "
                "estimate)\n",
                r.fit.gamma, r.fit.r2, r.fit.samples, r.placements, value.c_str());
  return line;
}

}  // namespace

void register_strategies(Registry& r) {
  r.add(std::make_unique<NodeBalanceStrategy>());
  r.add(std::make_unique<HdmoeStrategy>());
  // The default comparison of `nmpsim run` is HD-MoE's on its chip: the baselines, then these two.
  r.add_default_strategy("hdmoe-node");
  r.add_default_strategy("hdmoe");
  r.add(PlacementTool{"fit-gamma", "flow|cycle",
                      "fit Eq. 3's gamma against flow- or cycle-level dispatch times and print it", fit_gamma_tool});
}

}  // namespace nmpsim::methods::hdmoe
