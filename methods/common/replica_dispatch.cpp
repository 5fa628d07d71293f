#include "nmpsim/methods/common/replica_dispatch.h"

#include <algorithm>

namespace nmpsim::methods::common {

using mapping::DirectDispatch;
using mapping::ExpertWork;

std::vector<std::vector<double>> ReplicaDispatch::assign(const mapping::DispatchInputs& in,
                                                         const mapping::LayerPlan& p) const {
  const int N = p.nodes, E = in.model.experts;
  auto roof = [&](double flops, double bytes) { return std::max(flops / peak_flops_, bytes / memory_bytes_per_s_); };
  // Start from each node's static expert time.
  std::vector<double> load(static_cast<size_t>(N), 0.0);
  for (int v = 0; v < N; ++v)
    for (const ExpertWork& w : p.expert_work[static_cast<size_t>(v)])
      load[static_cast<size_t>(v)] += roof(w.flops, w.bytes);
  std::vector<std::vector<double>> tokens(static_cast<size_t>(E), std::vector<double>(static_cast<size_t>(N), 0.0));
  const double flops = in.model.expert_flops_per_token(), bytes = in.model.expert_bytes();
  for (int i = 0; i < static_cast<int>(p.home.size()); ++i) {
    const uint16_t* ex = in.experts_of(i);
    for (int k = 0; k < in.top_k(); ++k) {
      const int e = ex[k];
      if (!replicated(e)) continue;
      int best = -1;
      double best_load = 0;
      for (int v : full_copies_[static_cast<size_t>(e)]) {
        const double n = tokens[e][v];
        const double before = n > 0 ? roof(n * flops, bytes) : 0.0;
        const double l = load[static_cast<size_t>(v)] + roof((n + 1) * flops, bytes) - before;
        if (best < 0 || l < best_load) {
          best = v;
          best_load = l;
        }
      }
      load[static_cast<size_t>(best)] = best_load;
      tokens[e][best] += 1;
    }
  }
  return tokens;
}

void ReplicaDispatch::plan(const mapping::DispatchInputs& in, mapping::LayerPlan& p) const {
  const int B = static_cast<int>(p.home.size()), N = p.nodes, E = in.model.experts;
  DirectDispatch::add_static_work(in, DirectDispatch::tokens_per_expert(in, B), p,
                                  [&](int e) { return replicated(e); });
  const std::vector<std::vector<double>> tokens = assign(in, p);
  for (int e = 0; e < E; ++e)
    for (int v = 0; v < N; ++v)
      if (tokens[e][v] > 0)
        p.expert_work[static_cast<size_t>(v)].push_back(ExpertWork{
            e, tokens[e][v], 1.0, tokens[e][v] * in.model.expert_flops_per_token(), in.model.expert_bytes()});
  // Traffic: replay the least-loaded assignment (a token of a replicated expert goes to the first node
  // with tokens of it left); the other experts' tokens go to every node with a share.
  std::vector<std::vector<double>> left = tokens;
  mapping::TokenTraffic traffic(*this, p, in.model.token_bytes());
  for (int i = 0; i < B; ++i) {
    const int h = p.home[static_cast<size_t>(i)];
    const uint16_t* ex = in.experts_of(i);
    for (int k = 0; k < in.top_k(); ++k) {
      const int e = ex[k];
      if (replicated(e)) {
        for (int v = 0; v < N; ++v)
          if (left[e][v] > 0) {
            left[e][v] -= 1;
            p.routed_token_work[static_cast<size_t>(v)] += 1;
            traffic.visit(i, h, v);
            break;
          }
        continue;
      }
      for (int v = 0; v < N; ++v) {
        const double s = in.rows[static_cast<size_t>(e)][static_cast<size_t>(v)];
        if (s <= 0) continue;
        p.routed_token_work[static_cast<size_t>(v)] += s;
        traffic.visit(i, h, v);
      }
    }
  }
  traffic.finish(static_cast<double>(in.model.hidden));
}

void hand_replicas(mapping::LayerInputs& in, std::optional<ReplicaDispatch>& slot,
                   std::vector<std::vector<int>> full_copies, const mapping::AnalyticalHardware& hw,
                   const std::string& policy) {
  if (std::all_of(full_copies.begin(), full_copies.end(), [](const auto& c) { return c.empty(); })) return;
  if (!in.planner_from.empty())
    throw mapping::InputError("policy " + policy + ": least-loaded dispatch to expert copies cannot combine with the " +
                              "dispatch of policy " + in.planner_from);
  slot.emplace(*in.planner, std::move(full_copies), hw.peak_flops, hw.memory_bytes_per_s);
  in.planner = &*slot;
  in.planner_from = policy;
}

}  // namespace nmpsim::methods::common
