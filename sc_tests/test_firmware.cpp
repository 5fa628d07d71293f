// The firmware runtime on the SystemC hardware (cycle fidelity). One SystemC run per test process.
#include <gtest/gtest.h>

#include <numeric>

#include "mapping_test_util.h"
#include "nmpsim/firmware/cycle_executor.h"
#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/methods/hdmoe/prebroadcast_policy.h"
#include "noc_test_util.h"

namespace nmpsim {
namespace {

mapping::RoutingTrace make_trace(const mapping::ModelSpec& m, double skew, size_t tokens = 256) {
  return mapping::testing::trace_for(m, skew, tokens);
}

mapping::ModelSpec small_mixtral(int layers) {
  mapping::ModelSpec m = mapping::model_preset("mixtral-8x7b");
  m.moe_layers = layers;  // fewer layers keep the test fast; every layer is simulated the same way
  return m;
}

TEST(Firmware, RingAllReduceMatchesTheClosedFormOnAnIdleMesh) {
  // The one-way ring whose every add is a compute command (test_group_collective.cpp checks the
  // both-way, 2D and fused closed forms).
  hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  spec.collectives.algorithm = mapping::RingAlgorithm::kOneWay;
  spec.collectives.reduce = mapping::ReduceMode::kKernel;
  hw::System sys("sys", spec);
  const mapping::ModelSpec m = small_mixtral(1);
  const mapping::RoutingTrace tr = make_trace(m, 0.5);
  mapping::RunConfig cfg;
  cfg.shape = {16, 128};  // one token per node: ring chunks of 4096 x 2 = 8192 bytes
  cfg.steps = 1;
  const mapping::StrategyResult r = firmware::run_cycle(sys, m, tr, mapping::make_tp(m, 16), cfg);
  const mapping::LayerRecord& t = r.steps[0][0];
  // Ring over 16 nodes (a Hamiltonian cycle: every step is one hop on its own link), 15 steps each.
  const noc::NocConfig nc = spec.noc_config();
  const double hop_ns = noc::testing::closed_form_latency(nc, 0, 1, 8192 / 50 + 1);  // 164 flits
  // Each step: the message's zero-load latency, plus < 1 cycle until the next send's clock edge.
  const double ag_ns = r.phase_s(t, "allgather") * 1e9;
  EXPECT_GE(ag_ns, 15 * hop_ns);
  EXPECT_LE(ag_ns, 15 * (hop_ns + 1) + 1);
  // Reduce-scatter adds an element-wise add per step: start-up + 4096 FLOPs / 5 TFLOP/s.
  const double reduce_ns = spec.compute.startup_ns + 4096 / 5e3;
  const double rs_ns = r.phase_s(t, "reduce_scatter") * 1e9;
  EXPECT_GE(rs_ns, 15 * (hop_ns + reduce_ns));
  EXPECT_LE(rs_ns, 15 * (hop_ns + reduce_ns + 1) + 1);
  // The ring closed form 2 (g - 1) (alpha + chunk / bandwidth) of an all-reduce, with alpha the
  // per-message latency: 2 * 15 * (9 ns + 8192 B / 50 GB/s) = 5185.2 ns, plus the adds.
  const double closed = 2 * 15 * (9 + 8192 / 50.0) + 15 * reduce_ns;
  EXPECT_NEAR(r.family_s(t, mapping::PhaseFamily::kAllReduce) * 1e9, closed, 0.02 * closed);
}

TEST(Firmware, ConservesTokensAndBytes) {
  const hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  hw::System sys("sys", spec);
  const mapping::ModelSpec m = small_mixtral(2);
  const mapping::RoutingTrace tr = make_trace(m, 0.8);
  mapping::RunConfig cfg;
  cfg.shape = {24, 64};
  cfg.steps = 2;
  const mapping::StrategyResult r = firmware::run_cycle(sys, m, tr, mapping::make_ep(m, 16), cfg);
  EXPECT_DOUBLE_EQ(r.bytes_of("dispatch"), r.bytes_of("combine"));
  const double work = std::accumulate(r.node_token_work.begin(), r.node_token_work.end(), 0.0);
  EXPECT_NEAR(work, 24.0 * 2 * 2 * 2, 1e-9);  // batch x top-k x layers x steps
  // The flow model moves the same plans' traffic as whole flits on the same XY paths.
  const mapping::StrategyResult f = flow::run_flow(hw::to_analytical(spec), m, tr, mapping::make_ep(m, 16), cfg);
  EXPECT_DOUBLE_EQ(f.bytes_of("dispatch"), r.bytes_of("dispatch"));
  ASSERT_EQ(r.link_bytes.size(), f.link_bytes.size());
  for (size_t l = 0; l < r.link_bytes.size(); ++l) EXPECT_EQ(r.link_bytes[l], f.link_bytes[l]) << "link " << l;
  EXPECT_EQ(sys.mesh().network().check_conservation(), "");
  EXPECT_TRUE(sys.all_idle());
}

TEST(Firmware, TbtGrowsWithBatchSize) {
  const hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  hw::System sys("sys", spec);
  const mapping::ModelSpec m = small_mixtral(2);
  const mapping::RoutingTrace tr = make_trace(m, 0.8);
  double prev = 0;
  for (int batch : {4, 16, 64}) {
    mapping::RunConfig cfg;
    cfg.shape = {batch, 512};
    cfg.steps = 1;
    const double tbt = firmware::run_cycle(sys, m, tr, mapping::make_ep(m, 16), cfg).mean_tbt_s();
    EXPECT_GT(tbt, prev) << batch;
    prev = tbt;
  }
}

/// EP's TBT over TP's, per hardware point, for a hot-expert trace (cycle fidelity, one process).
TEST(Firmware, EpSuffersFromHotExpertsAndTpFromSlowLinks) {
  const mapping::ModelSpec m = small_mixtral(2);
  const mapping::RoutingTrace hot = make_trace(m, 2.5);  // one expert takes most tokens
  const mapping::RoutingTrace flat = make_trace(m, 0.0);
  mapping::RunConfig cfg;
  cfg.shape = {64, 256};
  cfg.steps = 1;
  // One System per process: the three hardware points are run through the flow model, and the
  // cycle-level check uses the middle point.
  double ratio[3];
  int i = 0;
  for (const char* hwname : {"nmp-4x4-2.5t75g", "nmp-4x4-5t50g", "nmp-4x4-10t25g"}) {
    const auto ah = hw::to_analytical(hw::preset(hwname));
    const double tp = flow::run_flow(ah, m, hot, mapping::make_tp(m, 16), cfg).mean_tbt_s();
    const double ep = flow::run_flow(ah, m, hot, mapping::make_ep(m, 16), cfg).mean_tbt_s();
    ratio[i++] = ep / tp;
  }
  // The HD-MoE paper's direction: as compute grows and links slow, EP gains on TP.
  EXPECT_GT(ratio[0], ratio[1]);
  EXPECT_GT(ratio[1], ratio[2]);
  hw::System sys("sys", hw::preset("nmp-4x4-10t25g"));
  const mapping::StrategyResult tp = firmware::run_cycle(sys, m, hot, mapping::make_tp(m, 16), cfg);
  const mapping::StrategyResult ep_hot = firmware::run_cycle(sys, m, hot, mapping::make_ep(m, 16), cfg);
  const mapping::StrategyResult ep_flat = firmware::run_cycle(sys, m, flat, mapping::make_ep(m, 16), cfg);
  auto comm = [](const mapping::StrategyResult& r) {
    return r.family_s(r.mean_layers()[0], mapping::PhaseFamily::kMoeComm);
  };
  auto compute = [](const mapping::StrategyResult& r) { return r.phase_s(r.mean_layers()[0], "experts"); };
  // TP sends every token to the 15 other nodes; EP to at most 2 experts x 2 nodes per expert group.
  EXPECT_GE(tp.bytes_of("dispatch"), 15.0 / 4 * ep_hot.bytes_of("dispatch"));
  EXPECT_GT(comm(tp), comm(ep_hot));                   // and over 25 GB/s links that costs TP more time
  EXPECT_GT(compute(ep_hot), 1.2 * compute(ep_flat));  // a hot expert overloads its EP group
  EXPECT_GT(ep_hot.mean_layers()[0].expert_imbalance_s, ep_flat.mean_layers()[0].expert_imbalance_s);
}

TEST(Firmware, RunsTheRealMixtralTraceWithAttentionGroups) {
  const hw::HardwareSpec spec = hw::preset("nmp-4x8-5t50g");
  hw::System sys("sys", spec);
  const mapping::ModelSpec m = small_mixtral(3);
  const mapping::RoutingTrace tr = mapping::load_trace("mtbench-math", 8, 2);
  mapping::RunConfig cfg;
  cfg.shape = {32, 256};
  cfg.steps = 1;
  cfg.attn_tp = 8;  // four 2x4 attention groups
  const mapping::StrategyResult r = firmware::run_cycle(sys, m, tr, mapping::make_cb(m, spec.topology, tr, 2), cfg);
  EXPECT_EQ(r.steps[0].size(), 3u);
  EXPECT_GT(r.mean_tbt_s(), 0);
  for (const auto& l : r.steps[0]) {
    EXPECT_GT(r.phase_s(l, "allgather"), 0);
    EXPECT_GT(r.phase_s(l, "experts"), 0);
  }
  EXPECT_EQ(sys.mesh().network().check_conservation(), "");
}

}  // namespace
}  // namespace nmpsim

namespace nmpsim {
namespace {

TEST(Firmware, PrebroadcastMovesRealBytesAndNeverLosesAToken) {
  const hw::HardwareSpec spec = hw::preset("nmp-4x4-2.5t75g");
  hw::System sys("sys", spec);
  mapping::ModelSpec m = mapping::model_preset("deepseek-v2-lite");
  m.moe_layers = 4;
  m.dense_layers = 0;
  const mapping::RoutingTrace tr = make_trace(m, 1.2, 1024);
  mapping::RunConfig cfg;
  cfg.shape = {256, 256};
  cfg.steps = 1;
  const mapping::StrategyResult st = firmware::run_cycle(sys, m, tr, mapping::make_ep(m, 16), cfg);
  methods::hdmoe::PrebroadcastOptions po;
  po.experts = 2;
  po.predict = methods::hdmoe::Predictor::kTrace;
  mapping::PolicyList policies;
  policies.emplace_back("hdmoe-prebroadcast", std::make_unique<methods::hdmoe::PrebroadcastPolicy>(po));
  const mapping::StrategyResult dy = firmware::run_cycle(sys, m, tr, mapping::make_ep(m, 16), cfg, &policies);
  const nlohmann::json& pb = dy.policies["hdmoe-prebroadcast"];
  const double issued = pb["experts_issued"], used = pb["experts_used"], bytes = pb["bytes"];
  EXPECT_GT(issued, 0);
  EXPECT_GT(used, 0);
  EXPECT_GT(bytes, 0);
  // Every broadcast is used by the next layer or cancelled there; with a perfect predictor what landed
  // saves exactly what was predicted.
  EXPECT_EQ(used + pb["experts_cancelled"].get<double>(), issued);
  EXPECT_NEAR(pb["realised_saving_us"].get<double>(), pb["predicted_saving_us"].get<double>(), 1e-6);
  double links_static = 0, links_dynamic = 0;
  for (double b : st.link_bytes) links_static += b;
  for (double b : dy.link_bytes) links_dynamic += b;
  // Every broadcast byte crosses at least one link on its way to the first target.
  EXPECT_GE(links_dynamic - links_static, bytes - 1.0 * issued * 50);
  // Never loses a token: routed work still adds up to batch x top-k per layer, and combine = dispatch.
  for (const auto* r : {&st, &dy}) {
    const double work = std::accumulate(r->node_token_work.begin(), r->node_token_work.end(), 0.0);
    EXPECT_NEAR(work, 256.0 * m.top_k * m.moe_layers, 1e-6);
    EXPECT_DOUBLE_EQ(r->bytes_of("dispatch"), r->bytes_of("combine"));
  }
  // The copies land in the targets' DRAM (nothing else writes DRAM): every byte at least once.
  double written = 0;
  for (int v = 0; v < 16; ++v) written += sys.dram(v).stats().bytes_written;
  EXPECT_GE(written, bytes);
  EXPECT_EQ(sys.mesh().network().check_conservation(), "");
  EXPECT_TRUE(sys.background_idle());
  // Least-loaded dispatch lowers the expert imbalance of this skewed EP placement.
  EXPECT_LT(dy.mean_layers()[1].expert_imbalance_s, st.mean_layers()[1].expert_imbalance_s);
  // The broadcasts ran on a background stream: their phase is in the table, but it is not on any
  // layer's critical path (no foreground op waits for them).
  EXPECT_GE(dy.find_phase("prebroadcast"), 0);
  EXPECT_GT(dy.bytes_of("prebroadcast"), 0);
  for (const auto& l : dy.steps[0]) EXPECT_EQ(dy.phase_s(l, "prebroadcast"), 0.0);
}

}  // namespace
}  // namespace nmpsim
