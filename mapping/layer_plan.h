// The work of one decode step through one layer, as plain numbers: who computes what, and who
// sends how many bytes to whom. Both the SystemC firmware (cycle fidelity) and the analytical
// flow model (flow fidelity) execute the same plan. docs/MODEL.md "MoE layer" explains each phase.
#pragma once

#include <string>
#include <vector>

#include "mapping/hier_alltoall.h"
#include "mapping/moe_model.h"
#include "mapping/placement.h"
#include "mapping/topology.h"
#include "mapping/trace.h"

namespace nmpsim::mapping {

/// Attention tensor-parallel groups: the mesh cut into equal rectangles, each with a ring order.
struct Groups {
  std::vector<std::vector<int>> ring;  ///< physical nodes of each group, in ring order
  std::vector<int> group_of;           ///< group of each node
  std::vector<int> ring_pos;           ///< position of each node in its group's ring
  /// Optional full token domains (MoEntwine). Before dispatch every node gathers the tokens of its
  /// token ring (the TP ring, or HER's ring of same-position dies across wafers); a token then
  /// reaches an expert from its token ring's member in the expert's domain, and the partial results
  /// are reduced over the token ring (docs/MODEL.md "Token domains in the layer"). Empty: from home.
  std::vector<int> domain_of;                   ///< each node's domain
  std::vector<std::vector<int>> token_ring;     ///< rings of the token all-gather, in ring order
  std::vector<int> token_ring_of;               ///< each node's token ring
  std::vector<std::vector<int>> domain_member;  ///< [token ring][domain] -> its member there
  int size() const { return static_cast<int>(ring.size()); }
  bool has_domains() const { return !domain_of.empty(); }
};
/// `group_size` nodes per group (0 = all nodes). Rings are Hamiltonian cycles of the rectangle
/// when one side is even (every ring hop is one mesh hop), otherwise a snake.
Groups make_groups(const Topology& t, int group_size);
/// Groups with the given TP rings, token rings (empty: the TP rings) and token domains (physical
/// nodes). Throws InputError naming `where` unless both ring sets partition the nodes into equal
/// rings and every domain holds exactly one member of every token ring.
Groups groups_with_domains(const std::vector<std::vector<int>>& tp_rings,
                           const std::vector<std::vector<int>>& token_rings, const std::vector<int>& domain_of,
                           const std::string& where);
/// The groups a run of placement `p` uses: its own layout if it has one (whose group size must be
/// the run's `attn_tp`, 0 = all nodes), else make_groups(t, attn_tp).
Groups groups_for(const Placement& p, const Topology& t, int attn_tp);
/// Ring order of a w x h rectangle starting at (x0, y0).
std::vector<int> ring_order(const Topology& t, int x0, int y0, int w, int h);

struct RunShape {
  int batch = 64;
  int context = 1024;  ///< KV-cache length each token attends over
};

struct ExpertWork {
  int expert = 0;
  double tokens = 0;  ///< tokens routed to the expert
  double share = 0;   ///< this node's share of the expert
  double flops = 0;
  double bytes = 0;  ///< weight bytes streamed from DRAM
};

struct LayerPlan {
  int nodes = 0;
  bool dense = false;
  std::vector<int> home;                             ///< per batch token: its physical home node
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
  /// A hierarchical all-to-all (HierDispatch with d > 1): its stages replace dispatch, combine and
  /// reduce_flops (which are then zero).
  std::vector<HierStage> stages;
  double dispatch_total() const;
  double combine_total() const;
};

/// HD-MoE's communication-efficient dispatch (Sec. IV-D3): experts with full copies on some nodes
/// (after a pre-broadcast) send each token wholly to the least-loaded node holding a copy.
struct DynamicDispatch {
  std::vector<std::vector<int>> full_copies;  ///< per expert: physical nodes holding all of it (empty: none)
  double peak_flops = 5e12, memory_bytes_per_s = 593.75e9;
};

/// Plans layer `layer` (0-based over all layers; the first model.dense_layers are dense) for the
/// batch of tokens [first_token, first_token + batch) of the trace. `physical` holds the placement's
/// rows already mapped to physical nodes: [moe layer][expert][node]; `rows`, when given, replaces
/// the layer's rows (experts a runtime policy moved). `serve`, when given, holds fixed copies
/// (HybridEP's expert domains): the piece of an expert on node v that a token of home h uses is
/// computed at serve[v * nodes + h], which streams the piece's weights itself.
LayerPlan plan_layer(const ModelSpec& m, const std::vector<std::vector<std::vector<double>>>& physical, int layer,
                     const RoutingTrace& trace, size_t first_token, const Groups& groups, const RunShape& shape,
                     const DynamicDispatch* dynamic = nullptr, const HierDispatch* hier = nullptr,
                     const std::vector<std::vector<double>>* rows = nullptr, const std::vector<int>* serve = nullptr);
/// Placement rows mapped to physical nodes.
std::vector<std::vector<std::vector<double>>> physical_shares(const Placement& p);

}  // namespace nmpsim::mapping
