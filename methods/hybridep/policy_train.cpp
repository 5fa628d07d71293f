// The runtime policy "hybridep" in a training step (docs/MODEL.md "HybridEP: training"): the copies'
// gradients back to their owners, the shared expert's all-reduce and update, SREncode after the
// optimizer, and the policy's statistics.
#include <algorithm>
#include <map>

#include "nmpsim/mapping/layer_plan.h"
#include "nmpsim/mapping/train_step.h"
#include "nmpsim/methods/hybridep/policy.h"
#include "nmpsim/methods/hybridep/stream_model.h"

namespace nmpsim::methods::hybridep {

using namespace nmpsim::mapping;

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
  if (shared_expert()) {
    // The shared expert, replicated on every node, is all-reduced over all of them (Sec. IV-B:
    // "synchronized with asynchronous All-Reduce in the backward propagation phase").
    const std::vector<int> all = ring_order(topology_, 0, 0, topology_.width, topology_.height);
    const DepList j =
        add_gradient_all_reduce(s, b.grad_sync_phase, all, expert_bytes_, weight_bytes_, b.gradients_done, &ctx.hw);
    b.sync_joins->insert(b.sync_joins->end(), j.begin(), j.end());
    const double g = static_cast<double>(all.size());
    shared_bytes_ += 2 * expert_bytes_ * (g - 1);
  }
  if (d.box == 1) return;
  // Stream: the copies' gradients go back to the owners as grad_return says (full: as wide as the
  // weights; sr: at the compression ratio; none: not at all). Resident: every copy all-reduced.
  for (const std::vector<int>& ring : boxes(d)) {
    std::vector<double> chunks;
    double total = 0;
    for (int u : ring) {
      chunks.push_back(opt_.stream ? returned_bytes(u) : native_bytes_[static_cast<size_t>(u)]);
      total += chunks.back();
    }
    if (total <= 0) continue;
    // Stream: member k ends with the sum of its own pieces' gradients (each other member sends
    // chunk k once round the ring); resident: every member ends with all of the box's.
    const DepList j =
        opt_.stream
            ? add_gradient_reduce_scatter(s, b.grad_sync_phase, ring, chunks, weight_bytes_, b.gradients_done, &ctx.hw)
            : add_gradient_all_reduce(s, b.grad_sync_phase, ring, total, weight_bytes_, b.gradients_done, &ctx.hw);
    b.sync_joins->insert(b.sync_joins->end(), j.begin(), j.end());
    const double g = static_cast<double>(ring.size());
    grad_bytes_ += opt_.stream ? total * (g - 1) : 2 * total * (g - 1);
  }
}

void HybridPolicy::add_optimizer_parameters(const PolicyContext& ctx, std::vector<double>& params) {
  if (shared_expert())  // every node updates its replica of every MoE layer's shared expert
    for (double& p : params) p += ctx.model.moe_layers * expert_bytes_ / ctx.model.weight_bytes;
  if (opt_.stream) return;  // streamed copies are dropped; their owners update the pieces
  for (const DomainLayout* d : by_layer_) {
    if (!d) continue;
    for (size_t v = 0; v < params.size() && v < d->box_of.size(); ++v)
      for (int u : d->box_of[v])
        if (static_cast<size_t>(u) != v) params[v] += native_bytes_[static_cast<size_t>(u)] / ctx.model.weight_bytes;
  }
}

void HybridPolicy::before_optimizer(PolicyContext& ctx, LayerSchedule& s, const std::vector<OpId>& adam) {
  if (!shared_expert() || !ready_) return;
  // SREncode (Sec. IV-B, Fig. 10(a)), fused with the update as the paper does: the update pass already
  // reads the expert; the encode also reads the shared expert and the residual once more (the top-k
  // selection) and writes the kept (value, index) pairs. Every owner encodes its pieces of every MoE layer.
  const int ph = s.phase("sr_encode", PhaseFamily::kOther);
  for (size_t v = 0; v < native_bytes_.size() && v < adam.size(); ++v) {
    const double b = native_bytes_[v] * ctx.model.moe_layers;
    if (b <= 0) continue;
    const double bytes = 2 * b + b / opt_.sr_ratio;
    encode_bytes_ += bytes;
    s.compute(ph, PhysicalNode(static_cast<int>(v)), 2 * b / weight_bytes_, bytes,
              adam[v] >= 0 ? DepList{adam[v]} : DepList{});
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
                        {"shared_allreduce_bytes", shared_bytes_},
                        {"sr_encode_dram_bytes", encode_bytes_},
                        {"sr_decode_dram_bytes", decode_bytes_},
                        {"bytes_per_s", bytes_per_s_},
                        {"alpha_s", alpha_s_},
                        {"pre_expert_us_mean", layers_seen_ ? pre_expert_sum_s_ / layers_seen_ * 1e6 : 0.0}};
  if (opt_.stream && opt_.sed.empty() && layers_seen_ > 0) {
    // The paper's closed form on the flat view (G = nodes, mean loads), beside the enumeration's choice.
    StreamInputs in;
    in.workers = h_.nodes();
    in.bytes_per_s = bytes_per_s_;
    in.pre_expert_s = pre_expert_sum_s_ / layers_seen_;
    in.data_bytes = data_sum_ / std::max(1, choices_);
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
                    {"predicted_us_per_layer", choices_ ? predicted_s_ / choices_ * 1e6 : 0.0}};
  }
  return out;
}

}  // namespace nmpsim::methods::hybridep
