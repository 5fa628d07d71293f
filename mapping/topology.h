// Logical topology of a system: a W x H mesh of nodes grouped into dies and wafers, and the
// bandwidth / latency / energy of links at each hierarchy level. Plain C++ (no SystemC) so that
// placement algorithms and analytical models can use it directly.
#pragma once

#include <array>
#include <string>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::mapping {

/// The highest hierarchy boundary a link crosses.
enum class LinkLevel { kOnDie = 0, kDieToDie = 1, kWaferToWafer = 2 };
inline constexpr int kNumLinkLevels = 3;
const char* link_level_name(LinkLevel l);
/// Its key in a hardware description's "links" object: "on_die", "die_to_die", "wafer_to_wafer".
const char* link_level_key(LinkLevel l);

struct LinkParams {
  double gbytes_per_s = 50.0;  ///< per direction, 1 GB = 1e9 bytes
  double latency_ns = 2.0;
  double pj_per_bit = 0.2;  ///< energy per bit per hop
};

struct Topology {
  int width = 1, height = 1;              ///< mesh size in nodes
  int die_width = 1, die_height = 1;      ///< nodes per die (x, y)
  int wafer_width = 1, wafer_height = 1;  ///< nodes per wafer (x, y)
  std::array<LinkParams, kNumLinkLevels> links{};

  int nodes() const { return width * height; }
  int x(int node) const { return node % width; }
  int y(int node) const { return node / width; }
  int id(int x, int y) const { return y * width + x; }
  int die_of(int node) const;
  int wafer_of(int node) const;
  int dies() const { return (width / die_width) * (height / die_height); }
  int wafers() const { return (width / wafer_width) * (height / wafer_height); }
  bool same_die(int a, int b) const { return die_of(a) == die_of(b); }
  bool same_wafer(int a, int b) const { return wafer_of(a) == wafer_of(b); }
  /// Level of the link between two mesh neighbours.
  LinkLevel link_level(int a, int b) const;
  const LinkParams& link(int a, int b) const { return links[static_cast<int>(link_level(a, b))]; }
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
