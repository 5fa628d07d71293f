#include "nmpsim/methods/hybridep/policy.h"

#include <algorithm>
#include <map>
#include <memory>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/moe_layer.h"
#include "nmpsim/mapping/train_step.h"
#include "nmpsim/methods/common/level_fit.h"
#include "nmpsim/methods/hybridep/stream_model.h"

namespace nmpsim::methods::hybridep {

using namespace nmpsim::mapping;          // the base layer this method builds on
using namespace nmpsim::methods::common;  // the pieces methods share

HybridOptions hybrid_options(const nlohmann::json& j, const std::string& where) {
  const JsonFields f(j, where, "");
  HybridOptions o;
  if (f.has("mode")) {
    const std::string m = f.string("mode");
    if (m != "resident" && m != "stream") f.fail("mode", "expected resident or stream, got '" + m + "'");
    o.stream = m == "stream";
  }
  if (f.has("sed")) {
    const nlohmann::json& s = f.raw("sed");
    if (s.is_string() && s.get<std::string>() != "auto") o.sed = parse_sed(s.get<std::string>(), where + ": sed");
    if (s.is_array())
      for (const auto& x : s) {
        if (!x.is_number_integer() || x.get<long long>() < 1 || x.get<long long>() > (1 << 20))
          f.fail("sed", "expected positive integers");
        o.sed.push_back(x.get<int>());
      }
    if (!s.is_string() && !s.is_array()) f.fail("sed", "expected \"auto\", \"2,4\" or a list of integers");
  }
  o.virtual_levels = static_cast<int>(f.integer("virtual_levels", 0, 8, o.virtual_levels));
  o.sr_keep = f.number_in("sr_keep", 0, 1, o.sr_keep);
  if (f.has("model")) {
    const std::string m = f.string("model");
    if (m != "paper" && m != "inference") f.fail("model", "expected paper or inference, got '" + m + "'");
    o.paper_model = m == "paper";
  }
  o.max_box = static_cast<int>(f.integer("max_box", 0, 1 << 20, o.max_box));
  f.no_unknown_keys();
  if (!o.stream && o.sed.empty())
    f.fail("sed", "resident mode needs the domain sizes (the hybridep strategy chooses them)");
  return o;
}

nlohmann::json to_json(const HybridOptions& o) {
  return {{"mode", o.stream ? "stream" : "resident"},
          {"sed", o.sed.empty() ? nlohmann::json("auto") : nlohmann::json(o.sed)},
          {"virtual_levels", o.virtual_levels},
          {"sr_keep", o.sr_keep},
          {"model", o.paper_model ? "paper" : "inference"},
          {"max_box", o.max_box}};
}

void HybridPolicy::init(const PolicyContext& ctx) {
  h_ = make_hierarchy(ctx.hw.topology, opt_.virtual_levels, "policy hybridep: virtual_levels");
  lv_ = levels_of(h_);
  if (!opt_.sed.empty()) check_sed(lv_, opt_.sed, "policy hybridep: sed");
  const common::HierarchyCosts c = common::fitted_costs(ctx.hw, h_);
  alpha_s_ = c.flat.alpha_s;
  // The fit's n is the volume of all G workers (level_fit.h): one worker's bandwidth is 1 / (G beta).
  bytes_per_s_ = 1.0 / (c.flat.beta_s_per_byte * h_.nodes());
  weight_bytes_ = ctx.model.weight_bytes;
  topology_ = ctx.hw.topology;
  peak_flops_ = ctx.hw.peak_flops;
  memory_bytes_per_s_ = ctx.hw.memory_bytes_per_s;
  native_bytes_.assign(static_cast<size_t>(h_.nodes()), 0.0);
  if (!ctx.shares.empty())
    for (const auto& row : ctx.shares[0])
      for (size_t v = 0; v < row.size(); ++v) native_bytes_[v] += row[v] * ctx.model.expert_bytes();
  ready_ = true;
}

const DomainLayout& HybridPolicy::layout(const std::vector<int>& sed) {
  auto it = layouts_.find(sed);
  if (it == layouts_.end()) {
    it = layouts_.emplace(sed, make_layout(h_, lv_, sed)).first;
    ag_bytes_per_s_[sed] = ring_bytes_per_s(it->second);
  }
  return it->second;
}

std::vector<double> HybridPolicy::ring_bytes_per_s(const DomainLayout& d) const {
  // The all-gather is a ring over the box in node order: its slowest hop bounds every member's inflow.
  std::vector<double> out(static_cast<size_t>(h_.nodes()), 0.0);
  for (int v = 0; v < h_.nodes(); ++v)
    out[static_cast<size_t>(v)] = box_ring_bytes_per_s(topology_, d.box_of[static_cast<size_t>(v)]);
  return out;
}

double HybridPolicy::gathered_bytes(int node) const {
  const double b = native_bytes_[static_cast<size_t>(node)];
  // SR compression: the residual's kept elements as (value, 4-byte index) pairs.
  return opt_.sr_keep > 0 ? b * opt_.sr_keep * (weight_bytes_ + 4) / weight_bytes_ : b;
}

const DomainLayout& HybridPolicy::choose(const PolicyContext& ctx) {
  const DomainLayout* best = nullptr;
  double best_s = 0;
  const bool train = ctx.cfg.shape.kind == StepKind::kTrain;
  for (const std::vector<int>& sed : all_seds(lv_)) {
    if (opt_.max_box > 0 && box_size(sed) > opt_.max_box) continue;
    const DomainLayout& d = layout(sed);
    const std::vector<double>& ring = ag_bytes_per_s_.at(sed);
    const ServedDispatch served(d.serve);
    const LayerPlan plan = plan_layer(ctx.model, ctx.shares, ctx.layer, ctx.trace, ctx.first_token, ctx.groups,
                                      ctx.cfg.shape.step(ctx.step), &served);
    const WorkerLoads w = loads_of(plan);
    double worst = 0;
    for (int v = 0; v < h_.nodes(); ++v) {
      double ag = 0, rs = 0;  // the gather's bytes (SR applied) and the gradients' (uncompressed)
      for (size_t k = 1; k < d.box_of[static_cast<size_t>(v)].size(); ++k) {
        ag += gathered_bytes(d.box_of[static_cast<size_t>(v)][k]);
        rs += native_bytes_[static_cast<size_t>(d.box_of[static_cast<size_t>(v)][k])];
      }
      const double a2a = w.a2a_bytes[static_cast<size_t>(v)];
      // Eq. 8 per worker with its own loads: max(Lat_PE, Lat_AG) + 2 Lat_A2A; the all-gather runs at
      // its ring's link speed. Inference: plus the expert time of the copies the worker serves (Eq. 7
      // hides it behind communication, as training pipelines do; a decode step waits for it).
      const double ag_s = ag > 0 ? ag / ring[static_cast<size_t>(v)] : 0.0;
      const double a2a_s = a2a > 0 ? alpha_s_ + a2a / bytes_per_s_ : 0.0;
      const double expert_s = std::max(w.expert_flops[static_cast<size_t>(v)] / peak_flops_,
                                       w.expert_bytes[static_cast<size_t>(v)] / memory_bytes_per_s_);
      double t = std::max(pre_expert_s_, ag_s) + 2 * a2a_s;
      // Training, ours: the backward runs both all-to-alls again and twice the expert FLOPs, and the
      // copies' gradients go back over the box (the gather's bytes, uncompressed) beside the backward of the
      // layer's pre-expert part (twice the forward's). The paper's model leaves the backward out as a
      // constant (Sec. V), so its choice is the forward's.
      const double rs_s = rs / ring[static_cast<size_t>(v)];
      if (train && !opt_.paper_model) t += std::max(2 * pre_expert_s_, rs_s) + 2 * a2a_s + 2 * expert_s;
      if (!opt_.paper_model) t += expert_s;
      worst = std::max(worst, t);
      if (d.box == 1) data_sum_ += a2a / h_.nodes();
    }
    if (!best || worst < best_s * (1 - 1e-12)) {
      best = &d;
      best_s = worst;
    }
  }
  predicted_s_ += best_s;
  return *best;
}

void HybridPolicy::before_plan(PolicyContext& ctx, LayerInputs& in) {
  const int ml = ctx.moe_layer();
  if (ml < 0) return;
  if (!ready_) init(ctx);
  // Lat_PE: the previous layer's attention, all-reduce and gate, as measured.
  if (ctx.previous && ctx.result) {
    double pe = 0;
    for (size_t i = 0; i < ctx.result->phases.size(); ++i) {
      const PhaseInfo& p = ctx.result->phases[i];
      if (p.stream == kForeground &&
          (p.family == PhaseFamily::kAttention || p.family == PhaseFamily::kAllReduce || p.name == phase_names::kGate))
        pe += ctx.previous->phase(i);
    }
    pre_expert_s_ = pe;
  }
  pre_expert_sum_s_ += pre_expert_s_;
  current_ = opt_.stream && opt_.sed.empty() ? &choose(ctx) : &layout(opt_.sed);
  if (by_layer_.size() <= static_cast<size_t>(ml)) by_layer_.resize(static_cast<size_t>(ml) + 1, nullptr);
  by_layer_[static_cast<size_t>(ml)] = current_;
  ++chosen_[current_->sed];
  ++layers_seen_;
  if (in.planner != &direct_dispatch())
    throw InputError(
        "policy hybridep: expert domains cannot combine with the dispatch of " +
        (in.planner_from.empty() ? std::string("the placement (its own planner)") : "policy " + in.planner_from));
  planner_.emplace(current_->serve);
  in.planner = &*planner_;
  in.planner_from = "hybridep";
}

void HybridPolicy::before_layer(PolicyContext& ctx, LayerSchedule& s) {
  if (!opt_.stream || !current_ || current_->box == 1 || ctx.moe_layer() < 0) return;
  // Every node multicasts its pieces around its box (a chain in box order from the next member),
  // from the layer's start; a node's experts wait for every chain of its box.
  const int ph = s.phase("expert_allgather", PhaseFamily::kOther, /*stream=*/1);
  std::map<int, DepList> chains_of_box;  // by the box's first member
  for (int u = 0; u < h_.nodes(); ++u) {
    const double bytes = gathered_bytes(u);
    const std::vector<int>& box = current_->box_of[static_cast<size_t>(u)];
    const int key = *std::min_element(box.begin(), box.end());
    if (bytes <= 0) continue;
    std::vector<int> sorted = box;
    std::sort(sorted.begin(), sorted.end());
    const auto at = std::find(sorted.begin(), sorted.end(), u) - sorted.begin();
    std::vector<PhysicalNode> chain;
    for (size_t k = 1; k < sorted.size(); ++k) chain.push_back(PhysicalNode(sorted[(at + k) % sorted.size()]));
    chains_of_box[key].push_back(s.stream(ph, PhysicalNode(u), chain, bytes, std::min(bytes, 256.0 * 1024)));
    ag_bytes_ += bytes * static_cast<double>(chain.size());
  }
  std::map<int, OpId> join;
  for (auto& [key, ops] : chains_of_box) join[key] = s.join(ph, ops);
  const int experts = s.find_phase(phase_names::kExperts);
  if (experts < 0) return;
  for (OpId id : s.ops_of(experts)) {
    const Op& op = s.op(id);
    if (op.kind != OpKind::kCompute) continue;
    const std::vector<int>& box = current_->box_of[static_cast<size_t>(op.node.value())];
    const auto it = join.find(*std::min_element(box.begin(), box.end()));
    if (it != join.end()) s.add_dep(id, it->second);
  }
}

/// The boxes of layout d, each as a ring in node order (the all-gather's order).
static std::vector<std::vector<int>> boxes(const DomainLayout& d) {
  std::map<int, std::vector<int>> by_first;
  for (const std::vector<int>& box : d.box_of) {
    std::vector<int> sorted = box;
    std::sort(sorted.begin(), sorted.end());
    by_first.emplace(sorted.front(), sorted);
  }
  std::vector<std::vector<int>> out;
  for (auto& [first, box] : by_first) out.push_back(std::move(box));
  return out;
}

void HybridPolicy::before_backward_layer(PolicyContext& ctx, LayerSchedule& s, BackwardLayer& b) {
  const int ml = ctx.moe_layer();
  if (ml < 0 || static_cast<size_t>(ml) >= by_layer_.size() || !by_layer_[static_cast<size_t>(ml)]) return;
  const DomainLayout& d = *by_layer_[static_cast<size_t>(ml)];
  if (d.box == 1) return;
  // Gradients as wide as the weights, uncompressed (SR compresses the forward's gather only).
  for (const std::vector<int>& ring : boxes(d)) {
    std::vector<double> chunks;
    double total = 0;
    for (int u : ring) {
      chunks.push_back(native_bytes_[static_cast<size_t>(u)]);
      total += chunks.back();
    }
    if (total <= 0) continue;
    // Stream: member k ends with the sum of its own pieces' gradients (each other member sends
    // chunk k once round the ring); resident: every member ends with all of the box's.
    const DepList j =
        opt_.stream ? add_gradient_reduce_scatter(s, b.grad_sync_phase, ring, chunks, weight_bytes_, b.gradients_done)
                    : add_gradient_all_reduce(s, b.grad_sync_phase, ring, total, weight_bytes_, b.gradients_done);
    b.sync_joins->insert(b.sync_joins->end(), j.begin(), j.end());
    const double g = static_cast<double>(ring.size());
    grad_bytes_ += opt_.stream ? total * (g - 1) : 2 * total * (g - 1);
  }
}

void HybridPolicy::add_optimizer_parameters(const PolicyContext& ctx, std::vector<double>& params) {
  if (opt_.stream) return;  // streamed copies are dropped; their owners update the pieces
  for (const DomainLayout* d : by_layer_) {
    if (!d) continue;
    for (size_t v = 0; v < params.size() && v < d->box_of.size(); ++v)
      for (int u : d->box_of[v])
        if (static_cast<size_t>(u) != v) params[v] += native_bytes_[static_cast<size_t>(u)] / ctx.model.weight_bytes;
  }
}

nlohmann::json HybridPolicy::stats() const {
  nlohmann::json chosen = nlohmann::json::object(), levels = nlohmann::json::array();
  std::vector<int> most;
  int most_n = -1;
  for (const auto& [sed, n] : chosen_) {
    chosen[sed_text(sed)] = n;
    if (n > most_n) {
      most = sed;
      most_n = n;
    }
  }
  for (size_t l = 0; l < lv_.sf.size() && !most.empty(); ++l)
    levels.push_back({{"sf", lv_.sf[l]},
                      {"sed", most[l]},
                      {"p", lv_.sf[l] > 1 ? p_of_domain(lv_.sf[l], most[l]) : 1.0},
                      {"p_table_form", p_table_form(lv_.sf[l], most[l])}});
  nlohmann::json out = {{"options", to_json(opt_)},
                        {"levels", levels},
                        {"sed_chosen", chosen},
                        {"allgather_bytes", ag_bytes_},
                        {"gradient_bytes_sent", grad_bytes_},
                        {"bytes_per_s", bytes_per_s_},
                        {"alpha_s", alpha_s_},
                        {"pre_expert_us_mean", layers_seen_ ? pre_expert_sum_s_ / layers_seen_ * 1e6 : 0.0}};
  if (opt_.stream && opt_.sed.empty() && layers_seen_ > 0) {
    // The paper's closed form on the flat view (G = nodes, mean loads), beside the enumeration's choice.
    StreamInputs in;
    in.workers = h_.nodes();
    in.bytes_per_s = bytes_per_s_;
    in.pre_expert_s = pre_expert_sum_s_ / layers_seen_;
    in.data_bytes = data_sum_ / layers_seen_;
    double pe = 0;
    for (double b : native_bytes_) pe += b / static_cast<double>(native_bytes_.size());
    in.expert_bytes = pe;
    const Optimum o = optimal_p(in);
    out["model"] = {{"p_star", o.p},
                    {"case", o.case_id == 21   ? "2.1"
                             : o.case_id == 22 ? "2.2"
                                               : "1"},
                    {"data_bytes_per_worker", in.data_bytes},
                    {"expert_bytes_per_worker", in.expert_bytes},
                    {"predicted_us_per_layer", predicted_s_ / layers_seen_ * 1e6}};
  }
  return out;
}

void register_policy(Registry& r) {
  PolicyFactory f;
  f.name = "hybridep";
  f.description =
      "HybridEP expert domains (Sec. IV): same-offset all-to-all to the domain box holding the expert; "
      "copies resident or all-gathered per layer on a background stream";
  f.options = {
      {"mode", "resident", "'resident' (copies made at load) or 'stream' (all-gathered every layer)"},
      {"sed", "auto", "domain size per level, e.g. \"1,4\" (auto: stream mode chooses per layer by the model)"},
      {"virtual_levels", "0", "recursive 2x2 quadrant levels inside the finest real group"},
      {"sr_keep", "0", "stream: SR compression, share of an expert's residual elements sent (0 = off)"},
      {"model", "inference",
       "stream auto: 'inference' (Eq. 8 plus the expert time of each worker's copies) or 'paper' (Eq. 8 "
       "as written: expert computation hidden)"},
      {"max_box", "0",
       "stream auto: only domain boxes of at most this many nodes (0 = any; the strategy sets the "
       "largest whose copies fit in memory)"}};
  f.create = [](const nlohmann::json& o, const std::string& where) {
    return std::make_unique<HybridPolicy>(hybrid_options(o, where));
  };
  f.resolve = [](const nlohmann::json& o, const std::string& where) { return to_json(hybrid_options(o, where)); };
  r.add(std::move(f));
}

}  // namespace nmpsim::methods::hybridep
