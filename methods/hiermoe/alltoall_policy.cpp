#include "nmpsim/methods/hiermoe/alltoall_policy.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/moe_layer.h"
#include "nmpsim/methods/common/level_fit.h"

namespace nmpsim::methods::hiermoe {

using namespace nmpsim::mapping;          // the base layer this method builds on
using namespace nmpsim::methods::common;  // the pieces methods share

AlltoallOptions alltoall_options(const nlohmann::json& j, const std::string& where) {
  const JsonFields f(j, where, "");
  AlltoallOptions o;
  o.virtual_levels = static_cast<int>(f.integer("virtual_levels", 0, 8, o.virtual_levels));
  o.dimension = static_cast<int>(f.integer("dimension", 0, 16, o.dimension));
  if (f.has("select")) {
    const std::string s = f.string("select");
    if (s != "model" && s != "flow") f.fail("select", "expected model or flow, got '" + s + "'");
    o.select_by_flow = s == "flow";
  }
  o.swap.every = static_cast<int>(f.integer("swap_every", 0, 1 << 20, o.swap.every));
  o.swap.window = static_cast<int>(f.integer("swap_window", 0, 1 << 20, o.swap.window));
  o.swap.horizon_steps = f.number_in("swap_horizon_steps", 0, 1e9, o.swap.horizon_steps);
  o.swap.max_swaps = static_cast<int>(f.integer("swap_max", 0, 1 << 16, o.swap.max_swaps));
  o.swap.gamma = f.number_in("swap_gamma", 1, 1000, o.swap.gamma);
  if (f.has("dedup")) {
    const nlohmann::json& d = f.raw("dedup");
    if (!d.is_boolean()) f.fail("dedup", "expected true or false");
    o.dedup = d.get<bool>();
  }
  f.no_unknown_keys();
  return o;
}

nlohmann::json to_json(const AlltoallOptions& o) {
  return {{"virtual_levels", o.virtual_levels},
          {"dimension", o.dimension},
          {"dedup", o.dedup},
          {"select", o.select_by_flow ? "flow" : "model"},
          {"swap_every", o.swap.every},
          {"swap_window", o.swap.window},
          {"swap_horizon_steps", o.swap.horizon_steps},
          {"swap_max", o.swap.max_swaps},
          {"swap_gamma", o.swap.gamma}};
}

void AlltoallPolicy::init(const PolicyContext& ctx) {
  h_ = make_hierarchy(ctx.hw.topology, opt_.virtual_levels, "policy hiermoe: virtual_levels");
  if (opt_.dimension > h_.dimensions())
    throw InputError("policy hiermoe: dimension " + std::to_string(opt_.dimension) + " but the hierarchy has D = " +
                     std::to_string(h_.dimensions()) + " (more levels: virtual_levels)");
  const int E = ctx.model.experts, G = h_.nodes();
  if (E % G != 0 && G % E != 0)
    throw InputError("policy hiermoe: " + std::to_string(E) + " experts and " + std::to_string(G) +
                     " nodes: one must divide the other");
  costs_ = fitted_costs(ctx.hw, h_);
  // A training step's swap moves each expert with its optimizer state (moments, and the master
  // weights when the weights are narrower), and saves the all-to-all of both passes.
  const bool train = ctx.cfg.shape.kind == StepKind::kTrain;
  moved_bytes_ = expert_move_bytes(ctx.model, train);
  online_ = OnlineSwap(opt_.swap, h_, costs_, ctx.shares, ctx.trace.top_k(), ctx.model.token_bytes(), moved_bytes_,
                       ctx.hw, train ? 2 : 1);
  dup_sum_.assign(h_.levels.size(), 0.0);
  d_counts_.assign(static_cast<size_t>(ctx.model.moe_layers),
                   std::vector<int>(static_cast<size_t>(h_.dimensions()), 0));
  ready_ = true;
}

void AlltoallPolicy::on_step_start(PolicyContext& ctx) {
  if (!ready_) init(ctx);
  online_.start_step(ctx.step);
}

void AlltoallPolicy::before_plan(PolicyContext& ctx, LayerInputs& in) {
  const int ml = ctx.moe_layer();
  if (ml < 0) return;
  if (!ready_) init(ctx);
  const RoutingTrace& tr = ctx.trace;
  // With fewer experts than nodes every expert spans G / E nodes: count it as that many sub-experts,
  // all chosen by each token that chooses it. Counted in slots (hierarchical rank order).
  const int span = std::max(1, h_.nodes() / ctx.model.experts);
  const std::vector<int>& slot = online_.slots(ml);
  Routing r{ctx.model.experts * span, tr.top_k() * span, {}};
  std::vector<uint16_t> chosen;
  const int layer = ml % tr.layers();
  for (int i = 0; i < ctx.step_tokens(); ++i) {
    const uint16_t* ex = tr.experts_of(layer, (ctx.first_token + static_cast<size_t>(i)) % tr.tokens());
    chosen.insert(chosen.end(), ex, ex + tr.top_k());
    for (int k = 0; k < tr.top_k(); ++k)
      for (int j = 0; j < span; ++j)
        r.ids.push_back(static_cast<uint16_t>(slot[static_cast<size_t>(ex[k] * span + j)]));
  }
  online_.observe(ml, chosen);
  if (online_.moved(ml)) in.rows = online_.rows(ml);
  for (size_t i = 0; i < h_.levels.size(); ++i) dup_sum_[i] += duplication_rate(r, h_.levels[i].groups);
  node_dup_sum_ += duplication_rate(r, h_.nodes());
  ++layers_seen_;
  int d = opt_.dimension;
  if (d == 0)
    d = opt_.select_by_flow ? fastest_on_flow(ctx, in) : optimal_dimension(h_, costs_, r, ctx.model.token_bytes());
  ++d_counts_[static_cast<size_t>(ml)][static_cast<size_t>(d - 1)];
  if (d > 1 || !opt_.dedup) {  // d = 1 without deduplication: Megatron's flat all-to-all
    if (in.planner != &direct_dispatch())
      throw InputError(
          "policy hiermoe: the hierarchical all-to-all cannot combine with the dispatch of " +
          (in.planner_from.empty() ? std::string("the placement (its own planner)") : "policy " + in.planner_from));
    planner_.emplace(h_, d, opt_.dedup);
    in.planner = &*planner_;
    in.planner_from = "hiermoe";
  }
}

void AlltoallPolicy::before_layer(PolicyContext& ctx, LayerSchedule& s) {
  // The step's swaps move in the background from its first layer on; the run drains them at the
  // step's end and the layers route by the new positions from the next step. A training step moves
  // them after its optimizer instead (before_optimizer).
  if (ctx.layer != 0 || online_.copies().empty() || ctx.cfg.shape.kind == StepKind::kTrain) return;
  move_copies(s, s.phase("migration", PhaseFamily::kOther, /*stream=*/1), {});
}

void AlltoallPolicy::before_optimizer(PolicyContext&, LayerSchedule& s, const std::vector<OpId>& adam) {
  // Each copy leaves once its source has updated the expert, and the step ends when it has landed (in
  // the foreground: the next step's forward needs the experts where the swap puts them).
  if (online_.copies().empty()) return;
  move_copies(s, s.phase("migration", PhaseFamily::kOther), adam);
}

void AlltoallPolicy::move_copies(LayerSchedule& s, int ph, const std::vector<OpId>& adam) const {
  const double W = moved_bytes_;
  for (const OnlineSwap::Copy& c : online_.copies()) {
    // After both ends' updates (training): the destination's slot holds the expert it sends away
    // until then.
    DepList after;
    for (const int v : {c.from, c.to})
      if (static_cast<size_t>(v) < adam.size() && adam[static_cast<size_t>(v)] >= 0)
        after.push_back(adam[static_cast<size_t>(v)]);
    s.stream(ph, PhysicalNode(c.from), {PhysicalNode(c.to)}, W, std::min(W, 256.0 * 1024), after);
  }
}

int AlltoallPolicy::fastest_on_flow(const PolicyContext& ctx, const LayerInputs& in) const {
  int best = 1;
  double best_s = 0;
  for (int d = 1; d <= h_.dimensions(); ++d) {
    const HierarchicalDispatch hd(h_, d, opt_.dedup);
    const LayerPlan plan = plan_layer(ctx.model, ctx.shares, ctx.layer, ctx.trace, ctx.first_token, ctx.groups,
                                      ctx.cfg.shape.step(ctx.step), &hd, in.rows.empty() ? nullptr : &in.rows);
    flow::FlowExecutor ex(ctx.hw);
    ex.execute(std::make_shared<LayerSchedule>(build_moe_layer(ctx.model, plan, ctx.groups, layer_build(ctx.hw))));
    if (d == 1 || ex.now_s() < best_s) {
      best = d;
      best_s = ex.now_s();
    }
  }
  return best;
}

nlohmann::json AlltoallPolicy::stats() const {
  nlohmann::json levels = nlohmann::json::array(), d_star = nlohmann::json::array();
  for (size_t i = 0; i < h_.levels.size(); ++i)
    levels.push_back({{"name", h_.levels[i].name},
                      {"groups", h_.levels[i].groups},
                      {"duplication_rate", layers_seen_ ? dup_sum_[i] / layers_seen_ : 0.0},
                      {"alpha_s", costs_.inter[i].alpha_s},
                      {"beta_s_per_byte", costs_.inter[i].beta_s_per_byte},
                      {"intra_alpha_s", costs_.intra[i].alpha_s},
                      {"intra_beta_s_per_byte", costs_.intra[i].beta_s_per_byte}});
  for (const auto& counts : d_counts_)
    d_star.push_back(1 + std::max_element(counts.begin(), counts.end()) - counts.begin());
  nlohmann::json out = {{"options", to_json(opt_)},
                        {"flat", {{"alpha_s", costs_.flat.alpha_s}, {"beta_s_per_byte", costs_.flat.beta_s_per_byte}}},
                        {"levels", levels},
                        {"node_duplication_rate", layers_seen_ ? node_dup_sum_ / layers_seen_ : 0.0},
                        {"d_star_per_layer", d_star}};
  if (online_.enabled()) out["online_swap"] = online_.stats();
  return out;
}

void register_alltoall(Registry& r) {
  PolicyFactory f;
  f.name = "hiermoe";
  f.stats_at_top = true;  // its levels, duplication rates and d* also at the top of summary.json (issue 15)
  f.description = "HierMoE hierarchical all-to-all (Sec. III): d* per layer or a fixed d, with or without token dedup";
  f.options = {{"virtual_levels", "0", "recursive 2x2 quadrant levels inside the finest real group"},
               {"dimension", "0", "d of every MoE layer (1 = flat); 0 = d* per layer from the batch's routing (Eq. 6)"},
               {"dedup", "true",
                "one copy per destination group (false: one per expert at every stage: the 2DH baseline at d = 2, "
                "Megatron-LM's flat all-to-all at d = 1; d* by Eq. 6 still costs d = 1 as deduplicated)"},
               {"select", "model",
                "d*: 'model' (Eq. 6 on the fitted costs, the paper) or 'flow' (replay the layer at "
                "every d on the flow model and keep the fastest)"},
               {"swap_every", "0", "online HierD-ES every N steps (0 = off); whole experts only"},
               {"swap_window", "0", "steps of routing a swap round looks at (0 = swap_every)"},
               {"swap_horizon_steps", "64",
                "a swap is taken only if its predicted saving over this many steps exceeds its migration time"},
               {"swap_max", "2", "swaps per MoE layer per round"},
               {"swap_gamma", "10", "smooth-max exponent of Eq. 11 for the online swaps"}};
  f.create = [](const nlohmann::json& o, const std::string& where) {
    return std::make_unique<AlltoallPolicy>(alltoall_options(o, where));
  };
  f.resolve = [](const nlohmann::json& o, const std::string& where) { return to_json(alltoall_options(o, where)); };
  r.add(std::move(f));
}

}  // namespace nmpsim::methods::hiermoe
