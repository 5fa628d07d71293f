// HierMoE's strategies and its entry in the registry (called by the generated methods::register_all):
// "hiermoe" (deduplicated hierarchical all-to-all, d* per layer), "hiermoe-swap" (the same after
// HierD-ES expert swaps from the profile), "hiermoe-2dh" (two levels without deduplication),
// "hiermoe-megatron" (the flat all-to-all without deduplication, Megatron-LM's). All place
// expert blocks in hierarchical rank order and carry the runtime policy "hiermoe".
#include <cstdio>
#include <memory>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/strategy.h"
#include "nmpsim/methods/common/level_fit.h"
#include "nmpsim/methods/hiermoe/alltoall_policy.h"
#include "nmpsim/methods/hiermoe/swap.h"

namespace nmpsim::methods::hiermoe {

using namespace nmpsim::mapping;          // the base layer this method builds on
using namespace nmpsim::methods::common;  // the pieces methods share

namespace {

enum class Kind { kDedup, kSwap, k2dh, kMegatron };

/// EP with expert blocks in hierarchical rank order: experts [r E / G, (r + 1) E / G) on the node of
/// rank r; with fewer experts than nodes, expert e split evenly over ranks [e G / E, (e + 1) G / E).
/// kSwap first permutes each layer's experts over the slots by HierD-ES.
class HierStrategy : public PlacementStrategy {
 public:
  explicit HierStrategy(Kind k) : kind_(k) {}
  std::string name() const override {
    return kind_ == Kind::kDedup  ? "hiermoe"
           : kind_ == Kind::kSwap ? "hiermoe-swap"
           : kind_ == Kind::k2dh  ? "hiermoe-2dh"
                                  : "hiermoe-megatron";
  }
  std::string description() const override {
    if (kind_ == Kind::kMegatron)
      return "Megatron-LM baseline: EP by hierarchical rank, flat all-to-all sending a token once per expert it "
             "chose (no per-node deduplication)";
    if (kind_ == Kind::k2dh)
      return "2DH baseline: EP by hierarchical rank, two-level hierarchical all-to-all without deduplication";
    return std::string("HierMoE: EP by hierarchical rank") +
           (kind_ == Kind::kSwap ? " after HierD-ES expert swaps from the profile (Sec. IV)" : "") +
           ", token-deduplicated hierarchical all-to-all with the optimal dimension d* per layer (Sec. III)";
  }
  bool expensive() const override { return kind_ == Kind::kSwap; }
  std::vector<OptionDoc> options() const override {
    std::vector<OptionDoc> o = {
        {"virtual_levels", "auto",
         "recursive 2x2 quadrant levels inside the finest real group (nmpsim hw --report hierarchy); auto: 1 when the "
         "hardware has no real level (one wafer or one NMP chip), else 0"},
        {"select", "model",
         "d* by 'model' (Eq. 6 on the fitted costs) or 'flow' (the fastest d replayed on the flow model)"}};
    if (kind_ == Kind::kDedup || kind_ == Kind::kSwap) {
      o.push_back({"swap_every", "0",
                   "online HierD-ES at run time every N steps on the routing seen (0 = off; policy hiermoe's "
                   "swap_* options: swap_window, swap_horizon_steps, swap_max, swap_gamma)"});
      o.push_back({"swap_horizon_steps", "64", "online swaps: must pay their migration back within this many steps"});
      o.push_back({"swap_max", "2", "online swaps: at most this many swaps per MoE layer and round"});
    }
    if (kind_ == Kind::kDedup) {
      o.push_back({"dimension", "0",
                   "d of every MoE layer (1 = flat, deduplicated per node; 2 = the paper's HD2-MoE); 0 = d* per layer "
                   "by select. Online swaps still predict with Eq. 6's d"});
      o.push_back({"dedup", "true",
                   "false: one copy per (token, expert) through the stages, the paper's H<d>-MoE of Fig. 13 (with "
                   "dimension=d)"});
    }
    if (kind_ == Kind::kSwap) {
      o.push_back({"swaps", "8", "at most this many expert swaps per layer (each must lower the predicted time)"});
      o.push_back({"gamma", "10", "smooth-max exponent of Eq. 11"});
      o.push_back({"tokens", "1024", "profile tokens per layer the swaps are chosen on"});
    }
    return o;
  }
  nlohmann::json resolve_options(const nlohmann::json& given, const std::string& where,
                                 const StrategyContext&) const override {
    const JsonFields f(given, where, "");
    nlohmann::json o = {{"virtual_levels", "auto"}};
    if (f.has("virtual_levels") && !(f.raw("virtual_levels").is_string() && f.string("virtual_levels") == "auto"))
      o["virtual_levels"] = f.integer("virtual_levels", 0, 8);
    o["select"] = f.string("select", "model");
    if (o["select"] != "model" && o["select"] != "flow") f.fail("select", "expected model or flow");
    if (kind_ == Kind::kDedup || kind_ == Kind::kSwap) {
      o["swap_every"] = f.integer("swap_every", 0, 1 << 20, 0);
      o["swap_horizon_steps"] = f.number_in("swap_horizon_steps", 0, 1e9, 64);
      o["swap_max"] = f.integer("swap_max", 0, 1 << 16, 2);
    }
    if (kind_ == Kind::kDedup) {
      o["dimension"] = f.integer("dimension", 0, 16, 0);
      o["dedup"] = f.boolean("dedup", true);
    }
    if (kind_ == Kind::kSwap) {
      o["swaps"] = f.integer("swaps", 0, 1 << 16, 8);
      o["gamma"] = f.number_in("gamma", 1, 1000, 10);
      o["tokens"] = f.integer("tokens", 1, 1 << 24, 1024);
    }
    f.no_unknown_keys();
    return o;
  }
  Placement build(const StrategyContext& ctx) const override {
    const Topology& t = ctx.hw.topology;
    int vlevels = 0;
    const nlohmann::json& v = ctx.options.at("virtual_levels");
    if (v.is_number_integer()) {
      vlevels = v.get<int>();
    } else if (make_hierarchy(t, 0).levels.empty() && t.width % 2 == 0 && t.height % 2 == 0) {
      vlevels = 1;  // auto: one quadrant level where the hardware has none
    }
    const Hierarchy h = make_hierarchy(t, vlevels, ctx.where + ": virtual_levels");
    const int dim = kind_ == Kind::k2dh ? 2 : kind_ == Kind::kMegatron ? 1 : ctx.options.value("dimension", 0);
    if (dim > h.dimensions())
      throw InputError(ctx.where + ": " + name() + " needs a hierarchy of " + std::to_string(dim) +
                       " dimensions; this one has " + std::to_string(h.dimensions()) + " (set virtual_levels)");
    Placement p = ep_by_rank(ctx.model, h, name(), ctx.where);
    if (kind_ == Kind::kSwap) {
      const std::vector<std::vector<int>> slots = swapped_slots(ctx, h, p);
      const nlohmann::json stats = p.stats;
      p = ep_by_rank(ctx.model, h, name(), ctx.where, &slots);
      p.stats = stats;
    }
    AlltoallOptions o;
    o.virtual_levels = vlevels;
    o.dimension = dim;
    o.dedup = kind_ != Kind::k2dh && kind_ != Kind::kMegatron && ctx.options.value("dedup", true);
    o.select_by_flow = ctx.options.value("select", "model") == "flow";
    o.swap.every = ctx.options.value("swap_every", 0);
    o.swap.horizon_steps = ctx.options.value("swap_horizon_steps", 64.0);
    o.swap.max_swaps = ctx.options.value("swap_max", 2);
    p.runtime = nlohmann::json::array({{{"name", "hiermoe"}, {"options", to_json(o)}}});
    return p;
  }
  std::vector<std::string> summary(const Placement& p) const override {
    if (!p.stats.contains("swaps_per_layer")) return {};
    int total = 0;
    for (const auto& n : p.stats.at("swaps_per_layer")) total += n.get<int>();
    char line[160];
    std::snprintf(line, sizeof line, "%s: %d expert swaps over %zu layers (HierD-ES, smooth-max)", name().c_str(),
                  total, p.stats.at("swaps_per_layer").size());
    return {line};
  }

 private:
  static std::vector<std::vector<int>> identity(const StrategyContext& ctx) {
    std::vector<int> id(static_cast<size_t>(ctx.model.experts));
    for (int e = 0; e < ctx.model.experts; ++e) id[static_cast<size_t>(e)] = e;
    return std::vector<std::vector<int>>(static_cast<size_t>(ctx.model.moe_layers), id);
  }
  /// Per layer, each expert's slot after HierD-ES on the profile's first `tokens` tokens.
  std::vector<std::vector<int>> swapped_slots(const StrategyContext& ctx, const Hierarchy& h, Placement& p) const {
    std::vector<std::vector<int>> slots = identity(ctx);
    const HierarchyCosts costs = fitted_costs(ctx.hw, h);
    const RoutingTrace& tr = ctx.profile;
    const size_t tokens = std::min(tr.tokens(), static_cast<size_t>(ctx.options.at("tokens").get<long long>()));
    nlohmann::json swaps = nlohmann::json::array();
    for (int l = 0; l < ctx.model.moe_layers; ++l) {
      Routing r{ctx.model.experts, tr.top_k(), {}};
      for (size_t i = 0; i < tokens; ++i) {
        const uint16_t* ex = tr.experts_of(l % tr.layers(), i);
        r.ids.insert(r.ids.end(), ex, ex + tr.top_k());
      }
      swaps.push_back(expert_swap(h, costs, r, ctx.model.token_bytes(), ctx.options.at("gamma").get<double>(),
                                  static_cast<int>(ctx.options.at("swaps").get<long long>()),
                                  slots[static_cast<size_t>(l)]));
      ctx.say(name() + ": layer " + std::to_string(l + 1) + "/" + std::to_string(ctx.model.moe_layers) + ", " +
              std::to_string(swaps.back().get<int>()) + " swaps");
    }
    p.stats["swaps_per_layer"] = swaps;
    return slots;
  }

  Kind kind_;
};

}  // namespace

void register_methods(Registry& r) {
  register_alltoall(r);
  r.add(std::make_unique<HierStrategy>(Kind::kDedup));
  r.add(std::make_unique<HierStrategy>(Kind::kSwap));
  r.add(std::make_unique<HierStrategy>(Kind::k2dh));
  r.add(std::make_unique<HierStrategy>(Kind::kMegatron));
}

}  // namespace nmpsim::methods::hiermoe
