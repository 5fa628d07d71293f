// Logical topology of a system: a W x H mesh of nodes grouped into nested rectangles (dies and wafers,
// or up to five named levels), and the bandwidth / latency / energy of links at each hierarchy level.
// Plain C++ (no SystemC) so that placement algorithms and analytical models can use it directly.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::mapping {

/// At most this many nested levels (die, wafer, system; or device, board, node, rack, pod).
inline constexpr int kMaxLevels = 5;
/// The classic form's levels (die, wafer, system) by index; a general topology names its own.
enum class LinkLevel { kOnDie = 0, kDieToDie = 1, kWaferToWafer = 2 };
inline constexpr int kNumLinkLevels = 3;  ///< levels of the classic form

struct LinkParams {
  double gbytes_per_s = 50.0;  ///< per direction, 1 GB = 1e9 bytes
  double latency_ns = 2.0;
  double pj_per_bit = 0.2;  ///< energy per bit per hop
};

/// One level of the hierarchy: groups of width x height nodes, tiling the group of the level above. The
/// last level is the whole mesh (its width and height are not read: the mesh's are).
struct Level {
  std::string name;  ///< [a-z0-9-], unique: links are named after it ("on-die", "die-to-die")
  int width = 1, height = 1;
};

/// The classic form: dies inside wafers inside the system.
std::vector<Level> classic_levels();

struct Topology {
  int width = 1, height = 1;  ///< mesh size in nodes
  /// Finest first, 2..kMaxLevels of them. `classic`: the levels are die, wafer, system and a hardware
  /// description writes them as die / wafer / links (docs/FORMATS.md), else as a "levels" array.
  std::vector<Level> levels = classic_levels();
  bool classic = true;
  /// links[l]: the links between two mesh neighbours whose finest common group is at level l (for the
  /// classic form: on-die, die-to-die, wafer-to-wafer). Entries from levels.size() on are unused.
  std::array<LinkParams, kMaxLevels> links{};

  int nodes() const { return width * height; }
  int x(int node) const { return node % width; }
  int y(int node) const { return node / width; }
  int id(int x, int y) const { return y * width + x; }
  int num_levels() const { return static_cast<int>(levels.size()); }
  /// A level's group size (the last level: the mesh's).
  int level_width(int level) const { return level + 1 == num_levels() ? width : levels[level].width; }
  int level_height(int level) const { return level + 1 == num_levels() ? height : levels[level].height; }
  /// Row-major index of the level's group holding `node`, and the number of such groups.
  int group_of(int node, int level) const;
  int groups(int level) const { return (width / level_width(level)) * (height / level_height(level)); }
  /// The finest level (a die) and the coarsest below the whole system (a wafer); the same when there
  /// are two levels.
  Level& die() { return levels.front(); }
  const Level& die() const { return levels.front(); }
  Level& wafer() { return levels[levels.size() - 2]; }
  const Level& wafer() const { return levels[levels.size() - 2]; }
  int die_of(int node) const { return group_of(node, 0); }
  int wafer_of(int node) const { return group_of(node, num_levels() - 2); }
  int dies() const { return groups(0); }
  int wafers() const { return groups(num_levels() - 2); }
  bool same_die(int a, int b) const { return die_of(a) == die_of(b); }
  bool same_wafer(int a, int b) const { return wafer_of(a) == wafer_of(b); }
  /// Level of the link between two mesh neighbours: the finest level whose group holds both.
  int level_of_link(int a, int b) const;
  LinkLevel link_level(int a, int b) const { return static_cast<LinkLevel>(level_of_link(a, b)); }
  const LinkParams& link(int a, int b) const { return links[level_of_link(a, b)]; }
  /// A level's links by name: "on-<finest>" at level 0, "<below>-to-<below>" above ("on-die",
  /// "die-to-die", "wafer-to-wafer" in the classic form); key: the same with '_' for '-'.
  std::string link_name(int level) const;
  std::string link_key(int level) const;
  /// The hardware description's object holding a level's link fields: "links.die_to_die" (classic),
  /// "levels.2.link".
  std::string link_field(int level) const;
  int hops(int a, int b) const;
  /// Throws std::invalid_argument (one line, prefixed by `where`) if sizes do not nest.
  void validate(const std::string& where) const;
};

/// Directions of a node's outgoing links: link [node * 4 + dir]; y grows southwards.
enum LinkDir { kNorth = 0, kEast = 1, kSouth = 2, kWest = 3 };
/// The step in x and in y of each LinkDir.
inline constexpr int kDirDx[4] = {0, 1, 0, -1}, kDirDy[4] = {-1, 0, 1, 0};
/// The node that `node`'s link in direction `dir` leads to, or -1 at the mesh's edge.
inline int neighbour(const Topology& t, int node, int dir) {
  const int x = t.x(node) + kDirDx[dir], y = t.y(node) + kDirDy[dir];
  return x >= 0 && y >= 0 && x < t.width && y < t.height ? t.id(x, y) : -1;
}

/// Walks the XY path from s to d (x first, then y), calling f(from, to, dir) for every hop.
template <class F>
void walk_xy(const Topology& t, int s, int d, F&& f) {
  int x = t.x(s), y = t.y(s);
  while (x != t.x(d)) {
    const int nx = x + (t.x(d) > x ? 1 : -1);
    f(t.id(x, y), t.id(nx, y), nx > x ? kEast : kWest);
    x = nx;
  }
  while (y != t.y(d)) {
    const int ny = y + (t.y(d) > y ? 1 : -1);
    f(t.id(x, y), t.id(x, ny), ny > y ? kSouth : kNorth);
    y = ny;
  }
}

/// The slowest link's bandwidth on the XY path from s to d, GB/s (0 when s == d).
double path_gbytes_per_s(const Topology& t, int s, int d);

}  // namespace nmpsim::mapping
