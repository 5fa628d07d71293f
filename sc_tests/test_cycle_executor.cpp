// The cycle back end (firmware::CycleExecutor) on hand-made schedules: timing against the NoC's
// closed form, background streams, cross-layer dependencies, and no hang on an impossible schedule.
// One SystemC elaboration per test process.
#include <gtest/gtest.h>

#include "nmpsim/firmware/cycle_executor.h"
#include "noc_test_util.h"

namespace nmpsim {
namespace {

using mapping::LayerSchedule;
using mapping::OpId;
using mapping::PhaseFamily;
using mapping::PhysicalNode;

TEST(CycleExecutor, ATransferTakesTheZeroLoadLatencyOfTheNoc) {
  const hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  hw::System sys("sys", spec);
  firmware::CycleExecutor ex(sys);
  auto s = std::make_shared<LayerSchedule>();
  const OpId t = s->transfer(s->phase("send", PhaseFamily::kMoeComm), PhysicalNode(0), PhysicalNode(15), 8192);
  const uint64_t serial = ex.execute(s);
  const auto& timing = ex.tracker().timings(serial)[static_cast<size_t>(t)];
  // Sent at time 0 (a clock edge: injectable in cycle 0); delivered in the cycle the closed form gives,
  // which is evaluated half a period later (docs/MODEL.md "SystemC timing").
  const uint64_t cycles = noc::testing::closed_form_latency(spec.noc_config(), 0, 15, 8192 / 50 + 1);
  EXPECT_DOUBLE_EQ(timing.start_s, 0.0);
  EXPECT_NEAR(timing.end_s, (cycles + 0.5) * 1e-9, 1e-15);
  EXPECT_NEAR(ex.link_bytes()[0 * 4 + 1], 164 * 50.0, 1e-9);  // 164 flits east out of node 0
}

TEST(CycleExecutor, BackgroundStreamsOverlapTheForegroundAndALaterLayerCanWaitForThem) {
  const hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  hw::System sys("sys", spec);
  firmware::CycleExecutor ex(sys);
  // Layer 1: a short foreground compute on node 0; a 4 MiB weight stream from node 5 along 6 -> 7 -> 11.
  auto first = std::make_shared<LayerSchedule>();
  const int bg = first->phase("copy", PhaseFamily::kOther, 1);
  first->compute(first->phase("work", PhaseFamily::kAttention), PhysicalNode(0), 1e6, 0);
  const uint64_t bytes = 4u << 20;
  const OpId stream = first->stream(bg, PhysicalNode(5), {PhysicalNode(6), PhysicalNode(7), PhysicalNode(11)},
                                    static_cast<double>(bytes), 256 * 1024);
  const uint64_t s1 = ex.execute(first);
  const double layer1_s = ex.now_s();
  EXPECT_NEAR(layer1_s, spec.compute.startup_ns * 1e-9 + 1e6 / 5e12, 1e-12);  // the compute alone
  EXPECT_FALSE(ex.tracker().done({s1, stream}));                              // 4 MiB at 50 GB/s take about 84 us
  // Layer 2 needs the copied weights: its foreground waits for the stream.
  auto second = std::make_shared<LayerSchedule>();
  const OpId ext = second->external(second->phase("copy", PhaseFamily::kOther, 1), {s1, stream});
  second->compute(second->phase("use", PhaseFamily::kMoeCompute), PhysicalNode(11), 1e6, 0, {ext});
  ex.execute(second);
  EXPECT_TRUE(ex.tracker().done({s1, stream}));
  EXPECT_GT(ex.now_s(), bytes / 50e9);
  for (int v : {6, 7, 11}) EXPECT_GE(sys.dram(v).stats().bytes_written, bytes) << v;  // every chain node stored it
  ex.drain();
  EXPECT_EQ(ex.tracker().background_left(), 0);
}

TEST(CycleExecutor, ACancelledStreamStopsAfterItsWindowAndStillCompletes) {
  // A 4 MiB stream from node 5 to node 6 in 256 KiB chunks (at least 5.2 us each on the 50 GB/s link),
  // at most 2 (the preset's broadcast_window_chunks) on the way to node 6; the foreground (10 us of
  // compute on node 0) ends and the stream is cancelled. By then at most floor(10.05 / 5.2) = 1 chunk
  // has arrived, so at most 1 + 2 were ever sent, and the window was kept full, so at least 2; each
  // sent chunk is stored whole.
  const hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  ASSERT_EQ(spec.compute.broadcast_window_chunks, 2u);
  hw::System sys("sys", spec);
  firmware::CycleExecutor ex(sys);
  auto s = std::make_shared<LayerSchedule>();
  s->compute(s->phase("work", PhaseFamily::kAttention), PhysicalNode(0), 5e7, 0);
  const int bg = s->phase("copy", PhaseFamily::kOther, 1);
  const uint64_t chunk = 256 * 1024;
  const OpId st = s->stream(bg, PhysicalNode(5), {PhysicalNode(6)}, 16.0 * chunk, static_cast<double>(chunk));
  const OpId later = s->stream(bg, PhysicalNode(5), {PhysicalNode(6)}, 16.0 * chunk, static_cast<double>(chunk), {st});
  const uint64_t serial = ex.execute(s);
  ex.cancel({serial, st});
  ex.cancel({serial, later});  // not issued yet: it sends nothing
  ex.drain();
  EXPECT_TRUE(ex.tracker().done({serial, st}));
  EXPECT_TRUE(ex.tracker().done({serial, later}));
  const uint64_t written = sys.dram(6).stats().bytes_written;
  EXPECT_EQ(written % chunk, 0u);
  EXPECT_GE(written / chunk, 2u);
  EXPECT_LE(written / chunk, 3u);
  EXPECT_EQ(sys.mesh().network().check_conservation(), "");
}

TEST(CycleExecutor, FusedReductionsSkipTheStartUp) {
  // A ring reduce-scatter of four 64 KiB chunks round the 2x2 square 0-1-5-4 (one hop per step): 3 steps
  // of (transfer, add). Fused adds remove one 50 ns start-up per step; the transfers start up to a clock
  // edge later or earlier (the adds' 6.55 ns are not whole cycles), so 1 ns per step of slack.
  hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  hw::System sys("sys", spec);
  firmware::CycleExecutor ex(sys);
  double took[2];
  for (mapping::ReduceMode mode : {mapping::ReduceMode::kKernel, mapping::ReduceMode::kFused}) {
    auto s = std::make_shared<LayerSchedule>();
    mapping::Collective c;
    c.kind = mapping::CollectiveKind::kRingReduceScatter;
    c.ring = {PhysicalNode(0), PhysicalNode(1), PhysicalNode(5), PhysicalNode(4)};
    c.chunk_bytes = {65536, 65536, 65536, 65536};
    c.reduce = mode;
    s->collective(s->phase("rs", PhaseFamily::kAllReduce), c);
    const double t0 = ex.now_s();
    ex.execute(s);
    took[mode == mapping::ReduceMode::kFused] = ex.now_s() - t0;
  }
  EXPECT_NEAR(took[0] - took[1], 3 * spec.compute.startup_ns * 1e-9, 3e-9);
}

TEST(CycleExecutor, TwoMicroBatchesOverlapByHand) {
  // Per micro-batch: 25 MFLOP on node 0 (a = 50 ns + 5 us), 100 kB to node 1 (t: the NoC's closed form),
  // 100 MFLOP on node 1 (c = 50 ns + 20 us); two independent chains: a + t + 2c (c is the longest).
  const hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  hw::System sys("sys", spec);
  firmware::CycleExecutor ex(sys);
  auto s = std::make_shared<LayerSchedule>();
  const int ph = s->phase("work", PhaseFamily::kMoeCompute), net = s->phase("send", PhaseFamily::kMoeComm);
  for (int mb = 0; mb < 2; ++mb) {
    const OpId a = s->compute(ph, PhysicalNode(0), 25e6, 0);
    const OpId t = s->transfer(net, PhysicalNode(0), PhysicalNode(1), 1e5, {a});
    s->compute(ph, PhysicalNode(1), 100e6, 0, {t});
  }
  ex.execute(s);
  const double a = 50e-9 + 5e-6, c = 50e-9 + 20e-6;
  const double t = (noc::testing::closed_form_latency(spec.noc_config(), 0, 1, 100000 / 50 + 1) + 0.5) * 1e-9;
  EXPECT_NEAR(ex.now_s(), a + t + 2 * c, 2e-9);
}

TEST(CycleExecutor, BidirectionalRingAllGatherOnAnIdleRingByClosedForm) {
  // The square 0-1-5-4 of a 4x4 mesh of 25 GB/s links with 50-byte flits at 1 GHz (an NI injects and
  // ejects 50 GB/s): an all-gather of four 1 MB chunks takes 3 x (0.5 MB / 25 GB/s) both ways.
  hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  spec.topology.links[0].gbytes_per_s = 25;
  spec.noc.flit_bytes = 50;
  hw::System sys("sys", spec);
  firmware::CycleExecutor ex(sys);
  auto s = std::make_shared<LayerSchedule>();
  mapping::Collective c;
  c.ring = {PhysicalNode(0), PhysicalNode(1), PhysicalNode(5), PhysicalNode(4)};
  c.chunk_bytes = {1e6, 1e6, 1e6, 1e6};
  c.bidirectional = true;
  s->collective(s->phase("ag", PhaseFamily::kAllReduce), c);
  ex.execute(s);
  EXPECT_NEAR(ex.now_s(), 3 * 0.5e6 / 25e9, 0.01 * 3 * 0.5e6 / 25e9);
}

TEST(CycleExecutor, AScheduleThatCanNeverFinishIsAnErrorNotAHang) {
  hw::System sys("sys", hw::preset("nmp-4x4-5t50g"));
  firmware::CycleExecutor ex(sys);
  auto s = std::make_shared<LayerSchedule>();
  const int ph = s->phase("wait", PhaseFamily::kOther);
  const OpId never = s->external(ph, {999, 0});  // an op of a schedule that will never run
  s->compute(ph, PhysicalNode(0), 1, 0, {never});
  try {
    ex.execute(s);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("never finished"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nmpsim
