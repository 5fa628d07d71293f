// Processing elements on a built system: roofline, weight copies, slower boundary links, energy.
#include <gtest/gtest.h>

#include <systemc>

#include "nmpsim/hw/system.h"
#include "noc_test_util.h"

namespace nmpsim {
namespace {

double ns(const sc_core::sc_time& t) { return t.to_seconds() * 1e9; }

double duration_ns(const pe::ProcessingElement& p, const std::string& label) {
  for (const auto& r : p.log())
    if (r.label == label) return ns(r.end - r.start);
  ADD_FAILURE() << "no command labelled " << label;
  return 0;
}

TEST(PeRoofline, GemvIsMemoryBoundAndLargeBatchGemmComputeBoundAtTheRidge) {
  hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");  // 5 TFLOP/s, 593.75 GB/s streaming
  hw::System sys("sys", spec);
  const double peak = spec.compute.peak_flops;
  const double bw = spec.memory.streaming_bytes_per_s();
  const double ridge = peak / bw;        // FLOP per byte: 8.42
  const uint64_t weights = 16ULL << 20;  // FP16: weights / 2 elements, 2 FLOPs per element per token
  // batch b tokens: flops = b * weights, so arithmetic intensity = b FLOP per byte.
  const std::vector<double> batches = {1, 4, ridge / 2, ridge * 2, 64, 512};
  for (size_t i = 0; i < batches.size(); ++i)
    sys.pe(static_cast<int>(i)).submit(pe::Command::compute(batches[i] * weights, weights, "gemm"));
  sc_core::sc_start();
  const double startup = spec.compute.startup_ns, first_miss = spec.memory.t_rcd_ns + spec.memory.t_cl_ns;
  for (size_t i = 0; i < batches.size(); ++i) {
    const double b = batches[i];
    const double t = duration_ns(sys.pe(static_cast<int>(i)), "gemm");
    const double memory_ns = first_miss + weights / bw * 1e9;
    const double compute_ns = b * weights / peak * 1e9;
    // The roofline: start-up + max(compute, memory).
    EXPECT_NEAR(t, startup + std::max(compute_ns, memory_ns), 0.01) << "batch " << b;
    if (b < ridge) {
      EXPECT_GT(memory_ns, compute_ns) << "batch " << b << " must be memory-bound";
    } else {
      EXPECT_GT(compute_ns, memory_ns) << "batch " << b << " must be compute-bound";
    }
  }
  // Below the ridge, time does not depend on the batch; above it, it grows linearly.
  EXPECT_NEAR(duration_ns(sys.pe(0), "gemm"), duration_ns(sys.pe(2), "gemm"), 0.01);
  EXPECT_NEAR((duration_ns(sys.pe(5), "gemm") - startup) / (duration_ns(sys.pe(4), "gemm") - startup), 8.0, 1e-6);
}

TEST(PeCopy, WeightCopyTakesDramReadPlusNocPlusDramWritePlusAck) {
  hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  const uint64_t bytes = 1 << 20;
  spec.compute.copy_chunk_bytes = bytes;  // one chunk: store and forward
  hw::System sys("sys", spec);
  sys.pe(0).submit(pe::Command::copy_weights(3, bytes, "copy"));
  sc_core::sc_start();
  const noc::NocConfig nc = spec.noc_config();
  const double dram_ns = spec.memory.t_rcd_ns + spec.memory.t_cl_ns + bytes / spec.memory.streaming_bytes_per_s() * 1e9;
  const uint64_t flits = (bytes + nc.flit_bytes - 1) / nc.flit_bytes;
  const double noc_ns = static_cast<double>(noc::testing::closed_form_latency(nc, 0, 3, flits));
  const double ack_ns = static_cast<double>(noc::testing::closed_form_latency(nc, 3, 0, 1));
  const double expected = dram_ns + noc_ns + dram_ns + ack_ns;
  // Each NoC message waits for the next clock cycle to start (< 1 ns each, two messages).
  const double t = duration_ns(sys.pe(0), "copy");
  EXPECT_GE(t, expected);
  EXPECT_LE(t, expected + 2.0);
  EXPECT_EQ(sys.dram(0).stats().bytes_read, bytes);
  EXPECT_EQ(sys.dram(3).stats().bytes_written, bytes);
  // The bytes really crossed the links of the X path 0 -> 1 -> 2 -> 3.
  for (int n : {0, 1, 2}) EXPECT_EQ(sys.mesh().network().router(n).flits_out(noc::kEast), flits);
}

TEST(PeCopy, ChunkedCopyPipelinesAndIsFaster) {
  hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  const uint64_t bytes = 4 << 20;
  hw::System sys("sys", spec);  // default 256 KiB chunks
  sys.pe(0).submit(pe::Command::copy_weights(15, bytes, "copy"));
  sc_core::sc_start();
  const noc::NocConfig nc = spec.noc_config();
  const double dram_ns = bytes / spec.memory.streaming_bytes_per_s() * 1e9;
  const double noc_ns = static_cast<double>(bytes) / nc.flit_bytes;  // one flit per cycle per link
  const double t = duration_ns(sys.pe(0), "copy");
  EXPECT_LT(t, 2 * dram_ns + noc_ns);       // faster than store and forward
  EXPECT_GT(t, std::max(dram_ns, noc_ns));  // but not faster than its slowest stage
  EXPECT_EQ(sys.dram(15).stats().bytes_written, bytes);
}

TEST(PeMessages, SendRecvAndWaitSends) {
  hw::System sys("sys", hw::preset("nmp-4x4-5t50g"));
  sys.pe(0).submit(pe::Command::send(5, 5000, 7, "send"));
  sys.pe(0).submit(pe::Command::wait_sends("wait"));
  sys.pe(5).submit(pe::Command::recv(7, 1, "recv"));
  sys.pe(9).submit(pe::Command::send(9, 100, 3, "self"));  // a node's message to itself: no NoC
  sys.pe(9).submit(pe::Command::recv(3, 1, "selfrecv"));
  sc_core::sc_start();
  const auto& recv = sys.pe(5).log().back();
  const auto& wait = sys.pe(0).log().back();
  EXPECT_EQ(recv.label, "recv");
  EXPECT_EQ(recv.end, wait.end);  // the sender learns of delivery in the same cycle
  const noc::NocConfig nc = sys.spec().noc_config();
  EXPECT_NEAR(ns(recv.end), noc::testing::closed_form_latency(nc, 0, 5, (5000 + 49) / 50) + 0.5, 1e-9);
  EXPECT_EQ(duration_ns(sys.pe(9), "selfrecv"), 0.0);
  EXPECT_TRUE(sys.all_idle());
}

TEST(HwBoundaries, WaferBoundaryLinksAreSlowerAsConfigured) {
  const hw::HardwareSpec spec = hw::preset("wsc-4wafer-8x8");
  hw::System sys("sys", spec);
  const uint64_t bytes = 8'000'000;
  // (6,0)->(7,0) stays on wafer 0; (7,0)->(8,0) crosses into wafer 1.
  sys.pe(6).submit(pe::Command::send(7, bytes, 1));
  sys.pe(7).submit(pe::Command::send(8, bytes, 2));  // both transfers start at time 0
  sys.pe(7).submit(pe::Command::recv(1, 1, "die"));
  sys.pe(8).submit(pe::Command::recv(2, 1, "wafer"));
  sc_core::sc_start();
  const double t_die = ns(sys.pe(7).log()[1].end), t_wafer = ns(sys.pe(8).log()[0].end);
  EXPECT_EQ(spec.topology.link_level(6, 7), mapping::LinkLevel::kDieToDie);
  EXPECT_EQ(spec.topology.link_level(7, 8), mapping::LinkLevel::kWaferToWafer);
  // Buffers are sized to the die links' credit round trip: 2 * 20 + 1 + 2 - 1 = 42 flits.
  EXPECT_EQ(spec.noc_config().buffer_flits, 42);
  // 4000 GB/s die links vs 9 TB/s per 8-link border = 562.5 GB/s each way: 7.11x slower.
  EXPECT_NEAR(t_wafer / t_die, 4000.0 / 562.5, 0.03 * 4000.0 / 562.5);
  EXPECT_NEAR(t_die, bytes / 4000.0, 0.02 * bytes / 4000.0);
  const hw::EnergyReport e = sys.energy();
  EXPECT_EQ(e.noc_flit_hops[1], 2000u);  // 8 MB in 4000-byte flits, one die-to-die hop
  EXPECT_EQ(e.noc_flit_hops[2], 2000u);
  EXPECT_NEAR(e.noc_pj, 2000 * 4000 * 8 * (0.1 + 0.1), 1.0);  // 0.1 pJ/bit on both levels
}

}  // namespace
}  // namespace nmpsim
