// The runtime policies in training steps (docs/MODEL.md "Training step: policies"): the copies' gradient
// collectives, the copies' optimizer updates and the migrations' bytes against hand-computed values,
// on the tiny models of hardening_util.h (W = 3 x 256 x 512 x 2 B per expert).
#include <map>

#include "hardening_util.h"

namespace nmpsim {
namespace {

using namespace nmpsim::hardening;  // NOLINT: scratch directories and check()

constexpr double kP = 3.0 * 256 * 512;  // parameters of one expert of the tiny models
constexpr double kW = 2 * kP;           // its bytes at 2 B per weight
/// Bytes one expert's move carries in training: weights and optimizer state (FP32 master and two
/// moments for 2 B weights: 12 B per parameter; docs/MODEL.md "Training step").
constexpr double kMoved = kP * (2 + 12);

/// The tiny model with 16 experts: one whole expert per node of a 4x4 chip.
const std::string kTiny16 =
    R"({"name": "tiny16", "experts": 16, "top_k": 2, "moe_layers": 2, "hidden": 256, "intermediate": 512,
        "max_context": 4096, "attention": {"kind": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 64}})";

/// A scratch directory with tiny16.json, and the arguments of a 2-step training run of it on the 4x4
/// chip (`strategy`, skewed routing) at flow fidelity.
std::string tiny16_run(const std::string& name, const std::string& strategy, std::string& dir) {
  dir = scratch_with_tiny_model(name);
  write(dir + "/tiny16.json", kTiny16);
  return "--hw nmp-4x4-5t50g --model " + dir +
         "/tiny16.json --fidelity flow --batch 2 --prompt-tokens 64 --steps 2 --skew 1.2 --strategy " + strategy;
}

/// One training run's summary.json strategies, or a failed expectation.
nlohmann::json train(const std::string& dir, const std::string& name, const std::string& args) {
  const std::string out = dir + "/" + name;
  const CliRun r = testing::nmpsim("run --phase train --no-plots --quiet --out " + out + " " + args);
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(testing::read_all(out + "/summary.json"))["strategies"];
}

double phase_bytes(const nlohmann::json& st, const std::string& name) {
  for (const auto& p : st["phases"])
    if (p["name"] == name) return p["bytes"].get<double>();
  return 0;
}

double sum(const nlohmann::json& values) {
  double s = 0;
  for (const auto& v : values) s += v.get<double>();
  return s;
}

TEST(TrainPolicies, HybridEpCopiesReduceTheirGradientsOverTheBoxAndResidentOnesAreUpdatedByEveryHolder) {
  // 8 experts on 16 nodes: every node holds half an expert (W / 2 per MoE layer); domains of 4 nodes
  // (4 boxes). Stream: each box reduce-scatters its members' pieces, chunk W / 2 each: (4 - 1) x 4 x
  // W / 2 = 6 W per box, 24 W per layer, 48 W over the 2 layers. Resident: a ring all-reduce of the
  // box's 2 W: 2 x 3 x 2 W = 12 W per box, 96 W in all. EP's gradient synchronisation (the gate) is
  // the same in every run.
  const std::string dir = scratch_with_tiny_model("train_hybridep");
  const std::string base = "--hw nmp-4x4-5t50g --model " + dir +
                           "/tiny.json --fidelity flow --batch 2 --prompt-tokens 64 --steps 1 --strategy ep,hybridep "
                           "--sed 4 --strategy-opt hybridep.mode=";
  const nlohmann::json stream = train(dir, "stream", base + "stream");
  const nlohmann::json resident = train(dir, "resident", base + "resident");
  const double ep_sync = phase_bytes(stream["ep"], "grad_sync");
  EXPECT_DOUBLE_EQ(phase_bytes(resident["ep"], "grad_sync"), ep_sync);
  EXPECT_NEAR(phase_bytes(stream["hybridep"], "grad_sync") - ep_sync, 48 * kW, 1e-6 * kW);
  EXPECT_NEAR(phase_bytes(resident["hybridep"], "grad_sync") - ep_sync, 96 * kW, 1e-6 * kW);
  EXPECT_NEAR(stream["hybridep"]["policies"]["hybridep"]["gradient_bytes_sent"].get<double>(), 48 * kW, 1e-6 * kW);
  // Resident: every node also updates the 3 other members' pieces (3 x P / 2 per layer, 3 P over the
  // 2 layers) at 16 FLOPs per parameter: 16 nodes x 16 x 3 P more than stream. Everything else is the
  // same FLOPs in both modes: the same domains route the same tokens, and the all-reduce's
  // reduce-scatter adds as many elements as the stream's ((g - 1) x the box's elements).
  const double extra = sum(resident["hybridep"]["node_flops"]) - sum(stream["hybridep"]["node_flops"]);
  EXPECT_NEAR(extra, 16 * 16 * 3 * kP, 1e-9 * extra);
}

TEST(TrainPolicies, HybridEpSrSendsExpertsAtTheRatioAndAllReducesTheSharedExpert) {
  // As above (W / 2 per node and MoE layer, boxes of 4), stream with SR at 8x:
  // - the gather: each node sends W / 16 to its 3 box members: 16 x 3 x W / 16 = 3 W per layer, 6 W
  //   over the 2 layers (48 W without SR);
  // - the shared expert (one per layer, W) all-reduced over all 16 nodes: 2 x 15 x W per layer, 60 W;
  // - the copies' gradients back to the owners: full 48 W; sr 48 W / 8 = 6 W; none 0;
  // - SREncode after the update: per node and layer 2 x W / 2 + W / 16, 16 x 2 x 1.0625 W = 34 W;
  // - SRDecode of every copy before its experts: W / 16 + 2 x W / 2 per copy, 3 copies per node and
  //   layer: 16 x 2 x 3 x 1.0625 W = 102 W.
  const std::string dir = scratch_with_tiny_model("train_hybridep_sr");
  const std::string base = "--hw nmp-4x4-5t50g --model " + dir +
                           "/tiny.json --fidelity flow --batch 2 --prompt-tokens 64 --steps 1 --strategy hybridep "
                           "--sed 4 --strategy-opt hybridep.mode=stream --strategy-opt hybridep.sr_ratio=8 "
                           "--strategy-opt hybridep.grad_return=";
  std::map<std::string, double> sent;
  for (const char* how : {"full", "sr", "none"}) {
    const nlohmann::json p = train(dir, how, base + how)["hybridep"]["policies"]["hybridep"];
    EXPECT_NEAR(p["allgather_bytes"].get<double>(), 6 * kW, 1e-9 * kW) << how;
    EXPECT_NEAR(p["shared_allreduce_bytes"].get<double>(), 60 * kW, 1e-9 * kW) << how;
    EXPECT_NEAR(p["sr_encode_dram_bytes"].get<double>(), 34 * kW, 1e-9 * kW) << how;
    EXPECT_NEAR(p["sr_decode_dram_bytes"].get<double>(), 102 * kW, 1e-9 * kW) << how;
    sent[how] = p["gradient_bytes_sent"].get<double>();
  }
  EXPECT_NEAR(sent["full"], 48 * kW, 1e-9 * kW);
  EXPECT_NEAR(sent["sr"], 6 * kW, 1e-9 * kW);
  EXPECT_EQ(sent["none"], 0.0);
}

TEST(TrainPolicies, HybridEpGathersEarlierTheEarlierItIssuesThem) {
  // The same gathers (48 W over the step) after each gate, from each layer's start, or every layer's
  // from the step's start: the forward can only get shorter the earlier they go. `choose once` keeps
  // one domain layout for every layer of every step.
  const std::string dir = scratch_with_tiny_model("train_hybridep_prefetch");
  const std::string base = "--hw nmp-4x4-5t50g --model " + dir +
                           "/tiny.json --fidelity flow --batch 2 --prompt-tokens 64 --steps 2 --strategy hybridep "
                           "--strategy-opt hybridep.mode=stream ";
  std::map<std::string, double> forward;
  for (const char* when : {"gate", "layer", "step"}) {
    const nlohmann::json st = train(dir, when, base + "--sed 4 --strategy-opt hybridep.prefetch=" + when)["hybridep"];
    EXPECT_NEAR(st["policies"]["hybridep"]["allgather_bytes"].get<double>(), 2 * 48 * kW, 1e-9 * kW) << when;
    forward[when] = st["forward_us"].get<double>();
  }
  EXPECT_LE(forward["layer"], forward["gate"] * (1 + 1e-9));
  EXPECT_LE(forward["step"], forward["layer"] * (1 + 1e-9));
  const nlohmann::json once = train(dir, "once", base + "--strategy-opt hybridep.choose=once")["hybridep"];
  const nlohmann::json& chosen = once["policies"]["hybridep"]["sed_chosen"];
  ASSERT_EQ(chosen.size(), 1u) << chosen.dump();
  EXPECT_EQ(chosen.begin()->get<int>(), 2 * 2);  // 2 MoE layers x 2 steps
}

TEST(TrainPolicies, HybridEpOptionsThatCannotWorkTogetherAreOneLineErrors) {
  const std::string base =
      "run --phase train --no-plots --quiet --hw nmp-4x4-5t50g --model {D}/tiny.json --fidelity "
      "flow --batch 2 --prompt-tokens 64 --steps 1 --strategy hybridep --out {D}/o "
      "--strategy-opt hybridep.";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"mode=stream --strategy-opt hybridep.sr_ratio=0.5", "sr_ratio: expected 0 (off) or a ratio of at least 1"},
      {"mode=stream --strategy-opt hybridep.sr_ratio=50 --strategy-opt hybridep.sr_keep=0.01",
       "sr_ratio: give sr_ratio or sr_keep, not both"},
      {"mode=resident --strategy-opt hybridep.sr_ratio=50", "sr_ratio: SR needs mode stream"},
      {"mode=stream --strategy-opt hybridep.grad_return=sr", "grad_return: sr compresses the gradients at sr_ratio"},
      {"mode=stream --strategy-opt hybridep.grad_return=half", "grad_return: expected full, sr or none, got 'half'"},
      {"mode=stream --strategy-opt hybridep.choose=once --sed 4", "choose: once chooses the domain sizes"},
      {"mode=stream --strategy-opt hybridep.prefetch=step", "prefetch: step gathers every layer at the step's start"},
      {"mode=resident --strategy-opt hybridep.prefetch=gate", "prefetch: needs mode stream"},
      {"mode=resident --strategy-opt hybridep.choose=once", "choose: needs mode stream"}};
  int n = 0;
  for (const auto& [opts, want] : cases)
    check({"hybridep_options_" + std::to_string(n++), base + opts, 2, want,
           [](const std::string& d) { write(d + "/tiny.json", kTinyMoeModel); }});
}

TEST(TrainPolicies, FasterMoeShadowsAreBroadcastAndTheirGradientsReducedToTheOwner) {
  // One whole expert per node (W): each shadow is broadcast to the 15 other nodes in the forward and
  // its 15 copies' gradients reduced to its owner in the backward: 15 W each way per shadow. A shadowed
  // expert's tokens stay at home: the dispatch carries fewer bytes than without shadows.
  // 65536 tokens, skewed: the hot experts' tokens outweigh their weights (more than 12288 tokens of
  // 512 B each against W = 786 KB per node, choose_shadows' rule).
  const std::string dir = scratch_with_tiny_model("train_fastermoe");
  write(dir + "/tiny16.json", kTiny16);
  const std::string base = "--hw nmp-4x4-5t50g --model " + dir +
                           "/tiny16.json --fidelity flow --batch 64 --prompt-tokens 1024 --steps 2 --skew 1.2 "
                           "--synthetic-tokens 262144 --strategy ep";
  const nlohmann::json plain = train(dir, "plain", base)["ep"];
  const nlohmann::json st =
      train(dir, "shadow", base + " --policy fastermoe-shadow --policy-opt fastermoe-shadow.max_shadows=16")["ep"];
  const nlohmann::json& p = st["policies"]["fastermoe-shadow"];
  const double shadows = p["shadows_per_layer"].get<double>() * 2 * 2;  // 2 MoE layers x 2 steps
  EXPECT_GT(shadows, 0) << p.dump();
  EXPECT_NEAR(p["broadcast_bytes"].get<double>(), shadows * 15 * kW, 1e-9 * kW);
  EXPECT_NEAR(p["gradient_bytes_sent"].get<double>(), shadows * 15 * kW, 1e-9 * kW);
  EXPECT_LT(phase_bytes(st, "dispatch"), phase_bytes(plain, "dispatch"));
}

TEST(TrainPolicies, HierMoeSwapsMoveWeightsAndOptimizerStateAfterTheUpdate) {
  // One whole expert per node; a swap round at step 1 on step 0's routing (every step, a horizon
  // that any saving pays back). Every copy carries its expert's weights and optimizer state, in the
  // foreground phase "migration" of step 1's optimizer schedule.
  std::string dir;
  const std::string base = tiny16_run("train_hiermoe_swap", "hiermoe", dir);
  const nlohmann::json off = train(dir, "off", base);
  const nlohmann::json on =
      train(dir, "on", base + " --strategy-opt hiermoe.swap_every=1 --strategy-opt hiermoe.swap_horizon_steps=1000000");
  const nlohmann::json& swap = on["hiermoe"]["policies"]["hiermoe"]["online_swap"];
  const double moves = static_cast<double>(swap["moves"].size());
  ASSERT_GT(moves, 0);
  EXPECT_NEAR(swap["migration_bytes"].get<double>(), moves * kMoved, 1e-6 * kMoved);
  EXPECT_NEAR(phase_bytes(on["hiermoe"], "migration"), moves * kMoved, 1e-6 * kMoved);
  for (const auto& p : on["hiermoe"]["phases"]) {
    if (p["name"] == "migration") {
      EXPECT_EQ(p["stream"], 0);
    }
  }
  // The moves are on the step's critical path, after the update: the optimizer's share grows.
  EXPECT_GT(on["hiermoe"]["optimizer_us"].get<double>(), off["hiermoe"]["optimizer_us"].get<double>());
}

TEST(TrainPolicies, HierMoeStrategyFixesTheDimensionAndCapsOnlineSwapRounds) {
  // One whole expert per node of the 4x4 chip (D = 2 with its one virtual quadrant level): a token's
  // two experts sit on two nodes, so deduplicating per node saves nothing (rate 0). dimension=N fixes
  // every MoE layer's d; swap_max=1 lets a round swap one pair per layer: two moves.
  std::string dir;
  const std::string base = tiny16_run("train_hiermoe_options", "hiermoe", dir);
  for (const int d : {1, 2}) {
    const nlohmann::json st =
        train(dir, "d" + std::to_string(d),
              base + " --strategy-opt hiermoe.dimension=" + std::to_string(d))["hiermoe"]["policies"]["hiermoe"];
    EXPECT_EQ(st["d_star_per_layer"], nlohmann::json::array({d, d}));
    EXPECT_EQ(st["node_duplication_rate"].get<double>(), 0.0);
  }
  // dimension=2 without deduplication is the 2DH baseline: the same placement, the same messages.
  std::string dir2;
  const nlohmann::json h2 = train(dir2, "h2",
                                  tiny16_run("train_hiermoe_h2", "hiermoe,hiermoe-2dh", dir2) +
                                      " --strategy-opt hiermoe.dimension=2 --strategy-opt hiermoe.dedup=false");
  EXPECT_DOUBLE_EQ(h2["hiermoe"]["moe_comm_us"].get<double>(), h2["hiermoe-2dh"]["moe_comm_us"].get<double>());
  const nlohmann::json capped = train(dir, "capped",
                                      base +
                                          " --strategy-opt hiermoe.swap_every=1 --strategy-opt "
                                          "hiermoe.swap_horizon_steps=1000000 --strategy-opt hiermoe.swap_max=1");
  std::map<std::pair<int, int>, int> moves;  // (step, MoE layer) -> moves
  for (const auto& m : capped["hiermoe"]["policies"]["hiermoe"]["online_swap"]["moves"])
    ++moves[{m["step"].get<int>(), m["moe_layer"].get<int>()}];
  ASSERT_FALSE(moves.empty());
  for (const auto& [key, n] : moves) EXPECT_EQ(n, 2) << "step " << key.first << " layer " << key.second;
  check(Case{
      "hiermoe_dimension_3",
      "run --fidelity flow --strategy hiermoe --strategy-opt hiermoe.dimension=3 "
      "--no-plots --out {D}/out --phase train --prompt-tokens 16 --hw nmp-4x4-5t50g",
      2, "strategy hiermoe options: hiermoe needs a hierarchy of 3 dimensions; this one has 2 (set virtual_levels)"});
}

TEST(TrainPolicies, BalancerReplicasAreAllReducedOverTheirHoldersAndMovedWithTheirState) {
  // EP with one shadow slot per node; step 0's routing triggers a round at step 1, moved paused
  // (before step 1's forward) with the optimizer state. In step 1's backward each replicated expert's
  // gradient is all-reduced over its holders: 2 (g - 1) W for g holders.
  std::string dir;
  const std::string base = tiny16_run("train_balancer", "ep", dir);
  const nlohmann::json off = train(dir, "off", base);
  const nlohmann::json on =
      train(dir, "on",
            base +
                " --policy moentwine-balancer --policy-opt moentwine-balancer.migrate=paused "
                "--policy-opt moentwine-balancer.window=1 --policy-opt moentwine-balancer.alpha=0");
  const nlohmann::json& b = on["ep"]["policies"]["moentwine-balancer"];
  const double landed = b["replicas_landed"].get<double>();
  ASSERT_GT(landed, 0);
  EXPECT_NEAR(phase_bytes(on["ep"], "migration"), landed * kMoved, 1e-6 * kMoved);
  // One slot per node and layer: each replicated expert has its native holder and its replicas.
  const double grad = b["gradient_bytes_sent"].get<double>();
  EXPECT_NEAR(phase_bytes(on["ep"], "grad_sync") - phase_bytes(off["ep"], "grad_sync"), grad, 1e-6 * grad);
  EXPECT_GE(grad, 2 * landed * kW - 1e-6 * grad);  // g - 1 >= 1 replica per replicated expert
  EXPECT_LE(grad, 2 * landed * landed * kW);
}

TEST(TrainPolicies, PrebroadcastCopiesSendEachPiecesGradientToItsOwner) {
  // Cycle fidelity (the policy's own condition). EP: every expert whole on one node; two experts
  // broadcast to the 4 least-loaded nodes (none of them the hot expert's owner here), used by the next
  // layer. In its backward each of the 4 holders sends its whole-expert gradient (W) to the owner:
  // 2 x 4 x W = 8 W beside EP's gradient synchronisation, which the run without the policy has alone.
  const std::string dir = scratch_with_tiny_model("train_prebroadcast");
  write(dir + "/tiny16.json", kTiny16);
  const std::string base = "--hw nmp-4x4-2.5t75g --model " + dir +
                           "/tiny16.json --fidelity cycle --batch 4 --prompt-tokens 256 --steps 1 --skew 1.5 "
                           "--strategy ep";
  const nlohmann::json off = train(dir, "off", base);
  const nlohmann::json on = train(dir, "on",
                                  base +
                                      " --policy hdmoe-prebroadcast --policy-opt hdmoe-prebroadcast.experts=2 "
                                      "--policy-opt hdmoe-prebroadcast.predict=trace");
  const nlohmann::json& pb = on["ep"]["policies"]["hdmoe-prebroadcast"];
  ASSERT_EQ(pb["experts_used"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(pb["gradient_bytes_sent"].get<double>(), 8 * kW);
  EXPECT_DOUBLE_EQ(phase_bytes(on["ep"], "grad_sync") - phase_bytes(off["ep"], "grad_sync"), 8 * kW);
}

TEST(TrainPolicies, StagedBalancerMigrationCannotTrainAndSaysWhatCan) {
  check(Case{"staged_balancer",
             "run --fidelity flow --strategy ep --no-plots --out {D}/out --phase train --prompt-tokens 16 "
             "--hw wsc-4x4 --attn-tp 4 --policy moentwine-balancer",
             2,
             "policies (--policy): moentwine-balancer cannot run in a training step (--phase train): "
             "migrate=staged copies an expert's optimizer state while the step's update changes it; set "
             "migrate=paused or migrate=free"});
}

}  // namespace
}  // namespace nmpsim
