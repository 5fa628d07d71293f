// HierMoE's hierarchical all-to-all at run time, as the runtime policy "hiermoe" that HierMoE's
// placements carry (Placement::runtime): on first use it builds the hierarchy and takes every kind of
// all-to-all's cost fitted on the flow-level NoC (level_fit.h, once per process and hardware);
// before every MoE layer it picks d* from the batch's routing (Algorithm 1) or uses a fixed d, and
// asks the layer for that hierarchical all-to-all. With swap_every > 0 it also runs HierD-ES online
// (online_swap.h) and moves the swapped experts' weights as background traffic. Its statistics (summary.json
// "policies":
// {"hiermoe": ...}): per level its groups, duplication rate, alpha and beta; d* per MoE layer.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nmpsim/mapping/registry.h"
#include "nmpsim/mapping/runtime_policy.h"
#include "nmpsim/methods/common/hierarchy.h"
#include "nmpsim/methods/hiermoe/dedup.h"
#include "nmpsim/methods/hiermoe/hier_alltoall.h"
#include "nmpsim/methods/hiermoe/online_swap.h"

namespace nmpsim::methods::hiermoe {

struct AlltoallOptions {
  int virtual_levels = 0;       ///< quadrant levels (common::make_hierarchy)
  int dimension = 0;            ///< d of every layer; 0 = d* per layer (Eq. 6)
  bool dedup = true;            ///< false: one copy per expert (the 2DH baseline)
  bool select_by_flow = false;  ///< d* by replaying the layer at every d on the flow model (ours), not Eq. 6
  OnlineSwapOptions swap;       ///< online HierD-ES (swap.every = 0: off)
};
AlltoallOptions alltoall_options(const nlohmann::json& j, const std::string& where);
nlohmann::json to_json(const AlltoallOptions& o);

class AlltoallPolicy : public mapping::RuntimePolicy {
 public:
  explicit AlltoallPolicy(AlltoallOptions o) : opt_(o) {}
  void on_step_start(mapping::PolicyContext& ctx) override;
  void before_plan(mapping::PolicyContext& ctx, mapping::LayerInputs& in) override;
  void before_layer(mapping::PolicyContext& ctx, mapping::LayerSchedule& s) override;
  /// Training: the step's swaps move each expert with its optimizer state after the source's update.
  void before_optimizer(mapping::PolicyContext& ctx, mapping::LayerSchedule& s,
                        const std::vector<mapping::OpId>& adam) override;
  nlohmann::json stats() const override;
  /// The hierarchical all-to-all is a plan (its stages mirror in the backward); swaps move after the
  /// optimizer.
  bool trains() const override { return true; }

 private:
  void init(const mapping::PolicyContext& ctx);
  /// The step's copies on phase `ph`, each after its two nodes' updates in `adam` (empty: at once).
  void move_copies(mapping::LayerSchedule& s, int ph, const std::vector<mapping::OpId>& adam) const;
  /// The d whose layer is fastest when replayed on the flow-level executor.
  int fastest_on_flow(const mapping::PolicyContext& ctx, const mapping::LayerInputs& in) const;
  AlltoallOptions opt_;
  bool ready_ = false;
  common::Hierarchy h_;
  std::optional<HierarchicalDispatch> planner_;  ///< the current layer's (d > 1)
  HierarchyCosts costs_;
  OnlineSwap online_;            ///< expert slots now, and the online swap rounds
  double moved_bytes_ = 0;       ///< what one expert's move carries
  std::vector<double> dup_sum_;  ///< per level: duplication rates summed over layers seen
  double node_dup_sum_ = 0;      ///< the same at one group per node (deduplicated per node, as `ep`)
  int layers_seen_ = 0;
  std::vector<std::vector<int>> d_counts_;  ///< [moe layer][d - 1]: how often d was chosen
};

/// Registers the policy "hiermoe".
void register_alltoall(mapping::Registry& r);

}  // namespace nmpsim::methods::hiermoe
