// The work of one step (decode, prefill or mixed) through one layer, as plain numbers: who computes what, and who
// sends how many bytes to whom. Both the SystemC firmware (cycle fidelity) and the analytical
// flow model (flow fidelity) execute the same plan. docs/MODEL.md "MoE layer" explains each phase.
#pragma once

#include <string>
#include <vector>

#include "nmpsim/mapping/moe_model.h"
#include "nmpsim/mapping/placement.h"
#include "nmpsim/mapping/regime.h"
#include "nmpsim/mapping/topology.h"
#include "nmpsim/mapping/trace.h"

namespace nmpsim::mapping {

/// Attention tensor-parallel groups: the mesh cut into equal rectangles, each with a ring order.
struct Groups {
  std::vector<std::vector<int>> ring;  ///< physical nodes of each group, in ring order
  std::vector<int> group_of;           ///< group of each node
  std::vector<int> ring_pos;           ///< position of each node in its group's ring
  int size() const { return static_cast<int>(ring.size()); }
};
/// `group_size` nodes per group (0 = all nodes). Rings are Hamiltonian cycles of the rectangle
/// when one side is even (every ring hop is one mesh hop), otherwise a snake.
Groups make_groups(const Topology& t, int group_size);
/// Groups with the given rings of physical nodes. Throws InputError naming `where` unless the rings
/// partition the `nodes` nodes into equal rings.
Groups groups_with_rings(const std::vector<std::vector<int>>& rings, int nodes, const std::string& where);
/// Checks that `rings` partition the n nodes into rings of equal size and fills each node's ring and
/// (when `pos` is given) its position in it; InputError "<where>: <what>: ..." otherwise.
void index_rings(const std::vector<std::vector<int>>& rings, int n, const std::string& where, const char* what,
                 std::vector<int>& ring_of, std::vector<int>* pos);
/// The groups a run of placement `p` uses: its own layout if it has one (whose group size must be
/// the run's `attn_tp`, 0 = all nodes), else make_groups(t, attn_tp).
Groups groups_for(const Placement& p, const Topology& t, int attn_tp);
/// Ring order of a w x h rectangle starting at (x0, y0).
std::vector<int> ring_order(const Topology& t, int x0, int y0, int w, int h);

struct ExpertWork {
  int expert = 0;
  double tokens = 0;  ///< tokens routed to the expert
  double share = 0;   ///< this node's share of the expert
  double flops = 0;
  double bytes = 0;  ///< weight bytes streamed from DRAM
};

/// One stage of a relayed exchange: its messages [src * nodes + dst] both ways, and the FLOPs each node
/// spends summing the partial results it receives in the combine. Phases "dispatch_<name>" and
/// "combine_<name>"; the last stage's are "dispatch" and "combine".
struct ExchangeStage {
  std::string name;
  std::vector<double> dispatch, combine, reduce_flops;
};

struct LayerPlan {
  int nodes = 0;
  bool dense = false;
  std::vector<int> home;                             ///< per step token: its physical home node
  std::vector<double> home_bytes;                    ///< per node: bytes of its home tokens' hidden states (ring chunk)
  std::vector<double> attn_flops, attn_bytes;        ///< per node (attention; + dense FFN in dense layers)
  std::vector<double> gate_flops, gate_bytes;        ///< per node (at homes)
  std::vector<double> shared_flops, shared_bytes;    ///< per node: shared experts, TP over the attention group
  std::vector<double> dispatch;                      ///< [src * nodes + dst] bytes, home -> expert nodes
  std::vector<double> combine;                       ///< [src * nodes + dst] bytes, expert nodes -> home
  std::vector<std::vector<ExpertWork>> expert_work;  ///< per node
  std::vector<double> partials;                      ///< per home: partial output vectors it reduces
  std::vector<double> reduce_flops;                  ///< per home: FLOPs to sum those partials (hidden per partial)
  std::vector<double> routed_token_work;             ///< per node: sum over routed experts of tokens x share
  /// A relayed exchange (a dispatch planner's): its stages, run in order for the dispatch and in the
  /// reverse order for the combine, replace dispatch, combine and reduce_flops (which are then zero).
  std::vector<ExchangeStage> stages;
  /// Rings over which every node gathers its ring's tokens before the dispatch and reduce-scatters the
  /// partial results after the combine (DispatchPlanner::token_rings); empty: none.
  std::vector<std::vector<int>> token_rings;
  double dispatch_total() const;
  double combine_total() const;
};

class DispatchPlanner;
/// Plans layer `layer` (0-based over all layers; the first model.dense_layers are dense) for the
/// step's tokens, trace tokens [first_token, first_token + step.tokens()) routed token by token.
/// `physical` holds the placement's rows already mapped to physical nodes: [moe layer][expert][node];
/// `rows`, when given, replaces the layer's rows (experts a runtime policy moved). `planner` plans the
/// routed part (null: direct dispatch, mapping/dispatch_planner.h). Homes: request r of the step
/// belongs to group r mod G, and its token j (0-based) to ring position ((r / G) tokens + j) mod g.
LayerPlan plan_layer(const ModelSpec& m, const std::vector<std::vector<std::vector<double>>>& physical, int layer,
                     const RoutingTrace& trace, size_t first_token, const Groups& groups, const StepTokens& step,
                     const DispatchPlanner* planner = nullptr, const std::vector<std::vector<double>>* rows = nullptr);
/// The same for step 0 of `shape`: meant for decode shapes, RunShape{batch, context} (every decode step
/// is alike). A policy plans the current step with ctx.cfg.shape.step(ctx.step).
inline LayerPlan plan_layer(const ModelSpec& m, const std::vector<std::vector<std::vector<double>>>& physical,
                            int layer, const RoutingTrace& trace, size_t first_token, const Groups& groups,
                            const RunShape& shape, const DispatchPlanner* planner = nullptr,
                            const std::vector<std::vector<double>>* rows = nullptr) {
  return plan_layer(m, physical, layer, trace, first_token, groups, shape.step(0), planner, rows);
}
/// Placement rows mapped to physical nodes.
std::vector<std::vector<std::vector<double>>> physical_shares(const Placement& p);

}  // namespace nmpsim::mapping
