// HierMoE's online expert swap (Sec. IV-C adapted; issue 15): the slot of every expert as the
// layer's shares place it (hierarchical rank order), and the online HierD-ES the runtime policy
// "hiermoe" runs every `every` steps on the routing of the last `window` steps. A swap is taken only
// when its predicted all-to-all saving over `horizon_steps` steps exceeds its migration time; its two
// experts' weights then move (inference: as background traffic during the step; training: with their
// optimizer state after the step's optimizer) and the layer routes by the new positions from the next
// step. Plain C++. docs/MODEL.md "HierMoE: online swap".
#pragma once

#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/flow/flow_model.h"
#include "nmpsim/methods/common/hierarchy.h"
#include "nmpsim/methods/hiermoe/dedup.h"
#include "nmpsim/methods/hiermoe/swap.h"

namespace nmpsim::methods::hiermoe {

/// Per sub-expert (expert e x span + j, span = max(1, nodes / experts)) its slot: the hierarchical
/// rank of its node times the slots per node, plus its order among the node's sub-experts. Throws
/// InputError naming `where` unless every node holds the same number of whole (sub-)experts.
std::vector<int> slots_from_rows(const common::Hierarchy& h, const std::vector<std::vector<double>>& rows,
                                 const std::string& where);

struct OnlineSwapOptions {
  int every = 0;              ///< steps between swap rounds (0 = off)
  int window = 0;             ///< steps of routing a round looks at (0 = `every`)
  double horizon_steps = 64;  ///< a swap must pay its migration back within this many steps
  int max_swaps = 2;          ///< per layer per round
  double gamma = 10;          ///< smooth-max exponent (Eq. 11)
};

struct PlannedSwap {
  int moe_layer = 0, expert_a = 0, expert_b = 0, node_a = 0, node_b = 0;
  double saving_s_per_step = 0;  ///< predicted, at the round's d
  double migration_s = 0;        ///< predicted: both copies in parallel, idle links
};

class OnlineSwap {
 public:
  OnlineSwap() = default;
  /// `rows`: the placement's shares [moe layer][expert][node]; experts must be whole on single nodes.
  /// `moved_bytes`: what one expert's move carries (its weights; in training also its optimizer
  /// state); `passes`: the layer's all-to-alls per step (training: forward and backward, 2).
  OnlineSwap(OnlineSwapOptions o, const common::Hierarchy& h, const HierarchyCosts& c,
             std::vector<std::vector<std::vector<double>>> rows, int top_k, double token_bytes, double moved_bytes,
             const mapping::AnalyticalHardware& hw, int passes = 1);
  bool enabled() const { return opt_.every > 0; }
  /// One step's routing of MoE layer `ml` (expert ids, top_k per token).
  void observe(int ml, const std::vector<uint16_t>& ids);
  /// At a step's start: the swaps that moved during the previous step take effect; on every
  /// `every`-th step a round is planned. Returns the swaps whose weights move during this step.
  const std::vector<PlannedSwap>& start_step(int step);
  struct Copy {
    int moe_layer = 0, expert = 0, from = 0, to = 0;
  };
  /// The weight copies of this step's swaps: one per expert whose node the round changed, from the
  /// node it serves on now to its node after all the round's swaps of its layer.
  const std::vector<Copy>& copies() const { return copies_; }
  const std::vector<std::vector<double>>& rows(int ml) const { return rows_[static_cast<size_t>(ml)]; }
  /// Sub-expert slots of MoE layer `ml` now (slots_from_rows of rows(ml)).
  const std::vector<int>& slots(int ml) const { return slots_[static_cast<size_t>(ml)]; }
  bool moved(int ml) const { return swaps_per_layer_[static_cast<size_t>(ml)] > 0; }
  nlohmann::json stats() const;

 private:
  void plan_round();
  double migration_s(int a, int b) const;
  OnlineSwapOptions opt_;
  const common::Hierarchy* h_ = nullptr;
  const HierarchyCosts* costs_ = nullptr;
  const mapping::AnalyticalHardware* hw_ = nullptr;
  double token_bytes_ = 0, moved_bytes_ = 0;  ///< moved_bytes_: what one copy carries
  int top_k_ = 0, passes_ = 1;
  std::vector<std::vector<std::vector<double>>> rows_;   ///< [moe layer][expert][node], now
  std::vector<std::vector<int>> slots_;                  ///< [moe layer][expert]
  std::vector<std::deque<std::vector<uint16_t>>> seen_;  ///< [moe layer]: the last `window` steps' ids
  std::vector<PlannedSwap> moving_;
  std::vector<Copy> copies_;
  int step_ = 0;
  nlohmann::json moves_ = nlohmann::json::array();  ///< every copy: step, moe_layer, expert, from_node, to_node
  // Statistics.
  int rounds_ = 0, rejected_ = 0;
  std::vector<int> swaps_per_layer_;
  double migration_bytes_ = 0, saving_s_per_step_ = 0, migration_s_ = 0;
};

}  // namespace nmpsim::methods::hiermoe
