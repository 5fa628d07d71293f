// HybridEP's domain-based partition (Sec. IV-A): the multilevel description of the hardware
// hierarchy (scaling factors SF^l), the location renumbering of Eq. 13, Algorithm 1's communication
// type of a node pair at a level, the pair counts per level, and where a token is served when every
// node holds the experts of its domain box. Plain C++. docs/MODEL.md "HybridEP: domains".
#pragma once

#include <string>
#include <vector>

#include "nmpsim/methods/common/hierarchy.h"

namespace nmpsim::methods::hybridep {

/// Levels coarse to fine: SF^0 workers at level 0 (e.g. wafers), each made of SF^1 sub-workers, ...,
/// the last level's workers are nodes. Global index m = hierarchical rank.
struct Levels {
  std::vector<int> sf;  ///< scaling factors; their product is the node count
  int count() const { return static_cast<int>(sf.size()); }
  int nodes() const;
};
/// One level per dimension of `h` (its inter levels, then the nodes of the finest group).
Levels levels_of(const common::Hierarchy& h);

/// Eq. 13: x_i = floor(m / prod_{j > i} SF^j) mod SF^i.
std::vector<int> locate(const Levels& lv, int m);
/// The inverse: the global index of location x.
int index_of(const Levels& lv, const std::vector<int>& x);

enum class Comm { kNone, kAllGather, kAllToAll };
/// Algorithm 1, with the reading of line 8: m and n agree on every level but l; then the
/// same domain (floor(x_l / S)) and a different offset (x_l mod S) is an all-gather pair, a different
/// domain and the same offset an all-to-all pair, anything else no traffic.
Comm comm_type(const Levels& lv, const std::vector<int>& sed, int m, int n, int l);

struct LevelPairs {
  int sed = 1;
  long long a2a_pairs = 0, ag_pairs = 0;  ///< ordered pairs (m, n) that exchange at this level
};
/// Every level's ordered pair counts by Algorithm 1 (O(G^2 L)).
std::vector<LevelPairs> pair_counts(const Levels& lv, const std::vector<int>& sed);

/// Throws InputError naming `where` unless sed has one entry per level, each dividing its SF.
void check_sed(const Levels& lv, const std::vector<int>& sed, const std::string& where);
/// Nodes whose experts every node holds: prod_l S^l (its domain box).
int box_size(const std::vector<int>& sed);
/// Where a token of home rank h is served for a piece of an expert native to rank v: the member of
/// v's domain box at h's offsets (x_l = S^l floor(x_l(v) / S^l) + x_l(h) mod S^l at every level).
int serving_rank(const Levels& lv, const std::vector<int>& sed, int h, int v);
/// The divisors of n, ascending.
std::vector<int> divisors(int n);

}  // namespace nmpsim::methods::hybridep
