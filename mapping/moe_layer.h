// Today's MoE decoder layer as a schedule (docs/MODEL.md "One layer of a decode step"): ring
// all-gather, tensor-parallel attention, ring reduce-scatter, gate, [shared-expert all-gather,
// shared experts, reduce-scatter], dispatch, experts, combine, with a barrier after every phase.
#pragma once

#include "nmpsim/mapping/analytical_hardware.h"
#include "nmpsim/mapping/layer_plan.h"
#include "nmpsim/mapping/schedule.h"

namespace nmpsim::mapping {

/// Phase names this builder uses (policies find their hook points by name).
namespace phase_names {
inline constexpr const char* kAllGather = "allgather";
inline constexpr const char* kAttention = "attention";
inline constexpr const char* kReduceScatter = "reduce_scatter";
inline constexpr const char* kGate = "gate";
inline constexpr const char* kSharedAllGather = "shared_allgather";
inline constexpr const char* kSharedExperts = "shared_experts";
inline constexpr const char* kSharedReduceScatter = "shared_reduce_scatter";
inline constexpr const char* kDispatch = "dispatch";
inline constexpr const char* kExperts = "experts";
inline constexpr const char* kCombine = "combine";
/// With token domains: every TP member gets its group's tokens before dispatch, and the partial
/// results spread over the members are reduced over the TP ring after combine.
inline constexpr const char* kTokenAllGather = "token_allgather";
inline constexpr const char* kPartialReduceScatter = "partial_reduce_scatter";
}  // namespace phase_names

/// How the layer's ops are cut (docs/MODEL.md "Reductions and grouped experts").
struct LayerBuild {
  double element_bytes = 2;                          ///< bytes per element of the reductions
  ReduceMode reduce = ReduceMode::kKernel;           ///< reductions as commands, or fused into the receive
  bool grouped_experts = false;                      ///< one compute op per node for its expert pieces
  RingAlgorithm algorithm = RingAlgorithm::kOneWay;  ///< the groups' all-gathers and reduce-scatters
  /// The hardware, for `2d` (the groups' mesh rectangles) and `auto` (the closed forms); without it
  /// those two run as one-way rings. Set by layer_build; must outlive the build.
  const AnalyticalHardware* hw = nullptr;
  int pipeline_chunks = 1;  ///< attention compute pieces, each reduce-scattered when done
  int moe_chunks = 1;       ///< dispatch, experts and combine in this many token chunks (run's --moe-chunks)
};
/// The build options of hardware `hw` (its element size, reductions and expert kernels).
LayerBuild layer_build(const AnalyticalHardware& hw);

/// The attention phase of `plan` and the reduce-scatter that sums its output, alone, pipelined as
/// b.pipeline_chunks says (docs/MODEL.md "Pipelined collectives"); for tests and benchmarks.
LayerSchedule build_attention_block(const LayerPlan& plan, const Groups& groups, const LayerBuild& b);

/// Builds the layer `plan` describes.
LayerSchedule build_moe_layer(const ModelSpec& m, const LayerPlan& plan, const Groups& groups, const LayerBuild& b);
/// Builds one layer of several micro-batches: one chain of the phases per plan, in the same schedule
/// and under the same phase names, with no dependency between the chains. Each node runs its compute
/// in the order it becomes ready, so one micro-batch's communication overlaps another's compute
/// (two-batch overlap, docs/MODEL.md "Micro-batches and overlap").
LayerSchedule build_moe_layer(const ModelSpec& m, const std::vector<LayerPlan>& plans, const Groups& groups,
                              const LayerBuild& b);
/// With reductions as commands and a command per expert piece; `element_bytes` per element reduced.
inline LayerSchedule build_moe_layer(const ModelSpec& m, const LayerPlan& plan, const Groups& groups,
                                     double element_bytes) {
  return build_moe_layer(m, plan, groups, LayerBuild{element_bytes});
}

/// The barrier (join) that closes `phase` in a schedule built by build_moe_layer, or -1.
OpId phase_barrier(const LayerSchedule& s, int phase);

}  // namespace nmpsim::mapping
