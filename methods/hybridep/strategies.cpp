// HybridEP's strategy and its entry in the registry: "hybridep" places experts by hierarchical rank
// (EP), sets the expert domain sizes per level (given, or for resident mode chosen offline by
// enumeration: 2 Lat_A2A + the expert time of the copies on sampled profile batches, both passes in
// training, within the node's memory), writes the pair counts of Algorithm 1 into the placement's stats and carries the
// runtime policy "hybridep" that executes the domains.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/strategy.h"
#include "nmpsim/methods/common/level_fit.h"
#include "nmpsim/methods/hybridep/policy.h"
#include "nmpsim/methods/hybridep/shadow.h"
#include "nmpsim/methods/hybridep/stream_model.h"

namespace nmpsim::methods::hybridep {

using namespace nmpsim::mapping;          // the base layer this method builds on
using namespace nmpsim::methods::common;  // the pieces methods share

namespace {

/// Memory per byte of one layer's copy of the box's other members' pieces: resident copies stay for
/// every MoE layer, and in training carry their gradients and optimizer state (each holder updates its
/// copies, docs/MODEL.md "HybridEP: training"); streamed copies are two layers in flight, or every
/// layer's until its backward in training.
double copy_bytes_per_weight_byte(const StrategyContext& ctx) {
  const bool stream = ctx.options.at("mode") == "stream";
  const bool train = ctx.shape.kind == StepKind::kTrain;
  const double L = ctx.model.moe_layers;
  // prefetch=step gathers every layer's copies at the step's start: all L layers at once.
  if (stream) return train || ctx.options.value("prefetch", "layer") == "step" ? L : 2.0;
  return train ? L * (2.0 + optimizer_state_bytes(ctx.model) / ctx.model.weight_bytes) : L;
}

class HybridStrategy : public PlacementStrategy {
 public:
  std::string name() const override { return "hybridep"; }
  std::string description() const override {
    return "HybridEP: EP by hierarchical rank with expert domains per level (Sec. IV): experts copied inside a "
           "domain, tokens by same-offset all-to-all across domains; resident copies or per-layer all-gather";
  }
  std::vector<OptionDoc> options() const override {
    std::vector<OptionDoc> out = {
        {"sed", "auto",
         "expert domain size per level, coarse to fine, e.g. 1,4 (nmpsim hw --report hierarchy lists the levels); "
         "auto: "
         "resident chooses offline, stream per layer at run time"},
        {"samples", "4", "resident auto: profile batches the candidates are rated on"}};
    for (const OptionDoc& d : policy_option_docs())
      if (d.name != "sed" && d.name != "max_box") out.push_back(d);
    return out;
  }
  nlohmann::json resolve_options(const nlohmann::json& given, const std::string& where,
                                 const StrategyContext&) const override {
    // The policy's options, checked by the policy's parser (options.cpp), and the strategy's own.
    nlohmann::json policy = given.is_object() ? given : nlohmann::json::object();
    const JsonFields f(given, where, "");
    const long long samples = f.integer("samples", 1, 64, 4);
    policy.erase("samples");
    if (policy.contains("max_box")) f.fail("max_box", "set by the strategy (the largest box that fits)");
    if (policy.contains("sed") && policy["sed"].is_number()) policy["sed"] = policy["sed"].dump();
    const HybridOptions p = hybrid_options(policy, where);
    nlohmann::json o = to_json(p);
    o.erase("max_box");
    o["sed"] = p.sed.empty() ? std::string("auto") : sed_text(p.sed);
    o["samples"] = samples;
    return o;
  }
  Placement build(const StrategyContext& ctx) const override;
  std::vector<FlagAlias> flag_aliases() const override {
    return {{"sed", "sed", "hybridep: expert domain size per level, coarse to fine, e.g. 1,4"}};
  }
  std::vector<std::string> summary(const Placement& p) const override {
    std::vector<std::string> out;
    if (!p.stats.contains("hybridep")) return out;
    const nlohmann::json& s = p.stats.at("hybridep");
    if (s.at("levels").empty())
      out.push_back(name() + ": " + s.at("mode").get<std::string>() + ", domain sizes chosen per layer at run time");
    int l = 0;
    for (const auto& lv : s.at("levels")) {
      char line[200];
      std::snprintf(line, sizeof line,
                    "%s: level %d: %d workers, domain size %d: %lld all-to-all pairs, %lld all-gather pairs, p = %.3f "
                    "(table form %.3f)",
                    name().c_str(), l++, lv.at("sf").get<int>(), lv.at("sed").get<int>(),
                    lv.at("a2a_pairs").get<long long>(), lv.at("ag_pairs").get<long long>(), lv.at("p").get<double>(),
                    lv.at("p_table_form").get<double>());
      out.push_back(line);
    }
    if (s.contains("memory_bytes_per_node")) {
      char line[120];
      std::snprintf(line, sizeof line, "%s: %s, %.2f GiB per node", name().c_str(),
                    s.at("mode").get<std::string>().c_str(),
                    s.at("memory_bytes_per_node").get<double>() / double(1ULL << 30));
      out.push_back(line);
    }
    return out;
  }

 private:
  std::vector<int> choose_resident(const StrategyContext& ctx, const Hierarchy& h, const Levels& lv, const Placement& p,
                                   double base_bytes, double native_bytes, nlohmann::json& candidates) const;
};

Placement HybridStrategy::build(const StrategyContext& ctx) const {
  const int vlevels = static_cast<int>(ctx.options.at("virtual_levels").get<long long>());
  const Hierarchy h = make_hierarchy(ctx.hw.topology, vlevels, ctx.where + ": virtual_levels");
  const Levels lv = levels_of(h);
  Placement p = ep_by_rank(ctx.model, h, name(), ctx.where);
  nlohmann::json policy = ctx.options;
  policy.erase("samples");
  HybridOptions o = hybrid_options(policy, ctx.where);
  o.sed.clear();  // set below: given, or chosen offline (resident auto)
  const double native = ctx.model.expert_bytes() * std::max(1.0, double(ctx.model.experts) / h.nodes()) /
                        std::max(1.0, double(h.nodes()) / ctx.model.experts);
  // SR's shared expert: one per MoE layer on every node, in training with its gradient and optimizer state.
  const double shared = o.sr_ratio > 0 ? ctx.model.moe_layers * ctx.model.expert_bytes() *
                                             (ctx.shape.kind == StepKind::kTrain
                                                  ? 2.0 + optimizer_state_bytes(ctx.model) / ctx.model.weight_bytes
                                                  : 1.0)
                                       : 0.0;
  const double base = memory_demand(p, ctx.model, ctx.attn_tp, ctx.shape).max_bytes + shared;
  const double copy_bytes = copy_bytes_per_weight_byte(ctx);
  // Copies of the box's other members: every MoE layer (resident), or two layers in flight (stream;
  // a training step keeps every layer's for its backward).
  const auto memory = [&](int box) { return base + (box - 1) * native * copy_bytes; };
  nlohmann::json candidates = nlohmann::json::array();
  const std::string given = ctx.options.at("sed").get<std::string>();
  if (given != "auto") {
    o.sed = parse_sed(given, ctx.where + ": sed");
    check_sed(lv, o.sed, ctx.where + ": sed");
  } else if (!o.stream) {
    o.sed = choose_resident(ctx, h, lv, p, base, native, candidates);
  } else {
    // Stream auto chooses per layer at run time, among the boxes whose copies fit.
    for (const std::vector<int>& sed : all_seds(lv))
      if (memory(box_size(sed)) <= ctx.memory_capacity_bytes) o.max_box = std::max(o.max_box, box_size(sed));
    if (o.max_box == 0) throw InputError(ctx.where + ": no domain sizes fit in memory, not even EP (1 per level)");
  }
  nlohmann::json levels = nlohmann::json::array();
  if (!o.sed.empty()) {
    const double need = memory(box_size(o.sed));
    if (need > ctx.memory_capacity_bytes) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s: domains %s need %.2f GiB per node, which has %.2f GiB", ctx.where.c_str(),
                    sed_text(o.sed).c_str(), need / double(1ULL << 30), ctx.memory_capacity_bytes / double(1ULL << 30));
      throw InputError(buf);
    }
    const std::vector<LevelPairs> pairs = pair_counts(lv, o.sed);
    for (size_t l = 0; l < pairs.size(); ++l)
      levels.push_back({{"sf", lv.sf[l]},
                        {"sed", o.sed[l]},
                        {"a2a_pairs", pairs[l].a2a_pairs},
                        {"ag_pairs", pairs[l].ag_pairs},
                        {"p", lv.sf[l] > 1 ? p_of_domain(lv.sf[l], o.sed[l]) : 1.0},
                        {"p_table_form", p_table_form(lv.sf[l], o.sed[l])}});
    p.stats["hybridep"]["memory_bytes_per_node"] = need;
  }
  p.stats["hybridep"]["levels"] = levels;
  p.stats["hybridep"]["mode"] = o.stream ? "stream" : "resident";
  if (!candidates.empty()) p.stats["hybridep"]["candidates"] = candidates;
  p.runtime = nlohmann::json::array({{{"name", "hybridep"}, {"options", to_json(o)}}});
  return p;
}

std::vector<int> HybridStrategy::choose_resident(const StrategyContext& ctx, const Hierarchy& h, const Levels& lv,
                                                 const Placement& p, double base_bytes, double native,
                                                 nlohmann::json& candidates) const {
  const common::HierarchyCosts c = common::fitted_costs(ctx.hw, h);
  const Groups groups = groups_for(p, ctx.hw.topology, ctx.attn_tp);
  const auto shares = physical_shares(p);
  const int samples = static_cast<int>(ctx.options.at("samples").get<long long>());
  const int layers = std::min(ctx.model.moe_layers, 8);  // evenly spaced MoE layers
  const bool train = ctx.shape.kind == StepKind::kTrain;
  std::vector<int> best;
  double best_s = 0;
  for (const std::vector<int>& sed : all_seds(lv)) {
    const int box = box_size(sed);
    const double need = base_bytes + (box - 1) * native * copy_bytes_per_weight_byte(ctx);
    nlohmann::json row = {{"sed", sed_text(sed)}, {"memory_gib", need / double(1ULL << 30)}};
    if (need > ctx.memory_capacity_bytes) {
      row["fits"] = false;
      candidates.push_back(row);
      continue;
    }
    const DomainLayout d = make_layout(h, lv, sed);
    // Training: each member all-reduces the box's gradients (2 (box - 1) / box of box x native over
    // the box's ring) and updates the copies (optimizer_dram_bytes per parameter): per layer.
    double copies_s = 0;
    if (train && box > 1) {
      double ring = 0;
      for (const std::vector<int>& b : d.box_of) {
        const double bw = box_ring_bytes_per_s(ctx.hw.topology, b);
        ring = ring > 0 ? std::min(ring, bw) : bw;
      }
      copies_s = 2.0 * (box - 1) * native / ring + (box - 1) * native / ctx.model.weight_bytes *
                                                       optimizer_dram_bytes(ctx.model) / ctx.hw.memory_bytes_per_s;
    }
    double total = copies_s * layers * samples;
    for (int k = 0; k < layers; ++k)
      for (int s = 0; s < samples; ++s) {
        const int layer = ctx.model.dense_layers + k * ctx.model.moe_layers / layers;
        const size_t first =
            static_cast<size_t>(s) * static_cast<size_t>(train ? ctx.shape.step(0).tokens() : ctx.batch);
        const ServedDispatch served(d.serve);
        const LayerPlan plan =
            plan_layer(ctx.model, shares, layer, ctx.profile, first, groups,
                       train ? ctx.shape.step(0) : RunShape{ctx.batch, ctx.context}.step(0), &served);
        const WorkerLoads w = loads_of(plan);
        double a2a = 0, expert = 0;
        for (int v = 0; v < h.nodes(); ++v) {
          // The fit's n is the volume of all G workers (level_fit.h).
          if (w.a2a_bytes[static_cast<size_t>(v)] > 0)
            a2a = std::max(a2a, c.flat.seconds(w.a2a_bytes[static_cast<size_t>(v)] * h.nodes()));
          expert = std::max(expert, std::max(w.expert_flops[static_cast<size_t>(v)] / ctx.hw.peak_flops,
                                             w.expert_bytes[static_cast<size_t>(v)] / ctx.hw.memory_bytes_per_s));
        }
        // Dispatch and combine, and the copies' expert time; a training step runs both again in the
        // backward (transposed, and twice the FLOPs) and all-reduces the copies' gradients in the
        // background.
        total += train ? 4 * a2a + 3 * expert : 2 * a2a + expert;
      }
    const double mean = total / (layers * samples);
    row["fits"] = true;
    row["predicted_us_per_layer"] = mean * 1e6;
    candidates.push_back(row);
    if (best.empty() || mean < best_s * (1 - 1e-12)) {
      best = sed;
      best_s = mean;
    }
  }
  if (best.empty()) throw InputError(ctx.where + ": no domain sizes fit in memory, not even EP (1 per level)");
  ctx.say(name() + ": resident domains " + sed_text(best) + " of " + std::to_string(candidates.size()) + " candidates");
  return best;
}

}  // namespace

void register_methods(Registry& r) {
  register_policy(r);
  register_shadow_policy(r);
  r.add(std::make_unique<HybridStrategy>());
}

}  // namespace nmpsim::methods::hybridep
