// The hardware hierarchy as groups of nodes (HierMoE, issue 15): a hierarchical rank of every node
// (wafer, then virtual quadrants, then die, then node; row-major inside each level), so that every
// level's groups are contiguous rank ranges, and the list of levels with their group counts
// U[1..D-1] (U[0] = 1, the whole system, is implicit). Plain C++. docs/MODEL.md "Hierarchy".
#pragma once

#include <string>
#include <vector>

#include "nmpsim/mapping/placement.h"
#include "nmpsim/mapping/topology.h"

namespace nmpsim::methods::common {

using mapping::ModelSpec;
using mapping::Placement;
using mapping::Topology;

struct HierarchyLevel {
  std::string name;  ///< "wafer", "die", "quadrant-1", ...
  int groups = 1;    ///< U[i]: groups of nodes at this level, over the whole system
};

struct Hierarchy {
  std::vector<int> rank_of;            ///< node -> hierarchical rank
  std::vector<int> node_at;            ///< rank -> node
  std::vector<HierarchyLevel> levels;  ///< inter levels 1..D-1, coarse to fine (D = levels + 1)
  int nodes() const { return static_cast<int>(rank_of.size()); }
  int dimensions() const { return static_cast<int>(levels.size()) + 1; }  ///< D
  /// Nodes per group at level i (1-based over levels; level 0 is the whole system).
  int group_size(int level) const { return nodes() / (level == 0 ? 1 : levels[level - 1].groups); }
  /// The group of `node` at level i (1-based; level 0: group 0).
  int group_of(int node, int level) const { return rank_of[static_cast<size_t>(node)] / group_size(level); }
  /// The node at position `pos` (rank offset) of group g at level i.
  int member(int level, int g, int pos) const { return node_at[static_cast<size_t>(g * group_size(level) + pos)]; }
};

/// The hierarchy of a topology: a "wafer" level when there are several wafers, then `virtual_levels`
/// recursive 2x2 quadrant levels inside the finest real group (a wafer whose dies are single nodes,
/// or a die of several nodes), then a "die" level when dies hold several nodes and there are several.
/// Levels whose groups are single nodes are left out. Throws InputError naming `where` when a
/// quadrant split does not divide the group evenly.
Hierarchy make_hierarchy(const Topology& t, int virtual_levels, const std::string& where = "hierarchy");

/// EP in hierarchical rank order (HierMoE's and HybridEP's layout): per layer, expert e in slot
/// slots[l][e] (identity when `slots` is null); with E >= G slot s on the node of rank s / (E / G),
/// with E < G slot s split evenly over ranks [s G / E, (s + 1) G / E). Throws InputError naming
/// `where` unless one of E and G divides the other.
Placement ep_by_rank(const ModelSpec& m, const Hierarchy& h, const std::string& strategy, const std::string& where,
                     const std::vector<std::vector<int>>* slots = nullptr);

}  // namespace nmpsim::methods::common
