#include "nmpsim/mapping/dispatch_planner.h"

namespace nmpsim::mapping {

TokenTraffic::TokenTraffic(const DispatchPlanner& planner, LayerPlan& p, double token_bytes)
    : planner_(planner), p_(p), token_bytes_(token_bytes), stamp_(static_cast<size_t>(p.nodes), -1) {}

void TokenTraffic::visit(int i, int h, int v) {
  if (stamp_[static_cast<size_t>(v)] == i) return;  // already travels to v (for another expert)
  stamp_[static_cast<size_t>(v)] = i;
  h = planner_.source(h, v);
  const size_t n = static_cast<size_t>(p_.nodes);
  p_.partials[static_cast<size_t>(h)] += 1;
  if (v != h) {
    p_.dispatch[static_cast<size_t>(h) * n + static_cast<size_t>(v)] += token_bytes_;
    p_.combine[static_cast<size_t>(v) * n + static_cast<size_t>(h)] += token_bytes_;
  }
}

void TokenTraffic::finish(double hidden) {
  for (size_t v = 0; v < p_.partials.size(); ++v) p_.reduce_flops[v] = p_.partials[v] * hidden;
}

std::vector<double> DirectDispatch::tokens_per_expert(const DispatchInputs& in, int batch) {
  std::vector<double> tokens_of(static_cast<size_t>(in.model.experts), 0.0);
  for (int i = 0; i < batch; ++i) {
    const uint16_t* ex = in.experts_of(i);
    for (int k = 0; k < in.top_k(); ++k) tokens_of[ex[k]] += 1;
  }
  return tokens_of;
}

void DirectDispatch::plan(const DispatchInputs& in, LayerPlan& p) const {
  const int B = static_cast<int>(p.home.size());
  add_static_work(in, tokens_per_expert(in, B), p, [](int) { return false; });
  // Traffic: each token travels once to every node that works on it; the home reduces the partials.
  TokenTraffic traffic(*this, p, in.model.token_bytes());
  for (int i = 0; i < B; ++i) {
    const int h = p.home[static_cast<size_t>(i)];
    const uint16_t* ex = in.experts_of(i);
    for (int k = 0; k < in.top_k(); ++k)
      for (int v = 0; v < p.nodes; ++v) {
        const double s = in.rows[ex[k]][static_cast<size_t>(v)];
        if (s <= 0) continue;
        p.routed_token_work[static_cast<size_t>(v)] += s;
        traffic.visit(i, h, v);
      }
  }
  traffic.finish(static_cast<double>(in.model.hidden));
}

const DispatchPlanner& direct_dispatch() {
  static const DirectDispatch planner;
  return planner;
}

}  // namespace nmpsim::mapping
