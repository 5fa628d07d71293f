// MoEntwine's token domains (plain C++): block shapes, the baseline and entwined-ring mappings, and
// their figures against hand computation (issue 14).
#include <gtest/gtest.h>

#include <set>

#include "mapping/json_fields.h"
#include "methods/moentwine/ftd_layout.h"

namespace nmpsim::methods::moentwine {
namespace {

mapping::Topology mesh(int w, int h) {
  mapping::Topology t;
  t.width = t.die_width = t.wafer_width = w;
  t.height = t.die_height = t.wafer_height = h;
  return t;
}

TEST(MoentwineBlocks, AsSquareAsPossibleThenAnEvenBlockGridThenWider) {
  EXPECT_EQ(block_shape(4, 4, 4).w, 2);
  EXPECT_EQ(block_shape(4, 4, 4).h, 2);
  EXPECT_EQ(block_shape(8, 8, 16).w, 4);
  EXPECT_EQ(block_shape(6, 6, 9).w, 3);  // 3x3 blocks, a 2x2 grid
  // 6 nodes on 6x6: 2x3 and 3x2 are equally square and both grids have an even side: the wider one.
  EXPECT_EQ(block_shape(6, 6, 6).w, 3);
  EXPECT_EQ(block_shape(6, 6, 6).h, 2);
  // 4 nodes on 12x2: 2x2 (grid 6x1) is squarer than 4x1; on 6x2 2x2 gives a 3x1 grid, still squarest.
  EXPECT_EQ(block_shape(12, 2, 4).w, 2);
  EXPECT_EQ(block_shape(6, 2, 4).w, 2);
  EXPECT_THROW(block_shape(4, 4, 3), mapping::InputError);
  EXPECT_THROW(token_domains(mesh(4, 4), 5, Mapping::kEntwined), mapping::InputError);
}

void expect_partition(const mapping::Topology& t, const TokenDomains& d, int tp) {
  const int n = t.nodes();
  ASSERT_EQ(static_cast<int>(d.tp.ring.size()), n / tp);
  ASSERT_EQ(static_cast<int>(d.ftd.size()), tp);
  std::set<int> seen;
  for (const auto& g : d.tp.ring) {
    EXPECT_EQ(static_cast<int>(g.size()), tp);
    seen.insert(g.begin(), g.end());
  }
  EXPECT_EQ(static_cast<int>(seen.size()), n);
  // An FTD holds exactly one member of every TP group (so together they hold every group's tokens).
  for (const auto& f : d.ftd) {
    std::set<int> groups;
    for (int v : f) groups.insert(d.tp.group_of[static_cast<size_t>(v)]);
    EXPECT_EQ(static_cast<int>(groups.size()), n / tp);
    EXPECT_EQ(static_cast<int>(f.size()), n / tp);
  }
}

/// The hand-computed figures of one mapping (max_link_pair_loads < 0: not checked).
void expect_stats(const FtdStats& s, int area, double avg_hops, bool overlap, int max_link, int ring_step) {
  EXPECT_EQ(s.area, area);
  EXPECT_DOUBLE_EQ(s.avg_hops, avg_hops);
  EXPECT_EQ(s.overlap, overlap);
  if (max_link >= 0) EXPECT_EQ(s.max_link_pair_loads, max_link);
  EXPECT_EQ(s.ring_step_hops, ring_step);
  // Entwined FTDs are disjoint blocks: no all-to-all hop leaves an FTD's members.
  if (!overlap) EXPECT_EQ(s.pair_hops_through_other_ftds, 0);
  if (overlap) EXPECT_GT(s.pair_hops_through_other_ftds, 0);
}

TEST(MoentwineDomains, FourByFourWithTpFourAsComputedByHand) {
  const mapping::Topology t = mesh(4, 4);
  // Baseline: TP groups are the 2x2 quadrants; FTD j = offset j of every quadrant, e.g. nodes (0,0),
  // (2,0), (0,2), (2,2): a 3x3 box, every member 2, 2 and 4 hops from the others (8/3), boxes overlap.
  // Busiest link: (1,0) -> (2,0) east carries (0,0)->(2,0), (0,0)->(2,2) of one FTD and (1,0)->(3,0),
  // (1,0)->(3,2) of the next: 4 messages. Rings are 1-hop.
  const TokenDomains base = token_domains(t, 4, Mapping::kBaseline);
  expect_partition(t, base, 4);
  expect_stats(ftd_stats(t, base), 9, 8.0 / 3, true, 4, 1);
  // ER: FTDs are the 2x2 quadrants (each member 1, 1 and 2 hops from the others: 4/3), disjoint; a
  // link inside a quadrant carries 2 messages ((0,0)->(1,0) and (0,0)->(1,1) on (0,0) -> (1,0));
  // TP group j = offset j of every quadrant, a ring through the 2x2 grid of quadrants: 2-hop steps.
  const TokenDomains er = token_domains(t, 4, Mapping::kEntwined);
  expect_partition(t, er, 4);
  expect_stats(ftd_stats(t, er), 4, 4.0 / 3, false, 2, 2);
}

TEST(MoentwineDomains, EightByEightWithTpSixteen) {
  const mapping::Topology t = mesh(8, 8);
  // Baseline: TP blocks 4x4 in a 2x2 grid; an FTD's members are 4 apart: a 5x5 box, 4, 4, 8 hops.
  expect_stats(ftd_stats(t, token_domains(t, 16, Mapping::kBaseline)), 25, 16.0 / 3, true, -1, 1);
  // ER: DP = 4, FTDs 2x2 in a 4x4 grid (even: a Hamiltonian ring of 2-hop steps).
  const TokenDomains er = token_domains(t, 16, Mapping::kEntwined);
  expect_partition(t, er, 16);
  expect_stats(ftd_stats(t, er), 4, 4.0 / 3, false, 2, 2);
}

}  // namespace
}  // namespace nmpsim::methods::moentwine
