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
  expert_bytes_ = ctx.model.expert_bytes();
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
  // SR compression: the residual's kept elements as (value, 4-byte index) pairs (sr_keep), or the
  // paper's compression ratio of bytes (sr_ratio; its Table V: 18 MiB experts sent as 0.36 MB at 50x).
  if (opt_.sr_ratio > 0) return b / opt_.sr_ratio;
  return opt_.sr_keep > 0 ? b * opt_.sr_keep * (weight_bytes_ + 4) / weight_bytes_ : b;
}

double HybridPolicy::returned_bytes(int node) const {
  const double b = native_bytes_[static_cast<size_t>(node)];
  switch (opt_.grad_return) {
    case GradReturn::kFull:
      return b;
    case GradReturn::kCompressed:
      return b / opt_.sr_ratio;
    case GradReturn::kNone:
      break;
  }
  return 0.0;
}

double HybridPolicy::pre_expert_roofline(const LayerPlan& plan, int v) const {
  const size_t i = static_cast<size_t>(v);
  return std::max(plan.attn_flops[i] / peak_flops_, plan.attn_bytes[i] / memory_bytes_per_s_) +
         std::max(plan.gate_flops[i] / peak_flops_, plan.gate_bytes[i] / memory_bytes_per_s_);
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
      double ag = 0, rs = 0;  // the gather's bytes (SR applied) and the gradients returned
      for (size_t k = 1; k < d.box_of[static_cast<size_t>(v)].size(); ++k) {
        ag += gathered_bytes(d.box_of[static_cast<size_t>(v)][k]);
        rs += returned_bytes(d.box_of[static_cast<size_t>(v)][k]);
      }
      // Lat_PE: the previous layer's, measured; before any (the run's first MoE layer), the roofline.
      // (choose once; per layer keeps the measured 0 of the first layer, as before this option.)
      const double pe = pre_expert_s_ > 0 || !opt_.choose_once ? pre_expert_s_ : pre_expert_roofline(plan, v);
      const double a2a = w.a2a_bytes[static_cast<size_t>(v)];
      // Eq. 8 per worker with its own loads: max(Lat_PE, Lat_AG) + 2 Lat_A2A; the all-gather runs at
      // its ring's link speed. Inference: plus the expert time of the copies the worker serves (Eq. 7
      // hides it behind communication, as training pipelines do; a decode step waits for it).
      const double ag_s = ag > 0 ? ag / ring[static_cast<size_t>(v)] : 0.0;
      const double a2a_s = a2a > 0 ? alpha_s_ + a2a / bytes_per_s_ : 0.0;
      const double expert_s = std::max(w.expert_flops[static_cast<size_t>(v)] / peak_flops_,
                                       w.expert_bytes[static_cast<size_t>(v)] / memory_bytes_per_s_);
      double t = std::max(pe, ag_s) + 2 * a2a_s;
      // Training, ours: the backward runs both all-to-alls again and twice the expert FLOPs, and the
      // copies' gradients go back over the box (grad_return) beside the backward of the
      // layer's pre-expert part (twice the forward's). The paper's model leaves the backward out as a
      // constant (Sec. V), so its choice is the forward's.
      const double rs_s = rs > 0 ? rs / ring[static_cast<size_t>(v)] : 0.0;
      if (train && !opt_.paper_model) t += std::max(2 * pe, rs_s) + 2 * a2a_s + 2 * expert_s;
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
  if (!opt_.stream || !opt_.sed.empty()) {
    current_ = &layout(opt_.sed);
  } else if (!opt_.choose_once || !once_) {
    current_ = &choose(ctx);
    ++choices_;
    if (opt_.choose_once) once_ = current_;
  }
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

std::map<int, OpId> HybridPolicy::gather(LayerSchedule& s, int ph, const DomainLayout& d,
                                         const std::map<int, DepList>& after, std::vector<OpId>* streams) {
  // Every node multicasts its pieces around its box (a chain in box order from the next member).
  std::map<int, DepList> chains_of_box;  // by the box's first member
  if (streams) streams->assign(static_cast<size_t>(h_.nodes()), -1);
  for (int u = 0; u < h_.nodes(); ++u) {
    const double bytes = gathered_bytes(u);
    const std::vector<int>& box = d.box_of[static_cast<size_t>(u)];
    const int key = *std::min_element(box.begin(), box.end());
    if (bytes <= 0) continue;
    std::vector<int> sorted = box;
    std::sort(sorted.begin(), sorted.end());
    const auto at = std::find(sorted.begin(), sorted.end(), u) - sorted.begin();
    std::vector<PhysicalNode> chain;
    for (size_t k = 1; k < sorted.size(); ++k) chain.push_back(PhysicalNode(sorted[(at + k) % sorted.size()]));
    const auto dep = after.find(u);
    const OpId id = s.stream(ph, PhysicalNode(u), chain, bytes, std::min(bytes, 256.0 * 1024),
                             dep == after.end() ? DepList{} : dep->second);
    chains_of_box[key].push_back(id);
    if (streams) (*streams)[static_cast<size_t>(u)] = id;
    ag_bytes_ += bytes * static_cast<double>(chain.size());
  }
  std::map<int, OpId> join;
  for (auto& [key, ops] : chains_of_box) join[key] = s.join(ph, ops);
  return join;
}

void HybridPolicy::experts_wait(LayerSchedule& s, const DomainLayout& d, const std::map<int, OpId>& join) {
  const int experts = s.find_phase(phase_names::kExperts);
  if (experts < 0) return;
  // SR: each copy is restored before its expert computation (SRDecode, recovery and addition fused:
  // the compressed residual and the shared expert read, the expert written; docs/MODEL.md "HybridEP:
  // stream model").
  std::map<int, OpId> decoded;  // by node
  auto wait_of = [&](int v) -> OpId {
    const std::vector<int>& box = d.box_of[static_cast<size_t>(v)];
    const auto it = join.find(*std::min_element(box.begin(), box.end()));
    if (it == join.end()) return -1;
    if (!shared_expert()) return it->second;
    const auto done = decoded.find(v);
    if (done != decoded.end()) return done->second;
    double bytes = 0, elements = 0;
    for (int k : box)
      if (k != v) {
        bytes += gathered_bytes(k) + 2 * native_bytes_[static_cast<size_t>(k)];
        elements += native_bytes_[static_cast<size_t>(k)] / weight_bytes_;
      }
    decode_bytes_ += bytes;
    const int ph = s.phase("sr_decode", PhaseFamily::kOther);
    return decoded[v] = s.compute(ph, PhysicalNode(v), elements, bytes, {it->second});
  };
  for (OpId id : s.ops_of(experts)) {
    const Op& op = s.op(id);
    if (op.kind != OpKind::kCompute) continue;
    const OpId w = wait_of(op.node.value());
    if (w >= 0) s.add_dep(id, w);
  }
}

void HybridPolicy::prefetch_step(const PolicyContext& ctx, LayerSchedule& s) {
  // The paper's asynchronous communicator (Sec. IV-B, Fig. 10): at the step's start every MoE layer's
  // compressed experts queue up; each node sends layer m's after its layer m - 1's.
  const int ph = s.phase("expert_allgather", PhaseFamily::kOther, /*stream=*/1);
  step_.assign(static_cast<size_t>(ctx.model.moe_layers), {});
  std::vector<OpId> previous;
  for (int m = 0; m < ctx.model.moe_layers; ++m) {
    std::map<int, DepList> after;
    for (size_t u = 0; u < previous.size(); ++u)
      if (previous[u] >= 0) after[static_cast<int>(u)] = {previous[u]};
    const std::map<int, OpId> join = gather(s, ph, *current_, after, &previous);
    for (const auto& [key, id] : join) step_[static_cast<size_t>(m)][key] = OpRef{ctx.schedule, id};
    if (m == 0) experts_wait(s, *current_, join);
  }
}

void HybridPolicy::before_layer(PolicyContext& ctx, LayerSchedule& s) {
  const int ml = ctx.moe_layer();
  if (!opt_.stream || !current_ || current_->box == 1 || ml < 0) return;
  if (opt_.prefetch == Prefetch::kStep) {
    if (ml == 0) return prefetch_step(ctx, s);
    // This layer's gathers were issued at the step's start: its experts wait for them.
    const int ph = s.phase("expert_allgather_wait", PhaseFamily::kOther);
    std::map<int, OpId> join;
    if (static_cast<size_t>(ml) < step_.size())
      for (const auto& [key, ref] : step_[static_cast<size_t>(ml)]) join[key] = s.external(ph, ref);
    return experts_wait(s, *current_, join);
  }
  // From the layer's start (overlapped with attention and gate), or after the node's gate.
  std::map<int, DepList> after;
  const int gate = s.find_phase(phase_names::kGate);
  if (opt_.prefetch == Prefetch::kGate && gate >= 0)
    for (OpId id : s.ops_of(gate))
      if (s.op(id).kind == OpKind::kCompute) after[s.op(id).node.value()].push_back(id);
  const int ph = s.phase("expert_allgather", PhaseFamily::kOther, /*stream=*/1);
  experts_wait(s, *current_, gather(s, ph, *current_, after, nullptr));
}

}  // namespace nmpsim::methods::hybridep
