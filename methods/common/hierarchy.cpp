#include "nmpsim/methods/common/hierarchy.h"

#include <algorithm>
#include <array>
#include <numeric>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::methods::common {

using namespace nmpsim::mapping;  // the base layer the shared method pieces build on

Hierarchy make_hierarchy(const Topology& t, int virtual_levels, const std::string& where) {
  const int n = t.nodes(), top = t.num_levels() - 1;
  // Quadrants split the finest real group with several nodes (a die of several nodes, else a wafer; in a
  // general hierarchy the finest such level below the whole system, else the coarsest below it).
  int split = 0;
  while (split + 1 < top && t.level_width(split) * t.level_height(split) == 1) ++split;
  const int bw = t.level_width(split), bh = t.level_height(split);
  if (virtual_levels < 0 || virtual_levels > 8 || bw % (1 << virtual_levels) || bh % (1 << virtual_levels))
    throw InputError(where + ": " + std::to_string(virtual_levels) + " virtual levels do not split a " +
                     std::to_string(bw) + "x" + std::to_string(bh) + " " + t.levels[static_cast<size_t>(split)].name +
                     " into equal quadrants");
  // Ranks in the order: coarsest group first, the quadrant digits right after the split level's group.
  auto key = [&](int v) {
    std::vector<int> k;
    const int lx = t.x(v) % bw, ly = t.y(v) % bh;
    for (int l = top - 1; l >= 0; --l) {
      k.push_back(t.group_of(v, l));
      if (l == split)
        for (int d = 1; d <= virtual_levels; ++d) k.push_back(((ly / (bh >> d)) & 1) * 2 + ((lx / (bw >> d)) & 1));
    }
    k.push_back(t.y(v));
    k.push_back(t.x(v));
    return k;
  };
  Hierarchy h;
  h.node_at.resize(static_cast<size_t>(n));
  std::iota(h.node_at.begin(), h.node_at.end(), 0);
  std::vector<std::vector<int>> keys(static_cast<size_t>(n));
  for (int v = 0; v < n; ++v) keys[static_cast<size_t>(v)] = key(v);
  std::stable_sort(h.node_at.begin(), h.node_at.end(),
                   [&](int a, int b) { return keys[static_cast<size_t>(a)] < keys[static_cast<size_t>(b)]; });
  h.rank_of.resize(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) h.rank_of[static_cast<size_t>(h.node_at[static_cast<size_t>(r)])] = r;
  auto add = [&](const std::string& name, int groups) {
    if (groups > 1 && groups < n && (h.levels.empty() || groups > h.levels.back().groups))
      h.levels.push_back(HierarchyLevel{name, groups});
  };
  for (int l = top - 1; l >= 0; --l) {
    add(t.levels[static_cast<size_t>(l)].name, t.groups(l));
    if (l == split)
      for (int d = 1; d <= virtual_levels; ++d) add("quadrant-" + std::to_string(d), t.groups(l) << (2 * d));
  }
  return h;
}

Placement ep_by_rank(const ModelSpec& m, const Hierarchy& h, const std::string& strategy, const std::string& where,
                     const std::vector<std::vector<int>>* slots) {
  const int G = h.nodes(), E = m.experts;
  if (E % G != 0 && G % E != 0)
    throw InputError(where + ": " + strategy + " needs the experts (" + std::to_string(E) + ") and the nodes (" +
                     std::to_string(G) + ") to divide one another");
  Placement p(strategy, E, G, m.moe_layers);
  for (int l = 0; l < p.layers(); ++l)
    for (int e = 0; e < E; ++e) {
      const int s = slots ? (*slots)[static_cast<size_t>(l)][static_cast<size_t>(e)] : e;
      if (E >= G) {
        p.at(l, e, s / (E / G)) = 1.0;
        continue;
      }
      for (int k = 0; k < G / E; ++k) p.at(l, e, s * (G / E) + k) = double(E) / G;
    }
  for (int r = 0; r < G; ++r) p.node_map[static_cast<size_t>(r)] = PhysicalNode(h.node_at[static_cast<size_t>(r)]);
  return p;
}

}  // namespace nmpsim::methods::common
