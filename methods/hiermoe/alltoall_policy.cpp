#include "methods/hiermoe/alltoall_policy.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "mapping/flow_executor.h"
#include "mapping/json_fields.h"
#include "mapping/moe_layer.h"
#include "methods/hiermoe/level_fit.h"

namespace nmpsim::methods::hiermoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

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
          {"select", o.select_by_flow ? "flow" : "model"}};
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
  dup_sum_.assign(h_.levels.size(), 0.0);
  d_counts_.assign(static_cast<size_t>(ctx.model.moe_layers),
                   std::vector<int>(static_cast<size_t>(h_.dimensions()), 0));
  ready_ = true;
}

void AlltoallPolicy::before_plan(PolicyContext& ctx, LayerInputs& in) {
  const int ml = ctx.moe_layer();
  if (ml < 0) return;
  if (!ready_) init(ctx);
  const RoutingTrace& tr = ctx.trace;
  // With fewer experts than nodes every expert spans G / E nodes: count it as that many sub-experts,
  // all chosen by each token that chooses it.
  const int span = std::max(1, h_.nodes() / ctx.model.experts);
  Routing r{ctx.model.experts * span, tr.top_k() * span, {}};
  const int layer = ml % tr.layers();
  for (int i = 0; i < ctx.cfg.shape.batch; ++i) {
    const uint16_t* ex = tr.experts_of(layer, (ctx.first_token + static_cast<size_t>(i)) % tr.tokens());
    for (int k = 0; k < tr.top_k(); ++k)
      for (int j = 0; j < span; ++j) r.ids.push_back(static_cast<uint16_t>(ex[k] * span + j));
  }
  for (size_t i = 0; i < h_.levels.size(); ++i) dup_sum_[i] += duplication_rate(r, h_.levels[i].groups);
  ++layers_seen_;
  int d = opt_.dimension;
  if (d == 0)
    d = opt_.select_by_flow ? fastest_on_flow(ctx) : optimal_dimension(h_, costs_, r, ctx.model.token_bytes());
  ++d_counts_[static_cast<size_t>(ml)][static_cast<size_t>(d - 1)];
  if (d > 1) in.hier = HierDispatch{&h_, d, opt_.dedup};
}

int AlltoallPolicy::fastest_on_flow(const PolicyContext& ctx) const {
  int best = 1;
  double best_s = 0;
  for (int d = 1; d <= h_.dimensions(); ++d) {
    const HierDispatch hd{&h_, d, opt_.dedup};
    const LayerPlan plan = plan_layer(ctx.model, ctx.shares, ctx.layer, ctx.trace, ctx.first_token, ctx.groups,
                                      ctx.cfg.shape, nullptr, &hd);
    FlowExecutor ex(ctx.hw);
    ex.execute(std::make_shared<LayerSchedule>(build_moe_layer(ctx.model, plan, ctx.groups, ctx.hw.element_bytes)));
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
  return {{"options", to_json(opt_)},
          {"flat", {{"alpha_s", costs_.flat.alpha_s}, {"beta_s_per_byte", costs_.flat.beta_s_per_byte}}},
          {"levels", levels},
          {"d_star_per_layer", d_star}};
}

void register_alltoall(Registry& r) {
  PolicyFactory f;
  f.name = "hiermoe";
  f.description = "HierMoE hierarchical all-to-all (Sec. III): d* per layer or a fixed d, with or without token dedup";
  f.options = {{"virtual_levels", "0", "recursive 2x2 quadrant levels inside the finest real group"},
               {"dimension", "0", "d of every MoE layer (1 = flat); 0 = d* per layer from the batch's routing (Eq. 6)"},
               {"dedup", "true", "one copy per destination group (false: one per expert, the 2DH baseline)"},
               {"select", "model",
                "d*: 'model' (Eq. 6 on the fitted costs, the paper) or 'flow' (replay the layer at "
                "every d on the flow model and keep the fastest)"}};
  f.create = [](const nlohmann::json& o, const std::string& where) {
    return std::make_unique<AlltoallPolicy>(alltoall_options(o, where));
  };
  f.resolve = [](const nlohmann::json& o, const std::string& where) { return to_json(alltoall_options(o, where)); };
  r.add(std::move(f));
}

}  // namespace nmpsim::methods::hiermoe
