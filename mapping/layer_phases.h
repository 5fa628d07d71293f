// The building blocks of a layer's schedule, shared by the forward (mapping/moe_layer.cpp) and the
// backward of a training step (mapping/moe_layer_backward.cpp): phases chained by barriers, ring
// collectives of the attention groups, compute phases and all-to-all exchanges. Internal to mapping/.
#pragma once

#include <string>
#include <vector>

#include "nmpsim/mapping/group_collective.h"
#include "nmpsim/mapping/layer_plan.h"
#include "nmpsim/mapping/moe_layer.h"
#include "nmpsim/mapping/schedule.h"

namespace nmpsim::mapping::layer_phases {

/// Appends phases one after another, each closed by a barrier the next one starts from.
class PhaseChain {
 public:
  /// A chain whose first phase starts after op `start` (-1: at once).
  explicit PhaseChain(LayerSchedule& s, OpId start = -1) : s_(s), barrier_(start) {}
  /// Dependencies of an op that starts its phase: the previous phase's barrier.
  DepList after() const { return barrier_ < 0 ? DepList{} : DepList{barrier_}; }
  void close(int phase, DepList ops) { barrier_ = s_.join(phase, ops.empty() ? after() : std::move(ops)); }
  OpId barrier() const { return barrier_; }

 private:
  LayerSchedule& s_;
  OpId barrier_ = -1;
};

/// Collective `kind` of the group `members` (in ring order), each member's chunk `share` of its home
/// bytes, with the group's algorithm resolved (`auto`: the smallest closed form).
GroupCollective group_collective(CollectiveKind kind, const LayerPlan& plan, const std::vector<int>& members,
                                 const LayerBuild& b, double share);
/// A phase of one collective per ring (family allreduce), closed by a barrier.
void ring_phase(LayerSchedule& s, PhaseChain& chain, const std::string& name, CollectiveKind kind,
                const LayerPlan& plan, const std::vector<std::vector<int>>& rings, const LayerBuild& b);
/// A compute op per node with FLOPs (and DRAM bytes), closed by a barrier.
void compute_phase(LayerSchedule& s, PhaseChain& chain, int ph, const std::vector<double>& flops,
                   const std::vector<double>& bytes);
/// A compute phase whose output a ring reduce-scatter (phase `rs_name`) then sums, pipelined in
/// b.pipeline_chunks pieces (docs/MODEL.md "Pipelined collectives").
void compute_then_reduce_scatter(LayerSchedule& s, PhaseChain& chain, int ph, const std::vector<double>& flops,
                                 const std::vector<double>& bytes, const std::string& rs_name, const LayerPlan& plan,
                                 const std::vector<std::vector<int>>& rings, const LayerBuild& b);
/// Transfers of a [src * n + dst] matrix; with `reduce_flops`, each destination then sums what it got.
void exchange_phase(LayerSchedule& s, PhaseChain& chain, int ph, const std::vector<double>& bytes, int n,
                    const std::vector<double>* reduce_flops, ReduceMode reduce = ReduceMode::kKernel);

/// How a pass scales an expert piece: its FLOPs x `flops`, its DRAM bytes x `bytes` plus its share x
/// `share_bytes` (the forward: 1, 1, 0; a backward also writes the piece's weight gradients).
struct PieceScale {
  double flops = 1, bytes = 1, share_bytes = 0;
};
/// The experts phase's compute: one op per (expert, node) piece, or one per node summing its pieces
/// (`grouped`: one kernel), each scaled by `k`.
void expert_ops(LayerSchedule& s, PhaseChain& chain, int ph, const LayerPlan& plan, bool grouped,
                const PieceScale& k = {});

/// An exchange `in`, the expert pieces and an exchange `out` (its destinations summing `reduce_flops`)
/// in `b.moe_chunks` token chunks, Tutel's pipelining (docs/MODEL.md "Chunked MoE blocks"): chunk j's
/// `in` after chunk j - 1's, a node's experts of chunk j after its chunk-j arrivals (each chunk a
/// kernel with its start-up that streams the piece's weights again and does 1 / C of its FLOPs),
/// chunk j's `out` from a node after its chunk-j experts and after chunk j - 1's `out`. Phases closed
/// by barriers as the unchunked ones.
void chunked_moe_block(LayerSchedule& s, PhaseChain& chain, const int phases[3], const std::vector<double>& in,
                       const std::vector<double>& out, const std::vector<double>* reduce_flops, const LayerPlan& plan,
                       const LayerBuild& b, const PieceScale& k = {});

/// One chain of a layer's forward phases (one micro-batch) for `plan`, each phase closed by a barrier,
/// starting after op `start` (-1: at once), every phase name prefixed by `prefix` ("" for the forward
/// itself, "recompute_" for a training step's recomputation). Returns the chain's last barrier.
OpId forward_chain(LayerSchedule& s, const ModelSpec& m, const LayerPlan& plan, const Groups& groups,
                   const LayerBuild& b, const std::string& prefix = "", OpId start = -1);

}  // namespace nmpsim::mapping::layer_phases
