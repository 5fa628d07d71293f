#include "nmpsim/methods/moentwine/ftd_layout.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/methods/moentwine/token_domain_dispatch.h"

namespace nmpsim::methods::moentwine {

using mapping::Topology;

BlockShape block_shape(int width, int height, int n) {
  BlockShape best{0, 0};
  std::tuple<int, int, int> best_key{0, 0, 0};
  for (int a = 1; a <= n; ++a) {
    if (n % a || width % a || height % (n / a)) continue;
    const int b = n / a;
    const bool even_grid = (width / a) % 2 == 0 || (height / b) % 2 == 0;
    const std::tuple<int, int, int> key{std::abs(a - b), even_grid ? 0 : 1, -a};
    if (best.w == 0 || key < best_key) {
      best = {a, b};
      best_key = key;
    }
  }
  if (best.w == 0)
    throw mapping::InputError("moentwine: no block of " + std::to_string(n) + " nodes tiles the " +
                              std::to_string(width) + "x" + std::to_string(height) + " mesh");
  return best;
}

const char* mapping_name(Mapping m) {
  return m == Mapping::kBaseline ? "baseline" : m == Mapping::kEntwined ? "entwined" : "hierarchical";
}

namespace {

/// Ring order of the cells of a gx x gy grid (a Hamiltonian cycle when one side is even).
std::vector<int> grid_ring(const Topology& t, int gx, int gy) {
  Topology g = t;
  g.width = gx;
  g.height = gy;
  return mapping::ring_order(g, 0, 0, gx, gy);
}

/// HER (Sec. IV-B4): ER inside every wafer (TP groups never cross a border); every wafer is one FTD,
/// and the token all-gather runs over the same-position dies of all wafers.
TokenDomains hierarchical_domains(const Topology& t, int tp) {
  const int ww = t.wafer().width, wh = t.wafer().height, gx = t.width / ww, gy = t.height / wh;
  Topology wafer = t;
  wafer.width = wafer.die().width = wafer.wafer().width = ww;
  wafer.height = wafer.die().height = wafer.wafer().height = wh;
  const TokenDomains local = token_domains(wafer, tp, Mapping::kEntwined);
  auto global = [&](int w, int v) { return t.id((w % gx) * ww + wafer.x(v), (w / gx) * wh + wafer.y(v)); };
  TokenDomains d;
  d.ftd_of.assign(static_cast<size_t>(t.nodes()), -1);
  d.ftd.resize(static_cast<size_t>(gx * gy));
  for (int w = 0; w < gx * gy; ++w) {
    for (const auto& ring : local.tp.ring) {
      d.tp.ring.emplace_back();
      for (int v : ring) d.tp.ring.back().push_back(global(w, v));
    }
    for (int v = 0; v < ww * wh; ++v) {
      d.ftd[static_cast<size_t>(w)].push_back(global(w, v));
      d.ftd_of[static_cast<size_t>(global(w, v))] = w;
    }
  }
  const std::vector<int> wafer_ring = grid_ring(t, gx, gy);
  for (int v = 0; v < ww * wh; ++v) {
    d.token_rings.emplace_back();
    for (int w : wafer_ring) d.token_rings.back().push_back(global(w, v));
  }
  d.tp = mapping::groups_with_rings(d.tp.ring, t.nodes(), "moentwine her");   // indexes the TP rings
  TokenDomainDispatch check(d.tp, d.token_rings, d.ftd_of, "moentwine her");  // throws on inconsistent domains
  return d;
}

}  // namespace

TokenDomains token_domains(const Topology& t, int tp, Mapping m) {
  if (m == Mapping::kHierarchical) {
    if (tp <= 0 || (t.wafer().width * t.wafer().height) % tp)
      throw mapping::InputError("moentwine: HER keeps TP groups inside a wafer: the attention TP size " +
                                std::to_string(tp) + " must divide the " +
                                std::to_string(t.wafer().width * t.wafer().height) + " dies of a wafer");
    return hierarchical_domains(t, tp);
  }
  const int n = t.nodes();
  if (tp <= 0 || tp > n || n % tp)
    throw mapping::InputError("moentwine: the attention TP size " + std::to_string(tp) + " must divide the " +
                              std::to_string(n) + " nodes");
  // Baseline: blocks are the TP groups, offsets the FTDs. ER: blocks are the FTDs, offsets the TP groups.
  const bool er = m == Mapping::kEntwined;
  const BlockShape b = block_shape(t.width, t.height, er ? n / tp : tp);
  const int gx = t.width / b.w, gy = t.height / b.h;
  const std::vector<int> block_ring = grid_ring(t, gx, gy);   // blocks, in ring order over the grid
  const std::vector<int> cell_ring = grid_ring(t, b.w, b.h);  // offsets inside a block, in ring order
  auto node = [&](int block, int offset) {
    return t.id((block % gx) * b.w + offset % b.w, (block / gx) * b.h + offset / b.w);
  };
  TokenDomains d;
  std::vector<std::vector<int>> by_block(static_cast<size_t>(gx * gy)), by_offset(static_cast<size_t>(b.w * b.h));
  for (int blk : block_ring)
    for (int off : cell_ring) {
      by_block[static_cast<size_t>(blk)].push_back(node(blk, off));   // in the block's ring order
      by_offset[static_cast<size_t>(off)].push_back(node(blk, off));  // in the ring order of the blocks
    }
  d.ftd = er ? by_block : by_offset;
  d.ftd_of.assign(static_cast<size_t>(n), -1);
  for (size_t f = 0; f < d.ftd.size(); ++f)
    for (int v : d.ftd[f]) d.ftd_of[static_cast<size_t>(v)] = static_cast<int>(f);
  d.tp = mapping::groups_with_rings(er ? by_offset : by_block, n, "moentwine");  // indexes the TP rings
  TokenDomainDispatch check(d.tp, {}, d.ftd_of, "moentwine");                    // throws on inconsistent domains
  return d;
}

namespace {

struct Box {
  int x0, y0, x1, y1;
  bool intersects(const Box& o) const { return x0 <= o.x1 && o.x0 <= x1 && y0 <= o.y1 && o.y0 <= y1; }
  int area() const { return (x1 - x0 + 1) * (y1 - y0 + 1); }
};

Box box_of(const Topology& t, const std::vector<int>& members) {
  Box b{t.width, t.height, -1, -1};
  for (int v : members) {
    b.x0 = std::min(b.x0, t.x(v));
    b.y0 = std::min(b.y0, t.y(v));
    b.x1 = std::max(b.x1, t.x(v));
    b.y1 = std::max(b.y1, t.y(v));
  }
  return b;
}

}  // namespace

FtdStats ftd_stats(const Topology& t, const TokenDomains& d) {
  FtdStats s;
  std::vector<Box> boxes;
  for (const auto& f : d.ftd) boxes.push_back(box_of(t, f));
  for (size_t i = 0; i < boxes.size(); ++i) {
    s.area = std::max(s.area, boxes[i].area());
    for (size_t j = i + 1; j < boxes.size(); ++j) s.overlap = s.overlap || boxes[i].intersects(boxes[j]);
  }
  // Uniform all-to-all inside every FTD: one message per ordered member pair, XY routed (links
  // [node * 4 + dir], mapping::LinkDir).
  std::vector<int> load(static_cast<size_t>(t.nodes()) * 4, 0);
  long long pairs = 0, pair_hops = 0;
  for (size_t f = 0; f < d.ftd.size(); ++f)
    for (int a : d.ftd[f])
      for (int b : d.ftd[f]) {
        if (a == b) continue;
        ++pairs;
        pair_hops += t.hops(a, b);
        mapping::walk_xy(t, a, b, [&](int from, int to, int dir) {
          ++load[static_cast<size_t>(from) * 4 + dir];
          const int mine = static_cast<int>(f);
          if (d.ftd_of[static_cast<size_t>(from)] != mine || d.ftd_of[static_cast<size_t>(to)] != mine)
            ++s.pair_hops_through_other_ftds;
        });
      }
  s.avg_hops = pairs > 0 ? double(pair_hops) / double(pairs) : 0.0;
  s.max_link_pair_loads = *std::max_element(load.begin(), load.end());
  for (const auto& ring : d.tp.ring)
    for (size_t p = 0; p < ring.size() && ring.size() > 1; ++p)
      s.ring_step_hops = std::max(s.ring_step_hops, t.hops(ring[p], ring[(p + 1) % ring.size()]));
  return s;
}

}  // namespace nmpsim::methods::moentwine
