// The backward of one layer and its gradient synchronisation (mapping/train_step.h).
#include <algorithm>
#include <string>

#include "nmpsim/mapping/layer_phases.h"
#include "nmpsim/mapping/train_step.h"

namespace nmpsim::mapping {

namespace {

using namespace layer_phases;
namespace pn = phase_names;

std::string bwd(const std::string& forward_phase) { return train_phases::kBackwardPrefix + forward_phase; }

std::vector<double> transpose(const std::vector<double>& m, int n) {
  std::vector<double> t(m.size(), 0.0);
  for (int a = 0; a < n; ++a)
    for (int c = 0; c < n; ++c) t[static_cast<size_t>(c) * n + a] = m[static_cast<size_t>(a) * n + c];
  return t;
}

/// Per node: the weight bytes of what the node computes in the attention block (attention, and a dense
/// layer's FFN) and in the shared experts, each split over the attention group.
struct GroupWeights {
  std::vector<double> attention, shared;
};
GroupWeights group_weights(const ModelSpec& m, const LayerPlan& plan, const Groups& groups) {
  GroupWeights w;
  w.attention.assign(static_cast<size_t>(plan.nodes), 0.0);
  w.shared = w.attention;
  const double dense_ffn = double(m.ffn_matrices) * m.hidden * m.dense_intermediate;
  for (int v = 0; v < plan.nodes; ++v) {
    const double g = static_cast<double>(groups.ring[static_cast<size_t>(groups.group_of[v])].size());
    w.attention[v] = (m.attention_params() + (plan.dense ? dense_ffn : 0.0)) * m.weight_bytes / g;
    w.shared[v] = plan.dense ? 0.0 : m.shared_params() * m.weight_bytes / g;
  }
  return w;
}

/// A compute phase's backward: twice the FLOPs (input and weight gradients); its DRAM bytes twice (the
/// weights and saved activations read again, the activation gradients read and written) plus the
/// weight gradients written (docs/MODEL.md "Training step").
void backward_of(const std::vector<double>& flops, const std::vector<double>& bytes,
                 const std::vector<double>& weight_bytes, std::vector<double>& f2, std::vector<double>& b2) {
  f2.assign(flops.size(), 0.0);
  b2 = f2;
  for (size_t v = 0; v < flops.size(); ++v) {
    if (flops[v] <= 0) continue;
    f2[v] = 2.0 * flops[v];
    b2[v] = 2.0 * bytes[v] + weight_bytes[v];
  }
}

/// The MoE part's backward: the combine's gradient to the experts (every exchange transposed, the
/// relayed stages in the reverse order), the experts, the dispatch's gradient summed at its sources
/// (the sums the forward's combine did, at the same nodes).
void moe_backward(LayerSchedule& s, PhaseChain& chain, const ModelSpec& m, const LayerPlan& plan, const LayerBuild& b) {
  const int n = plan.nodes;
  const auto& st = plan.stages;
  const auto comm = [&](const std::string& name) { return s.phase(bwd(name), PhaseFamily::kMoeComm); };
  if (!plan.token_rings.empty())
    ring_phase(s, chain, bwd(pn::kPartialReduceScatter), CollectiveKind::kRingAllGather, plan, plan.token_rings, b);
  for (size_t k = 0; k + 1 < st.size(); ++k)
    exchange_phase(s, chain, comm(std::string("combine_") + st[k].name), transpose(st[k].combine, n), n, nullptr);
  const int ph_combine = comm(pn::kCombine);
  const int ph_experts = s.phase(bwd(pn::kExperts), PhaseFamily::kMoeCompute, kForeground, true);
  const int ph_dispatch = comm(pn::kDispatch);
  const std::vector<double> in = transpose(st.empty() ? plan.combine : st.back().combine, n);
  const std::vector<double> out = transpose(st.empty() ? plan.dispatch : st.back().dispatch, n);
  const std::vector<double>* sums = st.empty() ? &plan.reduce_flops : &st.back().reduce_flops;
  // Twice the FLOPs and bytes (as backward_of), plus the piece's weight gradients.
  const PieceScale twice{2.0, 2.0, m.expert_bytes()};
  if (b.moe_chunks > 1 && st.size() <= 1) {  // Tutel's chunks, as the forward
    const int phases[3] = {ph_combine, ph_experts, ph_dispatch};
    chunked_moe_block(s, chain, phases, in, out, sums, plan, b, twice);
  } else {
    exchange_phase(s, chain, ph_combine, in, n, nullptr);
    expert_ops(s, chain, ph_experts, plan, b.grouped_experts, twice);
    exchange_phase(s, chain, ph_dispatch, out, n, sums, b.reduce);
  }
  for (size_t k = st.size(); k >= 2; --k)
    exchange_phase(s, chain, comm(std::string("dispatch_") + st[k - 2].name), transpose(st[k - 2].dispatch, n), n,
                   &st[k - 2].reduce_flops, b.reduce);
  if (!plan.token_rings.empty())
    ring_phase(s, chain, bwd(pn::kTokenAllGather), CollectiveKind::kRingReduceScatter, plan, plan.token_rings, b);
}

/// One micro-batch's backward chain, after `start`; returns its last barrier.
OpId backward_chain(LayerSchedule& s, const ModelSpec& m, const LayerPlan& plan, const Groups& groups,
                    const LayerBuild& b, OpId start) {
  PhaseChain chain(s, start);
  const GroupWeights w = group_weights(m, plan, groups);
  std::vector<double> f2, b2;
  if (!plan.dense) {
    moe_backward(s, chain, m, plan, b);
    if (m.shared_experts > 0) {
      ring_phase(s, chain, bwd(pn::kSharedReduceScatter), CollectiveKind::kRingAllGather, plan, groups.ring, b);
      backward_of(plan.shared_flops, plan.shared_bytes, w.shared, f2, b2);
      compute_then_reduce_scatter(s, chain, s.phase(bwd(pn::kSharedExperts), PhaseFamily::kMoeCompute), f2, b2,
                                  bwd(pn::kSharedAllGather), plan, groups.ring, b);
    }
    std::vector<double> gate_weights(static_cast<size_t>(plan.nodes), 0.0);
    for (int v = 0; v < plan.nodes; ++v)
      if (plan.gate_flops[v] > 0) gate_weights[v] = m.gate_params() * m.weight_bytes;
    backward_of(plan.gate_flops, plan.gate_bytes, gate_weights, f2, b2);
    compute_phase(s, chain, s.phase(bwd(pn::kGate), PhaseFamily::kMoeCompute), f2, b2);
  }
  ring_phase(s, chain, bwd(pn::kReduceScatter), CollectiveKind::kRingAllGather, plan, groups.ring, b);
  backward_of(plan.attn_flops, plan.attn_bytes, w.attention, f2, b2);
  compute_then_reduce_scatter(s, chain, s.phase(bwd(pn::kAttention), PhaseFamily::kAttention), f2, b2,
                              bwd(pn::kAllGather), plan, groups.ring, b);
  return chain.barrier();
}

/// A gradient collective: fused adds, the hardware's `collectives.gradients` (without the hardware:
/// both ways round the ring from 3 members).
GroupCollective gradient_collective(CollectiveKind kind, const std::vector<int>& ring,
                                    const std::vector<double>& chunk_bytes, double element_bytes,
                                    const AnalyticalHardware* hw) {
  GroupCollective c;
  c.kind = kind;
  c.ring = ring;
  c.chunk_bytes = chunk_bytes;
  c.element_bytes = element_bytes;
  c.reduce = ReduceMode::kFused;
  const RingAlgorithm want = hw ? hw->gradient_rings : RingAlgorithm::kBidirectional;
  resolve_algorithm(c, want, hw);
  if (c.algorithm == RingAlgorithm::kBidirectional && ring.size() < 3) c.algorithm = RingAlgorithm::kOneWay;
  return c;
}

/// The layer's gradient synchronisation after `deps` (the chains' ends), on stream 1.
DepList grad_sync(LayerSchedule& s, const ModelSpec& m, const std::vector<LayerPlan>& plans, const Groups& groups,
                  const LayerBuild& b, const BackwardBuild& t, const DepList& deps) {
  const int ph = s.phase(train_phases::kGradSync, PhaseFamily::kAllReduce, 1);
  const LayerPlan& plan = plans.front();
  DepList joins;
  // Attention (and a dense FFN, and shared experts): every group holds all of it, member p the same
  // shard in every group; the shards are all-reduced over the groups.
  const GroupWeights w = group_weights(m, plan, groups);
  if (groups.size() >= 2)
    for (size_t p = 0; p < groups.ring.front().size(); ++p) {
      std::vector<int> members;
      for (const auto& ring : groups.ring) members.push_back(ring[p]);
      const int v = members.front();
      const DepList j =
          add_gradient_all_reduce(s, ph, members, w.attention[v] + w.shared[v], m.weight_bytes, deps, b.hw);
      joins.insert(joins.end(), j.begin(), j.end());
    }
  if (plan.dense) return joins;
  // The gate: a copy on every node (docs/MODEL.md "Capacity"), updated by every node's optimizer, so
  // every copy takes part, the nodes without tokens in this step with a zero gradient.
  std::vector<int> members = t.all_nodes_ring;
  if (members.empty())
    for (int v = 0; v < plan.nodes; ++v) members.push_back(v);
  if (members.size() >= 2) {
    const DepList j =
        add_gradient_all_reduce(s, ph, members, m.gate_params() * m.weight_bytes, m.weight_bytes, deps, b.hw);
    joins.insert(joins.end(), j.begin(), j.end());
  }
  return joins;
}

}  // namespace

DepList add_gradient_all_reduce(LayerSchedule& s, int ph, const std::vector<int>& ring, double bytes,
                                double element_bytes, const DepList& deps, const AnalyticalHardware* hw) {
  const std::vector<double> chunks(ring.size(), bytes / static_cast<double>(ring.size()));
  const DepList scattered = add_gradient_reduce_scatter(s, ph, ring, chunks, element_bytes, deps, hw);
  return add_group_collective(
      s, ph, gradient_collective(CollectiveKind::kRingAllGather, ring, chunks, element_bytes, hw), scattered);
}

DepList add_gradient_reduce_scatter(LayerSchedule& s, int ph, const std::vector<int>& ring,
                                    const std::vector<double>& chunk_bytes, double element_bytes, const DepList& deps,
                                    const AnalyticalHardware* hw) {
  return add_group_collective(
      s, ph, gradient_collective(CollectiveKind::kRingReduceScatter, ring, chunk_bytes, element_bytes, hw), deps);
}

LayerSchedule build_moe_layer_backward(const ModelSpec& m, const std::vector<LayerPlan>& plans, const Groups& groups,
                                       const LayerBuild& b, const BackwardBuild& t, std::vector<OpId>* sync_joins,
                                       DepList* chain_ends) {
  LayerSchedule s;
  DepList ends;
  for (size_t k = 0; k < plans.size(); ++k) {
    const OpId first = s.size();
    const OpId start =
        t.recompute ? forward_chain(s, m, plans[k], groups, b, train_phases::kRecomputePrefix) : OpId{-1};
    ends.push_back(backward_chain(s, m, plans[k], groups, b, start));
    s.set_micro_batch(first, static_cast<int>(k));
  }
  const DepList joins = grad_sync(s, m, plans, groups, b, t, ends);
  if (sync_joins) sync_joins->assign(joins.begin(), joins.end());
  if (chain_ends) *chain_ends = ends;
  return s;
}

}  // namespace nmpsim::mapping
