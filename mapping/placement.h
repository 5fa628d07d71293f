// Placement: per MoE layer, the share P[e][n] in [0, 1] of expert e's work done by logical node n
// (each expert's shares sum to 1), plus the logical-to-physical node map. Rows are the routed experts;
// shared experts run tensor-parallel inside each attention group (docs/MODEL.md). JSON: docs/FORMATS.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/mapping/moe_model.h"
#include "nmpsim/mapping/node_id.h"
#include "nmpsim/mapping/topology.h"
#include "nmpsim/mapping/trace.h"

namespace nmpsim::mapping {

/// Every field but `strategy`, `solver` and `stats` shapes the simulation: apps/experiment.cpp's
/// same_simulation() compares them to simulate identical placements once; a new field goes there too.
struct Placement {
  std::string strategy;
  int experts = 0;  ///< rows: routed experts
  int nodes = 0;
  std::vector<std::vector<double>> share;            ///< [layer][expert * nodes + logical node]
  std::vector<PhysicalNode> node_map;                ///< [logical node] -> physical node
  nlohmann::json solver = nlohmann::json::object();  ///< optional solver statistics
  nlohmann::json stats = nlohmann::json::object();   ///< optional figures of the placement (e.g. "ftd")
  /// Optional attention layout: TP groups as rings of physical nodes. Empty: compact groups of the
  /// run's --attn-tp.
  std::vector<std::vector<int>> tp_rings;
  /// Optional dispatch planner the placement's tokens travel by: {"name", "options"} (a registered
  /// planner, Registry::make_planner). Empty: direct dispatch from home.
  nlohmann::json dispatch = nlohmann::json::object();
  /// Runtime policies the placement needs, run with it whatever the run's --policy list says (e.g.
  /// a hierarchical all-to-all): {"name", "options"} each.
  nlohmann::json runtime = nlohmann::json::array();

  Placement() = default;
  Placement(std::string strategy, int experts, int nodes, int layers);
  int layers() const { return static_cast<int>(share.size()); }
  double at(int l, int e, int n) const { return share[l][static_cast<size_t>(e) * nodes + n]; }
  double& at(int l, int e, int n) { return share[l][static_cast<size_t>(e) * nodes + n]; }
  /// Where logical node n sits on the mesh.
  PhysicalNode physical(LogicalNode n) const { return node_map[static_cast<size_t>(n.value())]; }
  /// Logical node n on physical node n, for every n.
  void set_identity_map();
  /// Share of expert e on each physical node.
  std::vector<double> physical_row(int l, int e) const;
  /// Throws InputError naming `where`, the layer and the expert on any violation.
  void validate(const std::string& where) const;
  /// Checks the placement fits the model: layer count and expert rows.
  void check_against(const ModelSpec& m, const std::string& where) const;
};

/// Largest placement held in memory: 4 GiB of shares (layers x experts x nodes doubles).
inline constexpr size_t kMaxPlacementBytes = size_t{4} << 30;

nlohmann::json placement_to_json(const Placement& p);
Placement placement_from_json(const nlohmann::json& j, const std::string& where);
Placement load_placement(const std::string& path);

/// Bytes each physical node must hold: its expert shares, its part of attention (split over its
/// attention TP group of `attn_tp` nodes), the gate, its part of the KV cache and, in steps that carry
/// prompt tokens, the live activations of one layer; a training step instead the weights' gradients,
/// the optimizer state and the activations every layer keeps for the backward (docs/MODEL.md
/// "Capacity" and "Training step").
struct MemoryDemand {
  std::vector<double> bytes_per_node;
  double max_bytes = 0;
  int max_node = 0;
  double kv_bytes = 0;          ///< per node (the same on every node)
  double activation_bytes = 0;  ///< per node (the same on every node)
  /// Training: the gradients and the optimizer state of max_node (proportional to its weights).
  double gradient_bytes = 0, optimizer_bytes = 0;
};
/// For steps of `shape` (every step's KV cache and prompt: the largest of the run).
MemoryDemand memory_demand(const Placement& p, const ModelSpec& m, int attn_tp, const RunShape& shape);
/// For decode steps of `batch` tokens over a KV cache of `context` tokens.
inline MemoryDemand memory_demand(const Placement& p, const ModelSpec& m, int attn_tp, int batch, int context) {
  return memory_demand(p, m, attn_tp, RunShape{batch, context});
}
/// Throws InputError "placement 'ep' of M needs X GiB on node N (x,y) (weights W, KV cache K,
/// activations A GiB), which has Y GiB" if it does not fit.
void check_memory(const Placement& p, const ModelSpec& m, const Topology& t, double capacity_bytes, int attn_tp,
                  const RunShape& shape);
inline void check_memory(const Placement& p, const ModelSpec& m, const Topology& t, double capacity_bytes, int attn_tp,
                         int batch, int context) {
  check_memory(p, m, t, capacity_bytes, attn_tp, RunShape{batch, context});
}

// Baseline strategies.
Placement make_tp(const ModelSpec& m, int nodes);
/// Whole experts round-robin; when nodes > experts, the nodes form `experts` equal groups and each
/// expert is split evenly across its group.
Placement make_ep(const ModelSpec& m, int nodes);
/// Hybrid TP-EP, compute-balanced (HD-MoE's baseline): the mesh is cut into `regions` equal
/// rectangles; each layer's experts are assigned to regions by greedy longest-processing-time on
/// their activation frequency in `profile` (at most ceil(E / regions) per region); TP inside a region.
Placement make_cb(const ModelSpec& m, const Topology& t, const RoutingTrace& profile, int regions);
/// HD-MoE's choice of regions: 2 for models with at most 8 experts, else 8; reduced until it tiles the mesh.
int default_cb_regions(const ModelSpec& m, const Topology& t);
/// Region id of each node when the mesh is cut into `regions` equal rectangles; throws if impossible.
std::vector<int> mesh_regions(const Topology& t, int regions);

}  // namespace nmpsim::mapping
