// MoEntwine (Sec. IV): where attention TP groups and full token domains (FTDs) lie on the mesh, for
// the baseline mapping and the entwined-ring (ER) mapping, and the figures that compare them.
// Plain C++. docs/MODEL.md "MoEntwine: token domains" has the reconstructions.
#pragma once

#include <string>
#include <vector>

#include "nmpsim/mapping/layer_plan.h"
#include "nmpsim/mapping/topology.h"

namespace nmpsim::methods::moentwine {

/// A block of w x h nodes that tiles the mesh.
struct BlockShape {
  int w = 1, h = 1;
};

/// The block of `n` nodes a x b = n with a | width and b | height: as square as possible (smallest
/// |a - b|), then with a block grid that has an even side (so a ring through the blocks has 1-block
/// steps), then wider. The paper's figure for this rule is lost; this is our reconstruction.
/// Throws InputError when no such block exists.
BlockShape block_shape(int width, int height, int n);

enum class Mapping {
  kBaseline,      ///< each TP group a compact block; FTD j = the nodes at offset j of every block
  kEntwined,      ///< each FTD a compact block of DP nodes; TP group j = the nodes at offset j of every block
  kHierarchical,  ///< HER: ER inside every wafer; each wafer one FTD, fed by an all-gather across wafers
};
const char* mapping_name(Mapping m);

/// Attention TP groups (as rings) and the full token domains they form.
struct TokenDomains {
  mapping::Groups tp;                 ///< TP groups, members in ring order
  std::vector<std::vector<int>> ftd;  ///< FTD members; FTD j holds one member of every TP group
  std::vector<int> ftd_of;            ///< each node's FTD
  /// HER: the rings of the token all-gather (same-position dies of every wafer); empty: the TP rings.
  std::vector<std::vector<int>> token_rings;
};

/// `tp` nodes per attention TP group on the mesh of `t` (tp must divide the node count; for HER, the
/// nodes of one wafer).
TokenDomains token_domains(const mapping::Topology& t, int tp, Mapping m);

/// The figures that compare mappings (issue 14: "stats.ftd" of a placement file).
struct FtdStats {
  int area = 0;                          ///< nodes in an FTD's bounding box (the largest)
  double avg_hops = 0;                   ///< mean Manhattan distance over ordered member pairs of all FTDs
  bool overlap = false;                  ///< whether two FTDs' bounding boxes intersect
  int max_link_pair_loads = 0;           ///< busiest directed link under uniform all-to-all inside FTDs (XY)
  int ring_step_hops = 0;                ///< longest step of a TP ring (Manhattan distance)
  int pair_hops_through_other_ftds = 0;  ///< hops of that all-to-all on links not between two of its FTD's members
};
FtdStats ftd_stats(const mapping::Topology& t, const TokenDomains& d);

}  // namespace nmpsim::methods::moentwine
