#include "nmpsim/mapping/moe_layer.h"

#include <algorithm>
#include <limits>

#include "nmpsim/mapping/group_collective.h"
#include "nmpsim/mapping/layer_phases.h"

namespace nmpsim::mapping {

namespace layer_phases {

/// Collective `kind` of the group `members` (in ring order), each member's chunk `share` of its home
/// bytes, with the group's algorithm resolved (`auto`: the smallest closed form).
GroupCollective group_collective(CollectiveKind kind, const LayerPlan& plan, const std::vector<int>& members,
                                 const LayerBuild& b, double share) {
  GroupCollective c;
  c.kind = kind;
  c.element_bytes = b.element_bytes;
  c.reduce = b.reduce;
  c.ring = members;
  for (int v : members) c.chunk_bytes.push_back(plan.home_bytes[static_cast<size_t>(v)] * share);
  resolve_algorithm(c, b.algorithm, b.hw);
  return c;
}

void ring_phase(LayerSchedule& s, PhaseChain& chain, const std::string& name, CollectiveKind kind,
                const LayerPlan& plan, const std::vector<std::vector<int>>& rings, const LayerBuild& b) {
  const int ph = s.phase(name, PhaseFamily::kAllReduce);
  DepList joins;
  for (const auto& members : rings) {
    const DepList j = add_group_collective(s, ph, group_collective(kind, plan, members, b, 1.0), chain.after());
    joins.insert(joins.end(), j.begin(), j.end());
  }
  chain.close(ph, std::move(joins));
}

void compute_phase(LayerSchedule& s, PhaseChain& chain, int ph, const std::vector<double>& flops,
                   const std::vector<double>& bytes) {
  DepList ops;
  for (size_t v = 0; v < flops.size(); ++v)
    if (flops[v] > 0)
      ops.push_back(s.compute(ph, PhysicalNode(static_cast<int>(v)), flops[v], bytes[v], chain.after()));
  chain.close(ph, std::move(ops));
}

// A compute phase whose output a ring reduce-scatter then sums (attention, shared experts). With
// b.pipeline_chunks N > 1 each node computes in N pieces, one kernel (pieces after the first without a
// start-up), and each ring reduce-scatters piece j as soon as every member has computed it: N
// collectives of 1/N of the bytes, overlapping the next pieces' compute (docs/MODEL.md "Pipelined
// collectives").
void compute_then_reduce_scatter(LayerSchedule& s, PhaseChain& chain, int ph, const std::vector<double>& flops,
                                 const std::vector<double>& bytes, const std::string& rs_name, const LayerPlan& plan,
                                 const std::vector<std::vector<int>>& rings, const LayerBuild& b) {
  const int n_chunks = b.pipeline_chunks;
  if (n_chunks <= 1) {
    compute_phase(s, chain, ph, flops, bytes);
    ring_phase(s, chain, rs_name, CollectiveKind::kRingReduceScatter, plan, rings, b);
    return;
  }
  const DepList start = chain.after();
  const size_t n = flops.size();
  std::vector<std::vector<OpId>> piece(n);  // [node][j]
  DepList ops;
  for (size_t v = 0; v < n; ++v) {
    if (flops[v] <= 0) continue;
    for (int j = 0; j < n_chunks; ++j) {
      DepList deps = j == 0 ? start : DepList{piece[v].back()};
      piece[v].push_back(s.compute(ph, PhysicalNode(static_cast<int>(v)), flops[v] / n_chunks, bytes[v] / n_chunks,
                                   std::move(deps), false, /*startup=*/j == 0));
      ops.push_back(piece[v].back());
    }
  }
  chain.close(ph, ops);
  const int rs = s.phase(rs_name, PhaseFamily::kAllReduce);
  DepList joins;
  for (const auto& members : rings)
    for (int j = 0; j < n_chunks; ++j) {
      DepList deps;
      for (int v : members)
        if (!piece[static_cast<size_t>(v)].empty())
          deps.push_back(piece[static_cast<size_t>(v)][static_cast<size_t>(j)]);
      if (deps.empty()) deps = start;
      const DepList done = add_group_collective(
          s, rs, group_collective(CollectiveKind::kRingReduceScatter, plan, members, b, 1.0 / n_chunks), deps);
      joins.insert(joins.end(), done.begin(), done.end());
    }
  chain.close(rs, std::move(joins));
}

// Each destination's sums are fused (without a start-up) or commands, as `reduce` says.
void exchange_phase(LayerSchedule& s, PhaseChain& chain, int ph, const std::vector<double>& bytes, int n,
                    const std::vector<double>* reduce_flops, ReduceMode reduce) {
  DepList ops;
  std::vector<DepList> into(static_cast<size_t>(n));
  // Each source walks its destinations in shifted order (v + 1, v + 2, ...), as pairwise all-to-all
  // implementations do, so that the sources do not all start on the same destination.
  for (int v = 0; v < n; ++v)
    for (int k = 0; k < n; ++k) {
      const int u = (v + k) % n;
      const double b = bytes[static_cast<size_t>(v) * n + u];
      if (b <= 0) continue;
      ops.push_back(s.transfer(ph, PhysicalNode(v), PhysicalNode(u), b, chain.after()));
      into[static_cast<size_t>(u)].push_back(ops.back());
    }
  if (reduce_flops)
    for (int v = 0; v < n; ++v) {
      const double f = (*reduce_flops)[static_cast<size_t>(v)];
      if (f <= 0) continue;
      DepList deps = into[static_cast<size_t>(v)];
      if (deps.empty()) deps = chain.after();
      ops.push_back(s.reduction(ph, PhysicalNode(v), f, std::move(deps), reduce));
    }
  chain.close(ph, std::move(ops));
}

void expert_ops(LayerSchedule& s, PhaseChain& chain, int ph, const LayerPlan& plan, bool grouped, const PieceScale& k) {
  DepList work;
  for (int v = 0; v < plan.nodes; ++v) {
    double flops = 0, bytes = 0;
    for (const ExpertWork& w : plan.expert_work[static_cast<size_t>(v)]) {
      const double f = k.flops * w.flops, b = k.bytes * w.bytes + w.share * k.share_bytes;
      if (!grouped) {
        work.push_back(s.compute(ph, PhysicalNode(v), f, b, chain.after(), /*own_weights=*/true));
        continue;
      }
      flops += f;
      bytes += b;
    }
    if (grouped && !plan.expert_work[static_cast<size_t>(v)].empty())
      work.push_back(s.compute(ph, PhysicalNode(v), flops, bytes, chain.after(), /*own_weights=*/true));
  }
  chain.close(ph, std::move(work));
}

OpId forward_chain(LayerSchedule& s, const ModelSpec& m, const LayerPlan& plan, const Groups& groups,
                   const LayerBuild& b, const std::string& prefix, OpId start) {
  namespace pn = phase_names;
  const auto P = [&](const char* name) { return prefix + name; };
  PhaseChain chain(s, start);
  const int n = plan.nodes;
  ring_phase(s, chain, P(pn::kAllGather), CollectiveKind::kRingAllGather, plan, groups.ring, b);
  compute_then_reduce_scatter(s, chain, s.phase(P(pn::kAttention), PhaseFamily::kAttention), plan.attn_flops,
                              plan.attn_bytes, P(pn::kReduceScatter), plan, groups.ring, b);
  if (plan.dense) return chain.barrier();
  compute_phase(s, chain, s.phase(P(pn::kGate), PhaseFamily::kMoeCompute), plan.gate_flops, plan.gate_bytes);
  if (m.shared_experts > 0) {
    // Shared experts: tensor parallel inside the attention group, like a dense FFN.
    ring_phase(s, chain, P(pn::kSharedAllGather), CollectiveKind::kRingAllGather, plan, groups.ring, b);
    compute_then_reduce_scatter(s, chain, s.phase(P(pn::kSharedExperts), PhaseFamily::kMoeCompute), plan.shared_flops,
                                plan.shared_bytes, P(pn::kSharedReduceScatter), plan, groups.ring, b);
  }
  if (!plan.token_rings.empty())
    ring_phase(s, chain, P(pn::kTokenAllGather), CollectiveKind::kRingAllGather, plan, plan.token_rings, b);
  // A relayed exchange: one phase per stage, the first ones "dispatch_<stage>", the last "dispatch";
  // the combine in the mirror order, summing at every relay.
  const auto& st = plan.stages;
  for (size_t k = 0; k + 1 < st.size(); ++k)
    exchange_phase(s, chain, s.phase(prefix + "dispatch_" + st[k].name, PhaseFamily::kMoeComm), st[k].dispatch, n,
                   nullptr);
  const int ph_dispatch = s.phase(P(pn::kDispatch), PhaseFamily::kMoeComm);
  const int ph_experts = s.phase(P(pn::kExperts), PhaseFamily::kMoeCompute, kForeground, /*node_balance=*/true);
  const int ph_combine = s.phase(P(pn::kCombine), PhaseFamily::kMoeComm);
  const std::vector<double>& dispatch = st.empty() ? plan.dispatch : st.back().dispatch;
  const std::vector<double>& combine = st.empty() ? plan.combine : st.back().combine;
  const std::vector<double>* sums = st.empty() ? &plan.reduce_flops : &st.back().reduce_flops;
  if (b.moe_chunks > 1 && st.size() <= 1) {  // Tutel's chunks on a direct (one-stage) exchange
    const int phases[3] = {ph_dispatch, ph_experts, ph_combine};
    chunked_moe_block(s, chain, phases, dispatch, combine, sums, plan, b);
  } else {
    exchange_phase(s, chain, ph_dispatch, dispatch, n, nullptr);
    expert_ops(s, chain, ph_experts, plan, b.grouped_experts);
    exchange_phase(s, chain, ph_combine, combine, n, sums, b.reduce);
  }
  for (size_t k = st.size(); k >= 2; --k)  // the inter stages, finest first
    exchange_phase(s, chain, s.phase(prefix + "combine_" + st[k - 2].name, PhaseFamily::kMoeComm), st[k - 2].combine, n,
                   &st[k - 2].reduce_flops, b.reduce);
  if (!plan.token_rings.empty())
    ring_phase(s, chain, P(pn::kPartialReduceScatter), CollectiveKind::kRingReduceScatter, plan, plan.token_rings, b);
  return chain.barrier();
}

}  // namespace layer_phases

LayerBuild layer_build(const AnalyticalHardware& hw) {
  LayerBuild b;
  b.element_bytes = hw.element_bytes;
  b.reduce = hw.reduce;
  b.grouped_experts = hw.grouped_experts;
  b.algorithm = hw.rings;
  b.hw = &hw;
  b.pipeline_chunks = std::max(1, hw.pipeline_chunks);
  return b;
}

LayerSchedule build_moe_layer(const ModelSpec& m, const std::vector<LayerPlan>& plans, const Groups& groups,
                              const LayerBuild& b) {
  LayerSchedule s;
  for (size_t k = 0; k < plans.size(); ++k) {
    const OpId first = s.size();
    layer_phases::forward_chain(s, m, plans[k], groups, b);
    s.set_micro_batch(first, static_cast<int>(k));
  }
  return s;
}

LayerSchedule build_attention_block(const LayerPlan& plan, const Groups& groups, const LayerBuild& b) {
  LayerSchedule s;
  layer_phases::PhaseChain chain(s);
  layer_phases::compute_then_reduce_scatter(s, chain, s.phase(phase_names::kAttention, PhaseFamily::kAttention),
                                            plan.attn_flops, plan.attn_bytes, phase_names::kReduceScatter, plan,
                                            groups.ring, b);
  return s;
}

LayerSchedule build_moe_layer(const ModelSpec& m, const LayerPlan& plan, const Groups& groups, const LayerBuild& b) {
  LayerSchedule s;
  layer_phases::forward_chain(s, m, plan, groups, b);
  return s;
}

OpId phase_barrier(const LayerSchedule& s, int phase) {
  // The barrier is the last join the builder added to the phase.
  for (OpId i = s.size() - 1; i >= 0; --i) {
    const Op& o = s.op(i);
    if (o.phase == phase && o.kind == OpKind::kJoin && o.collective < 0) return i;
  }
  return -1;
}

}  // namespace nmpsim::mapping
