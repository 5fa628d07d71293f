// Layer schedules (plain C++): collective expansion, the tracker, critical-path attribution and the
// flow back end, against hand-computed small cases.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "mapping_test_util.h"
#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/layer_runner.h"
#include "nmpsim/mapping/moe_layer.h"

namespace nmpsim::mapping {
namespace {

using namespace nmpsim::flow;  // the flow back end the tests run schedules on

PhysicalNode N(int v) { return PhysicalNode(v); }

AnalyticalHardware line_hw(int nodes) {
  AnalyticalHardware hw = testing::line_hardware(nodes);
  hw.peak_flops = 1e12;
  hw.startup_s = 0;
  return hw;
}

TEST(Schedules, RingAllGatherIsGMinusOneStepsOfOneTransferPerMember) {
  LayerSchedule s;
  const int ph = s.phase("ag", PhaseFamily::kAllReduce);
  Collective c;
  c.ring = {N(0), N(1), N(2)};
  c.chunk_bytes = {100, 200, 300};
  const OpId j = s.collective(ph, c);
  // 3 members: 2 steps x 3 transfers, then the join.
  ASSERT_EQ(s.size(), 7);
  EXPECT_EQ(s.op(j).kind, OpKind::kJoin);
  EXPECT_EQ(s.op(j).collective, 0);
  // Step 0: member p forwards its own chunk; step 1: the chunk it received (p - 1's).
  const double step0[3] = {100, 200, 300}, step1[3] = {300, 100, 200};
  for (int p = 0; p < 3; ++p) {
    const Op& t0 = s.op(p);
    EXPECT_EQ(t0.kind, OpKind::kTransfer);
    EXPECT_EQ(t0.node, N(p));
    EXPECT_EQ(t0.peer, N((p + 1) % 3));
    EXPECT_EQ(t0.bytes, step0[p]);
    EXPECT_TRUE(t0.deps.empty());
    const Op& t1 = s.op(3 + p);
    EXPECT_EQ(t1.bytes, step1[p]);
    ASSERT_EQ(t1.deps.size(), 1u);
    EXPECT_EQ(t1.deps[0], (p + 2) % 3);  // waits for what p received in step 0 (from p - 1)
  }
  EXPECT_NO_THROW(s.validate(3));
}

TEST(Schedules, RingReduceScatterAddsWhatArrivesBeforeSendingOn) {
  LayerSchedule s;
  const int ph = s.phase("rs", PhaseFamily::kAllReduce);
  Collective c;
  c.kind = CollectiveKind::kRingReduceScatter;
  c.ring = {N(0), N(1), N(2)};
  c.chunk_bytes = {100, 200, 300};
  c.element_bytes = 2;
  s.collective(ph, c);
  // Per step: 3 transfers, then 3 adds (one per member, of the chunk it received); 2 steps; a join.
  ASSERT_EQ(s.size(), 13);
  // Step 0: member p sends chunk p - 1 and adds chunk p - 2 (what p - 1 sent).
  const double sent0[3] = {300, 100, 200};
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(s.op(p).bytes, sent0[p]);
    const Op& add = s.op(3 + p);
    EXPECT_EQ(add.kind, OpKind::kCompute);
    EXPECT_EQ(add.node, N(p));
    EXPECT_EQ(add.flops, s.op((p + 2) % 3).bytes / 2);
    EXPECT_EQ(add.deps, DepList{(p + 2) % 3});
    EXPECT_EQ(s.op(6 + p).deps, DepList{3 + p});  // the next send waits for the add
  }
}

TEST(Schedules, MalformedSchedulesAreRejected) {
  LayerSchedule s;
  const int ph = s.phase("x", PhaseFamily::kOther);
  const OpId a = s.compute(ph, N(0), 1, 0);
  const OpId b = s.compute(ph, N(1), 1, 0, {a});
  s.add_dep(a, b);
  EXPECT_THROW(s.validate(2), std::logic_error);  // a cycle
  LayerSchedule t;
  t.transfer(t.phase("y", PhaseFamily::kOther), N(0), N(5), 8);
  EXPECT_THROW(t.validate(4), std::logic_error);  // off the mesh
  LayerSchedule u;
  u.compute(u.phase("bg", PhaseFamily::kOther, 1), N(0), 1, 0);
  EXPECT_THROW(u.validate(4), std::logic_error);                            // compute belongs to the foreground
  EXPECT_THROW(u.phase("bg", PhaseFamily::kMoeComm, 1), std::logic_error);  // one family per phase
  EXPECT_THROW(u.phase("a b", PhaseFamily::kOther), std::logic_error);      // names name files
}

TEST(Tracker, JoinsCompleteAtOnceAndPhasesEndOnce) {
  ScheduleTracker tr;
  std::vector<std::pair<int, double>> ended;
  tr.set_phase_done([&](uint64_t, int phase, double t) { ended.emplace_back(phase, t); });
  auto s = std::make_shared<LayerSchedule>();
  const int p0 = s->phase("a", PhaseFamily::kOther), p1 = s->phase("b", PhaseFamily::kOther);
  const OpId x = s->compute(p0, N(0), 1, 0), y = s->compute(p0, N(1), 1, 0);
  const OpId j = s->join(p0, {x, y});
  const OpId z = s->compute(p1, N(0), 1, 0, {j});
  const uint64_t serial = tr.begin(s, 0.0, 2);
  ASSERT_EQ(tr.ready().size(), 2u);  // x, y
  tr.ready().clear();
  tr.complete({serial, x}, 1.0);
  EXPECT_FALSE(tr.done({serial, j}));
  tr.complete({serial, y}, 3.0);
  EXPECT_TRUE(tr.done({serial, j}));
  EXPECT_EQ(tr.timings(serial)[static_cast<size_t>(j)].end_s, 3.0);
  ASSERT_EQ(tr.ready().size(), 1u);
  EXPECT_EQ(tr.ready().front().op, z);
  EXPECT_EQ(tr.timings(serial)[static_cast<size_t>(z)].ready_s, 3.0);
  EXPECT_EQ(ended, (std::vector<std::pair<int, double>>{{p0, 3.0}}));
  tr.complete({serial, z}, 4.0);
  EXPECT_EQ(tr.foreground_left(serial), 0);
  EXPECT_EQ(ended.back(), (std::pair<int, double>{p1, 4.0}));
}

TEST(Tracker, ExternalOpsWaitForEarlierSchedulesAndHooksMayAddOps) {
  ScheduleTracker tr;
  auto first = std::make_shared<LayerSchedule>();
  const OpId bg = first->transfer(first->phase("copy", PhaseFamily::kOther, 1), N(0), N(1), 64);
  const uint64_t s1 = tr.begin(first, 0.0, 2);
  tr.ready().clear();
  auto second = std::make_shared<LayerSchedule>();
  const int ph = second->phase("use", PhaseFamily::kOther);
  const OpId ext = second->external(ph, OpRef{s1, bg});
  const OpId use = second->compute(ph, N(1), 1, 0, {ext});
  // A hook adds an op to the schedule when its phase ends.
  bool added = false;
  const uint64_t expect = tr.next_serial();
  tr.set_phase_done([&](uint64_t serial, int phase, double) {
    if (serial != expect || phase != ph || added) return;
    added = true;
    LayerSchedule& s = tr.schedule(serial);
    s.compute(s.phase("after", PhaseFamily::kOther), N(0), 1, 0);
  });
  const uint64_t s2 = tr.begin(second, 1.0, 2);
  EXPECT_TRUE(tr.ready().empty());  // `use` waits for the copy of schedule 1
  tr.complete({s1, bg}, 2.5);
  EXPECT_TRUE(tr.done({s2, ext}));
  ASSERT_EQ(tr.ready().size(), 1u);
  EXPECT_EQ(tr.ready().front().op, use);
  tr.ready().clear();
  tr.complete({s2, use}, 3.0);
  EXPECT_TRUE(added);
  EXPECT_EQ(tr.foreground_left(s2), 1);  // the op the hook added
  ASSERT_EQ(tr.ready().size(), 1u);
  EXPECT_EQ(tr.timings(s2)[static_cast<size_t>(tr.ready().front().op)].ready_s, 3.0);
}

TEST(FlowExecutor, WavesSerialiseComputePerNodeAndShareTheNetwork) {
  const AnalyticalHardware hw = line_hw(3);
  FlowExecutor ex(hw);
  auto s = std::make_shared<LayerSchedule>();
  const int ph = s->phase("work", PhaseFamily::kMoeCompute), net = s->phase("send", PhaseFamily::kMoeComm);
  const OpId a = s->compute(ph, N(0), 1e6, 0), b = s->compute(ph, N(0), 2e6, 0), c = s->compute(ph, N(1), 1e6, 0);
  const OpId j = s->join(ph, {a, b, c});
  // Two 1 MB messages over the same link 0 -> 1 (the second continues to 2), from the NI's two
  // queues at once: the contended link carries flow_link_efficiency of its 50 GB/s, shared equally.
  s->transfer(net, N(0), N(1), 1e6, {j});
  s->transfer(net, N(0), N(2), 1e6, {j});
  const uint64_t serial = ex.execute(s);
  const auto& t = ex.tracker().timings(serial);
  EXPECT_DOUBLE_EQ(t[static_cast<size_t>(a)].end_s, 1e-6);  // 1 MFLOP at 1 TFLOP/s
  EXPECT_DOUBLE_EQ(t[static_cast<size_t>(b)].end_s, 3e-6);  // after a, on the same node
  EXPECT_DOUBLE_EQ(t[static_cast<size_t>(c)].end_s, 1e-6);
  ASSERT_EQ(hw.ni_queues, 2);
  // The destination router's pipeline (R = 2 cycles), then per hop R - 1 + the link's 1 cycle + the
  // flit's 1 cycle on the wire; 2 hops.
  const double latency = 2e-9 + 2 * (1e-9 + 1e-9 + 1e-9);
  EXPECT_NEAR(ex.now_s(), 3e-6 + 2e6 / (hw.flow_link_efficiency * 50e9) + latency, 1e-15);
  EXPECT_EQ(ex.node_flops()[0], 3e6);
  EXPECT_EQ(ex.link_bytes()[0 * 4 + 1], 2e6);  // east out of node 0
  EXPECT_EQ(ex.link_bytes()[1 * 4 + 1], 1e6);
}

TEST(CriticalPath, PhaseTimesAddUpToTheLayerAndSkipOffPathWork) {
  // Foreground: x (2 s) -> join -> y (1 s). Background: z (10 s) from the start. The layer takes
  // 3 s: the background op is on no foreground path, so no phase gets its time.
  const AnalyticalHardware hw = line_hw(2);
  FlowExecutor ex(hw);
  auto s = std::make_shared<LayerSchedule>();
  const int p0 = s->phase("first", PhaseFamily::kAttention), p1 = s->phase("second", PhaseFamily::kMoeComm);
  const int bg = s->phase("side", PhaseFamily::kOther, 1);
  const OpId x = s->compute(p0, N(0), 2e12, 0);
  const OpId j = s->join(p0, {x});
  s->compute(p1, N(1), 1e12, 0, {j});
  s->transfer(bg, N(0), N(1), 50e9 * 10);  // 10 s alone on the link
  const uint64_t serial = ex.execute(s);
  StrategyResult r("x", Fidelity::kFlow, 2);
  std::vector<double> node_s(2, 0.0);
  const LayerRecord rec = record_layer(r, ex.tracker(), serial, node_s);
  EXPECT_DOUBLE_EQ(r.phase_s(rec, "first"), 2.0);
  EXPECT_DOUBLE_EQ(r.phase_s(rec, "second"), 1.0);
  EXPECT_DOUBLE_EQ(r.phase_s(rec, "side"), 0.0);
  EXPECT_DOUBLE_EQ(rec.total_s(), 3.0);
  EXPECT_DOUBLE_EQ(r.bytes_of("side"), 50e9 * 10);
  // The background op outlives the layer; a foreground op of the next layer that needs it waits, and
  // that wait is the background phase's exposed time.
  auto next = std::make_shared<LayerSchedule>();
  const int wait = next->phase("side", PhaseFamily::kOther, 1), use = next->phase("use", PhaseFamily::kOther);
  const OpId ext = next->external(wait, OpRef{serial, 3});
  next->compute(use, N(1), 1e12, 0, {ext});
  const uint64_t s2 = ex.execute(next);
  const LayerRecord rec2 = record_layer(r, ex.tracker(), s2, node_s);
  // 10 s alone on the link (no contention, full bandwidth) + 5 ns latency (R = 2 cycles, then one
  // hop of R - 1 + 1 link + 1 wire cycles), less the 3 s elapsed.
  EXPECT_NEAR(r.phase_s(rec2, "side"), 10.0 + 5e-9 - 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.phase_s(rec2, "use"), 1.0);
}

TEST(FlowExecutor, AScheduleThatCanNeverFinishIsAnErrorNotAHang) {
  FlowExecutor ex(line_hw(2));
  auto s = std::make_shared<LayerSchedule>();
  const int ph = s->phase("wait", PhaseFamily::kOther);
  const OpId never = s->external(ph, OpRef{999, 0});
  s->compute(ph, N(0), 1, 0, {never});
  EXPECT_THROW(ex.execute(s), std::logic_error);
}

TEST(FlowExecutor, ACancelledStreamStopsAfterItsWindowAndStillCompletes) {
  // A 10 MB stream from node 0 to node 1 in 1 MB chunks (20 us each on the 50 GB/s link), at most 2 on
  // the way to node 1; the foreground (50 us of compute, no DRAM) ends and the stream is cancelled.
  // By then at most floor(50 / 20) = 2 chunks have arrived, so at most 2 + 2 were ever sent, and the
  // window was kept full, so at least 2 + 1; each sent chunk lands whole.
  AnalyticalHardware hw = line_hw(2);
  hw.broadcast_window_chunks = 2;
  FlowExecutor ex(hw);
  auto s = std::make_shared<LayerSchedule>();
  s->compute(s->phase("work", PhaseFamily::kOther), N(1), 50e6, 0);
  const OpId st = s->stream(s->phase("copy", PhaseFamily::kOther, 1), N(0), {N(1)}, 10e6, 1e6);
  // A second stream that waits for the first never starts sending once cancelled.
  const OpId later = s->stream(s->phase("copy", PhaseFamily::kOther, 1), N(0), {N(1)}, 10e6, 1e6, {st});
  const uint64_t serial = ex.execute(s);
  EXPECT_NEAR(ex.now_s(), 50e-6, 1e-12);
  ex.cancel(OpRef{serial, st});
  ex.cancel(OpRef{serial, later});
  ex.drain();
  EXPECT_TRUE(ex.tracker().done(OpRef{serial, st}));
  EXPECT_TRUE(ex.tracker().done(OpRef{serial, later}));
  const double sent = ex.link_bytes()[0 * 4 + 1];
  EXPECT_GE(sent, 3e6);
  EXPECT_LE(sent, 4e6);
  EXPECT_DOUBLE_EQ(sent, 1e6 * std::round(sent / 1e6));
}

/// Seconds a ring reduce-scatter of four 64 KiB chunks takes on a line of 4 nodes (ring 0-1-2-3) from
/// an idle start, with its adds as commands or fused.
/// Seconds collective `c` alone takes on `hw` from an idle start.
double collective_s(const AnalyticalHardware& hw, Collective c) {
  FlowExecutor ex(hw);
  auto s = std::make_shared<LayerSchedule>();
  s->collective(s->phase("c", PhaseFamily::kAllReduce), std::move(c));
  ex.execute(s);
  return ex.now_s();
}

double reduce_scatter_s(ReduceMode mode) {
  AnalyticalHardware hw = line_hw(4);
  hw.startup_s = 2e-6;
  Collective c;
  c.kind = CollectiveKind::kRingReduceScatter;
  c.ring = {N(0), N(1), N(2), N(3)};
  c.chunk_bytes = {65536, 65536, 65536, 65536};
  c.reduce = mode;
  return collective_s(hw, c);
}

TEST(Reductions, FusedAddsSkipTheStartUpAndNothingElse) {
  // The ring is 3 steps of (transfer, add) on every member at once: fusing the add removes exactly one
  // start-up per step; the adds' FLOPs (32768 per step at 1 TFLOP/s) stay.
  EXPECT_NEAR(reduce_scatter_s(ReduceMode::kKernel) - reduce_scatter_s(ReduceMode::kFused), 3 * 2e-6, 1e-11);
  LayerSchedule s;
  Collective c;
  c.kind = CollectiveKind::kRingReduceScatter;
  c.ring = {N(0), N(1)};
  c.chunk_bytes = {100, 100};
  c.reduce = ReduceMode::kFused;
  s.collective(s.phase("rs", PhaseFamily::kAllReduce), c);
  for (const Op& o : s.ops()) {
    if (o.kind == OpKind::kCompute) {
      EXPECT_FALSE(o.startup);
    }
  }
}

TEST(Reductions, GroupedExpertsAreOneOpPerNodeWithTheSameWork) {
  const ModelSpec m = model_preset("mixtral-8x7b");
  const Topology t = testing::mesh(2, 2);
  const RoutingTrace tr = testing::trace_for(m, 0.8, 64);
  const Groups g = make_groups(t, 0);
  const LayerPlan plan = plan_layer(m, physical_shares(make_tp(m, 4)), 0, tr, 0, g, RunShape{64, 128});
  LayerBuild grouped;
  grouped.grouped_experts = true;
  const LayerSchedule one = build_moe_layer(m, plan, g, grouped), each = build_moe_layer(m, plan, g, 2);
  const int e1 = one.find_phase("experts"), e2 = each.find_phase("experts");
  for (int v = 0; v < 4; ++v) {
    int ops1 = 0, ops2 = 0;
    double f1 = 0, f2 = 0, b1 = 0, b2 = 0;
    for (const Op& o : one.ops())
      if (o.phase == e1 && o.kind == OpKind::kCompute && o.node == N(v)) ++ops1, f1 += o.flops, b1 += o.bytes;
    for (const Op& o : each.ops())
      if (o.phase == e2 && o.kind == OpKind::kCompute && o.node == N(v)) ++ops2, f2 += o.flops, b2 += o.bytes;
    EXPECT_EQ(ops1, 1);
    EXPECT_EQ(ops2, static_cast<int>(plan.expert_work[static_cast<size_t>(v)].size()));  // TP: all 8 experts chosen
    EXPECT_DOUBLE_EQ(f1, f2);
    EXPECT_DOUBLE_EQ(b1, b2);
  }
}

TEST(Overlap, TwoMicroBatchesByHand) {
  // Per micro-batch: a = 5 us of compute on node 0, a 100 kB transfer to node 1 (t = 2 us + 5 ns), c = 20 us
  // of compute on node 1; two such chains with no dependency between them. Identical jobs through
  // three single-server stages: makespan a + t + c + max(a, t, c) = a + t + 2c (c is the longest),
  // against 2 (a + t + c) when the second waits for the first.
  const AnalyticalHardware hw = line_hw(2);
  FlowExecutor ex(hw);
  auto s = std::make_shared<LayerSchedule>();
  const int ph = s->phase("work", PhaseFamily::kMoeCompute), net = s->phase("send", PhaseFamily::kMoeComm);
  for (int mb = 0; mb < 2; ++mb) {
    const OpId a = s->compute(ph, N(0), 5e6, 0);
    const OpId t = s->transfer(net, N(0), N(1), 1e5, {a});
    s->compute(ph, N(1), 20e6, 0, {t});
  }
  const uint64_t serial = ex.execute(s);
  const double t = 1e5 / 50e9 + 2e-9 + 3e-9;  // one hop: the destination's pipeline, then R - 1 + link + flit
  EXPECT_NEAR(ex.now_s(), 5e-6 + t + 2 * 20e-6, 1e-11);
  // The phases still add up to the layer along its critical path.
  StrategyResult r("x", Fidelity::kFlow, 2);
  std::vector<double> node_s(2, 0.0);
  const LayerRecord rec = record_layer(r, ex.tracker(), serial, node_s);
  EXPECT_NEAR(rec.total_s(), ex.now_s(), 1e-12);
  // The second transfer ran while node 1 computed: 2 us of communication hidden, t exposed.
  EXPECT_NEAR(rec.comm_busy_s, 2 * t, 1e-11);
  EXPECT_NEAR(r.family_s(rec, PhaseFamily::kMoeComm), t, 1e-11);
}

TEST(Overlap, MicroBatchesAreChainsOfTheSamePhasesCutBetweenRequests) {
  // 10 requests of 1 token and a prompt chunk of 6 in 3 micro-batches of about 16 / 3 tokens each.
  StepTokens step;
  step.segments = {Segment{10, 1, 99, false}, Segment{1, 6, 0, true}};
  const std::vector<StepTokens> mb = split_micro_batches(step, 3);
  ASSERT_EQ(mb.size(), 3u);
  EXPECT_EQ(mb[0].tokens(), 6);  // requests 0-5: the cut after the request that reaches 16/3
  EXPECT_EQ(mb[1].tokens(), 4);  // requests 6-9: 10 tokens < 32/3, but the last micro-batch needs a request
  EXPECT_EQ(mb[2].tokens(), 6);  // the prompt chunk
  EXPECT_EQ(mb[0].tokens() + mb[1].tokens() + mb[2].tokens(), step.tokens());
  EXPECT_THROW(split_micro_batches(step, 12), InputError);
  const ModelSpec m = model_preset("mixtral-8x7b");
  const Groups g = make_groups(testing::mesh(2, 2), 0);
  const RoutingTrace tr = testing::trace_for(m, 0.8, 64);
  const auto shares = physical_shares(make_ep(m, 4));
  const std::vector<LayerPlan> plans = {plan_layer(m, shares, 0, tr, 0, g, RunShape{8, 64}),
                                        plan_layer(m, shares, 0, tr, 8, g, RunShape{8, 64})};
  const LayerSchedule two = build_moe_layer(m, plans, g, LayerBuild{}), one = build_moe_layer(m, plans[0], g, 2);
  EXPECT_EQ(two.phases().size(), one.phases().size());  // the same phase names
  int barriers = 0;
  for (const Op& o : two.ops())
    if (o.phase == two.find_phase("dispatch") && o.kind == OpKind::kJoin && o.collective < 0) ++barriers;
  EXPECT_EQ(barriers, 2);  // one chain per micro-batch
  EXPECT_NO_THROW(two.validate(4));
}

/// Seconds a ring all-gather of four 1 MB chunks takes round the square 0-1-3-2 of a 2x2 mesh of
/// 25 GB/s links whose NIs inject and eject 50 GB/s (50-byte flits at 1 GHz).
double square_allgather_s(bool bidirectional) {
  AnalyticalHardware hw = line_hw(2);
  hw.topology = testing::mesh(2, 2);
  hw.topology.links[0].gbytes_per_s = 25;
  hw.topology.links[0].latency_ns = 1;
  Collective c;
  c.ring = {N(0), N(1), N(3), N(2)};
  c.chunk_bytes = {1e6, 1e6, 1e6, 1e6};
  c.bidirectional = bidirectional;
  return collective_s(hw, c);
}

TEST(Collectives, BidirectionalRingAllGatherOnAnIdleRingByClosedForm) {
  // 3 steps; one way each member sends 1 MB over its own 25 GB/s link per step; both ways half of it
  // each way, the two halves sharing the 50 GB/s NI: 3 x (0.5 MB / 25 GB/s) + latency (under 0.1%).
  EXPECT_NEAR(square_allgather_s(false), 3 * 1e6 / 25e9, 0.01 * 3 * 1e6 / 25e9);
  EXPECT_NEAR(square_allgather_s(true), 3 * 0.5e6 / 25e9, 0.01 * 3 * 0.5e6 / 25e9);
  LayerSchedule s;
  Collective c;
  c.kind = CollectiveKind::kRingReduceScatter;
  c.ring = {N(0), N(1), N(2)};
  c.chunk_bytes = {100, 200, 300};
  c.bidirectional = true;
  s.collective(s.phase("rs", PhaseFamily::kAllReduce), c);
  double sent = 0, added = 0;
  for (const Op& o : s.ops()) {
    if (o.kind == OpKind::kTransfer) sent += o.bytes;
    if (o.kind == OpKind::kCompute) added += o.flops;
  }
  EXPECT_DOUBLE_EQ(sent, 2 * 600.0);  // the same bytes as one way: (g - 1) x all chunks
  EXPECT_DOUBLE_EQ(added, 2 * 600.0 / 2);
}

TEST(MoeLayer, ScheduleHasTheDocumentedPhasesAndConservesTheirBytes) {
  ModelSpec m = model_preset("deepseek-v2-lite");  // shared experts: 10 phases in an MoE layer
  Topology t;
  t.width = t.die().width = t.wafer().width = 4;
  t.height = t.die().height = t.wafer().height = 4;
  SyntheticTraceConfig c;
  c.layers = m.moe_layers;
  c.experts = m.experts;
  c.top_k = m.top_k;
  c.tokens = 256;
  const RoutingTrace tr = synthetic_trace(c);
  const Groups g = make_groups(t, 4);
  const LayerPlan plan = plan_layer(m, physical_shares(make_ep(m, 16)), 1, tr, 0, g, RunShape{32, 128});
  const LayerSchedule s = build_moe_layer(m, plan, g, 2);
  std::vector<std::string> names;
  for (const Phase& p : s.phases()) names.push_back(p.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"allgather", "attention", "reduce_scatter", "gate", "shared_allgather",
                                      "shared_experts", "shared_reduce_scatter", "dispatch", "experts", "combine"}));
  double dispatch = 0, combine = 0;
  for (const Op& o : s.ops()) {
    if (o.phase == s.find_phase("dispatch")) dispatch += o.bytes;
    if (o.phase == s.find_phase("combine") && o.kind == OpKind::kTransfer) combine += o.bytes;
  }
  EXPECT_DOUBLE_EQ(dispatch, plan.dispatch_total());
  EXPECT_DOUBLE_EQ(combine, plan.combine_total());
  EXPECT_NO_THROW(s.validate(16));
  // A dense layer stops after the reduce-scatter.
  const LayerPlan dense = plan_layer(m, physical_shares(make_ep(m, 16)), 0, tr, 0, g, RunShape{32, 128});
  EXPECT_EQ(build_moe_layer(m, dense, g, 2).phases().size(), 3u);
}

}  // namespace
}  // namespace nmpsim::mapping
