// The routed MoE block in token chunks (Tutel's adaptive pipelining; docs/MODEL.md "Chunked MoE blocks").
#include <algorithm>

#include "nmpsim/mapping/layer_phases.h"

namespace nmpsim::mapping::layer_phases {

namespace {

/// Chunk j of exchange `bytes` (1 / C of every message): each transfer after `after` and its
/// source's `from[src]` (if any). Appends the transfers into each destination to `into`.
DepList chunk_exchange(LayerSchedule& s, int ph, const std::vector<double>& bytes, int n, int chunks,
                       const DepList& after, const std::vector<OpId>* from, std::vector<DepList>& into) {
  DepList ops;
  for (int v = 0; v < n; ++v)
    for (int k = 0; k < n; ++k) {
      const int u = (v + k) % n;  // shifted order, as exchange_phase
      const double b = bytes[static_cast<size_t>(v) * n + u];
      if (b <= 0) continue;
      DepList deps = after;
      if (from && (*from)[static_cast<size_t>(v)] >= 0) deps.push_back((*from)[static_cast<size_t>(v)]);
      ops.push_back(s.transfer(ph, PhysicalNode(v), PhysicalNode(u), b / chunks, std::move(deps)));
      into[static_cast<size_t>(u)].push_back(ops.back());
    }
  return ops;
}

}  // namespace

void chunked_moe_block(LayerSchedule& s, PhaseChain& chain, const int phases[3], const std::vector<double>& in,
                       const std::vector<double>& out, const std::vector<double>* reduce_flops, const LayerPlan& plan,
                       const LayerBuild& b, const PieceScale& k) {
  // No more chunks than the step has tokens: a chunk cannot carry less than one.
  const int n = plan.nodes,
            chunks = std::max(1, std::min(b.moe_chunks, static_cast<int>(std::max<size_t>(1, plan.home.size()))));
  const DepList start = chain.after();
  DepList in_ops, expert_ops_all, out_ops;
  OpId in_done = -1, out_done = -1;
  std::vector<OpId> last_piece(static_cast<size_t>(n), -1);
  for (int j = 0; j < chunks; ++j) {
    // The chunk's dispatch, after the previous chunk's (one all-to-all after the other on the stream).
    std::vector<DepList> arrived(static_cast<size_t>(n));
    const DepList d =
        chunk_exchange(s, phases[0], in, n, chunks, in_done < 0 ? start : DepList{in_done}, nullptr, arrived);
    in_ops.insert(in_ops.end(), d.begin(), d.end());
    in_done = s.join(phases[0], d.empty() ? start : d);
    // Each node's pieces of the chunk, after what reached it and its previous chunk.
    std::vector<OpId> piece(static_cast<size_t>(n), -1);
    for (int v = 0; v < n; ++v) {
      const auto& work = plan.expert_work[static_cast<size_t>(v)];
      if (work.empty()) continue;
      DepList deps = arrived[static_cast<size_t>(v)].empty() ? start : arrived[static_cast<size_t>(v)];
      if (last_piece[static_cast<size_t>(v)] >= 0) deps.push_back(last_piece[static_cast<size_t>(v)]);
      double flops = 0, bytes = 0;
      for (const ExpertWork& w : work) {
        const double f = k.flops * w.flops / chunks, wb = k.bytes * w.bytes + w.share * k.share_bytes;
        if (!b.grouped_experts) {
          piece[static_cast<size_t>(v)] = s.compute(phases[1], PhysicalNode(v), f, wb, deps, /*own_weights=*/true);
          deps = {piece[static_cast<size_t>(v)]};
          expert_ops_all.push_back(piece[static_cast<size_t>(v)]);
          continue;
        }
        flops += f;
        bytes += wb;
      }
      if (b.grouped_experts) {
        piece[static_cast<size_t>(v)] = s.compute(phases[1], PhysicalNode(v), flops, bytes, deps, true);
        expert_ops_all.push_back(piece[static_cast<size_t>(v)]);
      }
      last_piece[static_cast<size_t>(v)] = piece[static_cast<size_t>(v)];
    }
    // The chunk's combine from each node after its pieces, after the previous chunk's combine.
    std::vector<DepList> back(static_cast<size_t>(n));
    const DepList c =
        chunk_exchange(s, phases[2], out, n, chunks, out_done < 0 ? DepList{in_done} : DepList{out_done}, &piece, back);
    out_ops.insert(out_ops.end(), c.begin(), c.end());
    if (reduce_flops)
      for (int v = 0; v < n; ++v) {
        const double f = (*reduce_flops)[static_cast<size_t>(v)] / chunks;
        if (f <= 0) continue;
        // The home sums what came back and its own chunk's partials.
        DepList deps = back[static_cast<size_t>(v)].empty() ? DepList{in_done} : back[static_cast<size_t>(v)];
        if (piece[static_cast<size_t>(v)] >= 0) deps.push_back(piece[static_cast<size_t>(v)]);
        out_ops.push_back(s.reduction(phases[2], PhysicalNode(v), f, std::move(deps), b.reduce));
      }
    out_done = s.join(phases[2], c.empty() ? DepList{in_done} : c);
  }
  chain.close(phases[0], std::move(in_ops));
  chain.close(phases[1], std::move(expert_ops_all));
  out_ops.push_back(chain.barrier());  // the block ends after every expert piece, also those sending nothing
  chain.close(phases[2], std::move(out_ops));
}

}  // namespace nmpsim::mapping::layer_phases
