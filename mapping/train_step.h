// A training step on the layer schedules (docs/MODEL.md "Training step"): the forward is the prefill
// schedule of every layer; the backward mirrors each layer's phases in reverse order with twice the
// FLOPs, its all-to-alls transposed and its collectives swapped (an all-gather's gradient is a
// reduce-scatter and the other way round); each layer's weight gradients are reduced over their copies
// on a background stream that overlaps the backward of the layers before it; the optimizer then
// updates every node's parameters in one command. Plain C++.
#pragma once

#include <vector>

#include "nmpsim/mapping/moe_layer.h"
#include "nmpsim/mapping/run_result.h"

namespace nmpsim::mapping {

/// Phase names of a training step (the backward's are "bwd_" + the forward phase they mirror, the
/// recomputation's "recompute_" + it).
namespace train_phases {
inline constexpr const char* kBackwardPrefix = "bwd_";
inline constexpr const char* kRecomputePrefix = "recompute_";
inline constexpr const char* kGradSync = "grad_sync";           ///< background, family allreduce
inline constexpr const char* kGradSyncWait = "grad_sync_wait";  ///< the optimizer waiting for it
inline constexpr const char* kOptimizer = "optimizer";
}  // namespace train_phases

/// FLOPs of one AdamW update per parameter (docs/MODEL.md "Training step": 16, counted op by op).
inline constexpr double kAdamFlopsPerParam = 16;
// optimizer_state_bytes, optimizer_dram_bytes and train_activation_bytes_per_token: mapping/moe_model.h.
/// Model FLOPs of one step's forward over all layers (attention with its projections, the gate, the
/// routed and shared experts, dense FFNs; no reductions): a training step's model FLOPs are 3x this.
double forward_flops(const ModelSpec& m, const StepTokens& step);

/// Where a training step's time went, from its records (forward layers, backward layers, optimizer;
/// run_placement's order). Seconds per step, averaged over steps. optimizer_s: the last record after
/// the gradient wait (the updates, and what a policy runs after them).
struct TrainTimes {
  double forward_s = 0, backward_s = 0, recompute_s = 0, grad_sync_s = 0, optimizer_s = 0;
};
/// Zero when the result is not a training run's (its steps do not have 2L + 1 records).
TrainTimes train_times(const StrategyResult& r, int layers);

/// What one layer's backward is built with.
struct BackwardBuild {
  bool recompute = false;  ///< run the layer's forward again first (phases "recompute_*")
  /// Ring order of all nodes (the gate's gradients, replicated on every node, are all-reduced over it);
  /// empty: node order.
  std::vector<int> all_nodes_ring;
};

/// The backward of one layer of every micro-batch's plan (mapping/moe_layer.h's forward, mirrored), then
/// its gradient synchronisation on stream 1: a ring all-reduce (reduce-scatter, all-gather; fused
/// adds) of the attention group's weight shards over the groups holding the same shard, and of the
/// gate over every node. `sync_joins` (if given) receives the ops that end the synchronisation,
/// `chain_ends` the ends of the micro-batches' backward chains (the gradients complete).
LayerSchedule build_moe_layer_backward(const ModelSpec& m, const std::vector<LayerPlan>& plans, const Groups& groups,
                                       const LayerBuild& b, const BackwardBuild& t,
                                       std::vector<OpId>* sync_joins = nullptr, DepList* chain_ends = nullptr);

/// Parameters each physical node holds: its attention group share of attention, dense FFN and shared
/// experts, the gate, and its shares of the routed experts (`physical` as plan_layer takes it).
std::vector<double> node_parameters(const ModelSpec& m, const std::vector<std::vector<std::vector<double>>>& physical,
                                    const Groups& groups);

/// The step's last schedule: phase grad_sync_wait waits for every layer's synchronisation (`syncs`,
/// ops of earlier schedules), then every node with parameters runs one AdamW command over them
/// (kAdamFlopsPerParam FLOPs and optimizer_dram_bytes() per parameter). `adam` (if given) receives
/// each node's update op (-1: none).
LayerSchedule build_optimizer_step(const ModelSpec& m, const std::vector<double>& params_per_node,
                                   const std::vector<OpRef>& syncs, std::vector<OpId>* adam = nullptr);

/// Gradient collectives for phase `ph` after `deps`, with fused adds (they run on the reducers, which
/// a background stream may use), by `hw`'s `collectives.gradients` (without it: both ways round the
/// ring from 3 members); both return the joins of their last steps.
/// A ring all-reduce of `bytes` held by every member of `ring`: a reduce-scatter of bytes / g per
/// member, then an all-gather (both ways round the ring from 3 members).
DepList add_gradient_all_reduce(LayerSchedule& s, int ph, const std::vector<int>& ring, double bytes,
                                double element_bytes, const DepList& deps, const AnalyticalHardware* hw = nullptr);
/// A ring reduce-scatter: member k ends with the sum over the ring of chunk k (`chunk_bytes[k]`), as
/// the owner of a piece whose copies computed gradients does.
DepList add_gradient_reduce_scatter(LayerSchedule& s, int ph, const std::vector<int>& ring,
                                    const std::vector<double>& chunk_bytes, double element_bytes, const DepList& deps,
                                    const AnalyticalHardware* hw = nullptr);

}  // namespace nmpsim::mapping
