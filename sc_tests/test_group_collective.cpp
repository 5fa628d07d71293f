// A group's all-gather and reduce-scatter as one ring, both ways, or 2D on its mesh rectangle, and
// `auto` (docs/MODEL.md "2D collectives and auto"): bytes conserved, times against the closed forms on
// the flow back end, and auto's pick the fastest of the three.
#include <gtest/gtest.h>

#include "mapping_test_util.h"
#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/group_collective.h"
#include "nmpsim/mapping/layer_plan.h"
#include "nmpsim/mapping/train_step.h"

namespace nmpsim::mapping {
namespace {

/// A 4x4 mesh of 50 GB/s links (one 50-byte flit per cycle at 1 GHz, 1 ns), `ports` NI ports, 1 TFLOP/s.
AnalyticalHardware mesh_hw(int ports, double startup_s) {
  AnalyticalHardware hw = testing::nmp_hardware(4, 4, 1, 50);
  hw.ni_ports = ports;
  hw.ni_queues = 2 * ports;
  hw.startup_s = startup_s;
  hw.reduce = startup_s > 0 ? ReduceMode::kKernel : ReduceMode::kFused;
  return hw;
}

GroupCollective whole_mesh(const AnalyticalHardware& hw, CollectiveKind kind, RingAlgorithm alg, double chunk) {
  GroupCollective c;
  c.kind = kind;
  c.ring = make_groups(hw.topology, 0).ring[0];
  c.chunk_bytes.assign(c.ring.size(), chunk);
  c.element_bytes = 2;
  c.reduce = hw.reduce;
  c.algorithm = alg;
  c.rect = group_rect(hw.topology, c.ring);
  return c;
}

struct Outcome {
  double seconds = 0, bytes = 0, adds = 0;
};
Outcome run(const AnalyticalHardware& hw, const GroupCollective& c) {
  auto s = std::make_shared<LayerSchedule>();
  add_group_collective(*s, s->phase("c", PhaseFamily::kAllReduce), c, {});
  Outcome r;
  for (const Op& o : s->ops()) {
    if (o.kind == OpKind::kTransfer) r.bytes += o.bytes;
    if (o.kind == OpKind::kCompute) r.adds += o.flops;
  }
  flow::FlowExecutor ex(hw);
  ex.execute(s);
  r.seconds = ex.now_s();
  return r;
}

TEST(GroupCollectives, TheRectangleOfAGroup) {
  const Topology t = testing::mesh(4, 4);
  const GroupRect r = group_rect(t, {5, 6, 9, 10});
  EXPECT_EQ(r.a, 2);
  EXPECT_EQ(r.b, 2);
  EXPECT_EQ(r.rows, (std::vector<std::vector<int>>{{5, 6}, {9, 10}}));
  EXPECT_EQ(r.cols, (std::vector<std::vector<int>>{{5, 9}, {6, 10}}));
  EXPECT_EQ(group_rect(t, {0, 1, 5}).a, 0);  // not a rectangle
}

TEST(GroupCollectives, TwoDMovesTheSameBytesAndAddsAsARing) {
  // Every member ends with every chunk (all-gather) or with the sum of its own (reduce-scatter): the
  // 2D halves move (g - 1) chunks per member between them, as a ring does, and add as many elements.
  const AnalyticalHardware hw = mesh_hw(4, 0);
  for (CollectiveKind kind : {CollectiveKind::kRingAllGather, CollectiveKind::kRingReduceScatter}) {
    const Outcome ring = run(hw, whole_mesh(hw, kind, RingAlgorithm::kOneWay, 1e5));
    const Outcome two_d = run(hw, whole_mesh(hw, kind, RingAlgorithm::k2d, 1e5));
    EXPECT_DOUBLE_EQ(ring.bytes, 16 * 15 * 1e5);
    EXPECT_DOUBLE_EQ(two_d.bytes, ring.bytes);
    EXPECT_DOUBLE_EQ(two_d.adds, ring.adds);
  }
}

TEST(GroupCollectives, IdleMeshTimesFollowTheirClosedForms) {
  // 16 members, 1 MB each, fused adds: the closed forms of docs/MODEL.md within 5%, with one NI port
  // (both-way algorithms share it: no faster than one way) and with four.
  for (int ports : {1, 4}) {
    const AnalyticalHardware hw = mesh_hw(ports, 0);
    for (RingAlgorithm alg : {RingAlgorithm::kOneWay, RingAlgorithm::kBidirectional, RingAlgorithm::k2d}) {
      const GroupCollective c = whole_mesh(hw, CollectiveKind::kRingAllGather, alg, 1e6);
      const double want = group_collective_s(alg, c.ring, c.rect, 1e6, false, collective_costs(hw, c.ring));
      EXPECT_NEAR(run(hw, c).seconds, want, 0.05 * want) << ring_algorithm_name(alg) << " ports " << ports;
    }
  }
}

TEST(GroupCollectives, AutoPicksTheFastestOfTheThree) {
  // A reduce-scatter whose every ring step pays a 2 us start-up (kernel adds): 2D's 6 steps beat the
  // rings' 15; without start-ups and with large chunks the three are within a few percent and auto
  // keeps the simplest that is fastest by its closed form. Either way its pick is (within 2%) the
  // fastest on the flow back end.
  for (double startup : {2e-6, 0.0})
    for (double chunk : {1e4, 1e6}) {
      const AnalyticalHardware hw = mesh_hw(4, startup);
      GroupCollective c = whole_mesh(hw, CollectiveKind::kRingReduceScatter, RingAlgorithm::kOneWay, chunk);
      const CollectiveCosts k = collective_costs(hw, c.ring);
      RingAlgorithm pick = RingAlgorithm::kOneWay;
      double best = 1e30, fastest = 1e30;
      for (RingAlgorithm alg : {RingAlgorithm::kOneWay, RingAlgorithm::kBidirectional, RingAlgorithm::k2d}) {
        const double t = group_collective_s(alg, c.ring, c.rect, chunk, true, k);
        if (t < best * (1 - 1e-9)) best = t, pick = alg;
        c.algorithm = alg;
        fastest = std::min(fastest, run(hw, c).seconds);
      }
      c.algorithm = pick;
      EXPECT_LE(run(hw, c).seconds, 1.02 * fastest) << "startup " << startup << " chunk " << chunk;
      if (startup > 0) {
        EXPECT_EQ(pick, RingAlgorithm::k2d);
      }
    }
}

TEST(GroupCollectives, GradientAllReducesFollowTheHardwaresGradientAlgorithm) {
  // A 16 MB gradient all-reduced over the whole 4x4 mesh: a reduce-scatter of 1 MB chunks, then an
  // all-gather of them, each by the closed form of `collectives.gradients` (both ways round the ring
  // by default, 2D when asked), within 5%, and the same bytes either way (2 x 15 x 16 x 1 MB).
  for (RingAlgorithm alg : {RingAlgorithm::kBidirectional, RingAlgorithm::k2d}) {
    AnalyticalHardware hw = mesh_hw(4, 0);
    hw.gradient_rings = alg;
    const std::vector<int> ring = make_groups(hw.topology, 0).ring[0];
    auto s = std::make_shared<LayerSchedule>();
    add_gradient_all_reduce(*s, s->phase("g", PhaseFamily::kAllReduce), ring, 16e6, 2, {}, &hw);
    double bytes = 0;
    for (const Op& o : s->ops())
      if (o.kind == OpKind::kTransfer) bytes += o.bytes;
    EXPECT_DOUBLE_EQ(bytes, 2 * 15 * 16 * 1e6);
    flow::FlowExecutor ex(hw);
    ex.execute(s);
    const GroupRect rect = group_rect(hw.topology, ring);
    const CollectiveCosts k = collective_costs(hw, ring);
    const double want =
        group_collective_s(alg, ring, rect, 1e6, true, k) + group_collective_s(alg, ring, rect, 1e6, false, k);
    EXPECT_NEAR(ex.now_s(), want, 0.05 * want) << ring_algorithm_name(alg);
  }
}

}  // namespace
}  // namespace nmpsim::mapping
