// `nmpsim run --phase train`: bad training runs are one-line errors that write nothing; a training
// step's parts add up to it at both fidelities and flow tracks cycle (docs/MODEL.md "Training step",
// docs/FORMATS.md "summary.json").
#include <algorithm>
#include <map>

#include "hardening_util.h"

namespace nmpsim {
namespace {

using namespace nmpsim::hardening;  // NOLINT: the table's types and check()

const std::string kRun = "run --fidelity flow --strategy tp --no-plots --out {D}/out";

TEST(CliTrain, BadTrainingRunsAreOneLineErrorsThatWriteNothing) {
  for (const Case& c : std::vector<Case>{
           {"sequence_0", kRun + " --phase train --prompt-tokens 0", 2,
            "prompt_tokens (--prompt-tokens): 0: phase train needs a prompt of at least 1 token"},
           {"sequence_beyond_context", kRun + " --phase train --prompt-tokens 40000", 2,
            "prompt_tokens (--prompt-tokens): 40000 is beyond mixtral-8x7b's context of 32768 tokens"},
           {"recompute_on_decode", kRun + " --recompute", 2,
            "recompute (--recompute): applies to phase train, not decode (--phase)"},
           {"recompute_on_prefill", kRun + " --phase prefill --prompt-tokens 16 --recompute", 2,
            "recompute (--recompute): applies to phase train, not prefill (--phase)"},
           {"context_on_train", kRun + " --phase train --prompt-tokens 16 --context 8", 2,
            "--context: a train step attends over its prompt"},
           {"chunk_on_train", kRun + " --phase train --prompt-tokens 16 --prefill-chunk 8", 2,
            "prefill_chunk (--prefill-chunk): applies to phase mixed, not train"},
           {"policy_cannot_train", kRun + " --phase train --prompt-tokens 16 --policy moentwine-balancer", 2,
            "policies (--policy): moentwine-balancer cannot run in a training step (--phase train): migrate=staged"},
           // By hand, TP of Mixtral-8x7B on 16 PEs: 5.41 GiB of weights per PE (as for inference), as much
           // again of gradients, and 12 B of optimizer state per 2 B weight: 6 x 5.41 = 32.45 GiB.
           {"weights_gradients_and_state_do_not_fit",
            "run --no-plots --fidelity flow --strategy tp --out {D}/out --phase train --batch 2 --prompt-tokens 128 "
            "--hw nmp-4x4-5t50g",
            2,
            "needs 43.38 GiB on node 0 (0,0) (weights 5.41, gradients 5.41, optimizer state 32.45, KV cache 0.00, "
            "activations 0.12 GiB), which has 8.00 GiB"},
       })
    check(c);
}

TEST(CliTrain, AStepsPartsAddUpAtBothFidelitiesAndFlowTracksCycle) {
  const std::string dir = scratch_with_tiny_model("train_parts");
  std::map<std::string, double> step;
  for (const char* fidelity : {"flow", "cycle"}) {
    const std::string out = dir + "/" + fidelity;
    const CliRun r = testing::nmpsim("run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json --strategy tp,ep " +
                                     "--phase train --batch 2 --prompt-tokens 256 --steps 1 --no-plots --quiet " +
                                     "--fidelity " + fidelity + " --out " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json j = nlohmann::json::parse(testing::read_all(out + "/summary.json"));
    EXPECT_EQ(j["config"]["phase"], "train");
    for (const char* s : {"tp", "ep"}) {
      const nlohmann::json& st = j["strategies"][s];
      const double total = st["step_us"].get<double>();
      EXPECT_DOUBLE_EQ(total, st["mean_tbt_us"].get<double>());
      double parts = 0;
      for (const char* p : {"forward_us", "backward_us", "grad_sync_us", "optimizer_us"}) parts += st[p].get<double>();
      EXPECT_NEAR(parts, total, 1e-9 * total) << s;
      EXPECT_GT(st["backward_us"].get<double>(), st["forward_us"].get<double>()) << s;
      EXPECT_NEAR(st["tokens_per_s"].get<double>(), 512 / (total * 1e-6), 1e-6 * st["tokens_per_s"].get<double>());
      EXPECT_GT(st["mfu"].get<double>(), 0.0);
      EXPECT_LT(st["mfu"].get<double>(), 1.0);
      EXPECT_FALSE(st.contains("ttft_us"));
      step[std::string(fidelity) + s] = total;
    }
  }
  for (const char* s : {"tp", "ep"})
    EXPECT_NEAR(step[std::string("flow") + s], step[std::string("cycle") + s], 0.05 * step[std::string("cycle") + s])
        << s << ": flow against cycle";
}

TEST(CliTrain, RecomputationCostsAForwardAndTheSpecRerunsIt) {
  const std::string dir = scratch_with_tiny_model("train_recompute");
  const std::string base = "run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json --strategy tp --phase train " +
                           "--batch 2 --prompt-tokens 256 --steps 1 --no-plots --quiet --fidelity flow --out ";
  ASSERT_EQ(testing::nmpsim(base + dir + "/a").code, 0);
  const CliRun r = testing::nmpsim(base + dir + "/b --recompute");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto read = [&](const std::string& d) {
    return nlohmann::json::parse(testing::read_all(dir + "/" + d + "/summary.json"));
  };
  const nlohmann::json a = read("a")["strategies"]["tp"], b = read("b")["strategies"]["tp"];
  EXPECT_DOUBLE_EQ(a["recompute_us"].get<double>(), 0.0);
  // The recomputation is a forward again, inside the backward.
  EXPECT_NEAR(b["recompute_us"].get<double>(), a["forward_us"].get<double>(), 0.02 * a["forward_us"].get<double>());
  EXPECT_NEAR(b["backward_us"].get<double>() - b["recompute_us"].get<double>(), a["backward_us"].get<double>(),
              0.02 * a["backward_us"].get<double>());
  EXPECT_EQ(read("b")["spec"]["recompute"], true);
  ASSERT_EQ(testing::nmpsim("run --spec " + dir + "/b/summary.json --no-plots --quiet --out " + dir + "/c").code, 0);
  EXPECT_EQ(read("c")["strategies"]["tp"]["step_us"], b["step_us"]);
}

TEST(CliTrain, TutelChunksMoveTheSameBytesInBothPassesAndTheSpecRerunsThem) {
  // EP in 4 chunks: every all-to-all phase (forward and backward) carries the same bytes as whole, in
  // more messages (the timing by hand: ChunkedMoe.*); the spec keeps the count and reruns the step.
  const std::string dir = scratch_with_tiny_model("train_tutel_chunks");
  const std::string base = "run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json --strategy ep --phase train " +
                           "--batch 2 --prompt-tokens 256 --steps 1 --no-plots --quiet --fidelity flow --out ";
  ASSERT_EQ(testing::nmpsim(base + dir + "/a").code, 0);
  const CliRun r = testing::nmpsim(base + dir + "/b --moe-chunks 4");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto read = [&](const std::string& d) {
    return nlohmann::json::parse(testing::read_all(dir + "/" + d + "/summary.json"));
  };
  const nlohmann::json a = read("a")["strategies"]["ep"], b = read("b")["strategies"]["ep"];
  std::map<std::string, double> bytes;
  for (const auto& p : a["phases"]) bytes[p["name"]] = p["bytes"].get<double>();
  for (const char* name : {"dispatch", "combine", "bwd_dispatch", "bwd_combine"}) {
    double got = -1;
    for (const auto& p : b["phases"])
      if (p["name"] == name) got = p["bytes"].get<double>();
    EXPECT_GT(bytes[name], 0) << name;
    EXPECT_NEAR(got, bytes[name], 1e-9 * bytes[name]) << name;
  }
  EXPECT_EQ(read("b")["spec"]["moe_chunks"], 4);
  ASSERT_EQ(testing::nmpsim("run --spec " + dir + "/b/summary.json --no-plots --quiet --out " + dir + "/c").code, 0);
  EXPECT_EQ(read("c")["strategies"]["ep"]["step_us"], b["step_us"]);
}

TEST(CliTrain, HierMoesHierarchicalAllToAllRunsInBothPasses) {
  const std::string dir = ::testing::TempDir() + "/train_hiermoe";
  fs::remove_all(dir);
  const CliRun r = testing::nmpsim(
      "run --hw wsc-4x4 --attn-tp 4 --model mixtral-8x7b --strategy hiermoe --phase "
      "train --batch 8 --prompt-tokens 256 --steps 1 --fidelity flow --no-plots --quiet "
      "--out " +
      dir);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(testing::read_all(dir + "/summary.json"));
  std::map<std::string, double> bytes;
  for (const auto& p : j["strategies"]["hiermoe"]["phases"]) bytes[p["name"]] = p["bytes"].get<double>();
  // Every relayed stage of the forward's exchange has its backward, with the same bytes.
  int stages = 0;
  for (const auto& [name, b] : bytes) {
    if (name.rfind("dispatch_", 0) != 0 && name.rfind("combine_", 0) != 0) continue;
    ++stages;
    ASSERT_TRUE(bytes.count("bwd_" + name)) << name;
    EXPECT_DOUBLE_EQ(bytes["bwd_" + name], b) << name;
  }
  EXPECT_GT(stages, 0) << "no relayed stage: the hierarchy was not used";
  EXPECT_DOUBLE_EQ(bytes["bwd_dispatch"] + bytes["bwd_combine"], bytes["dispatch"] + bytes["combine"]);
}

/// The timeline of the backward of both layers (records 2 and 3) of one training step of the tiny model
/// on the 4x4 NMP chip, with `options` (strategy, attention groups) at `fidelity`.
nlohmann::json backward_timeline(const std::string& dir, const std::string& options, const std::string& fidelity) {
  const std::string file = dir + "/" + fidelity + ".json";
  const CliRun r = testing::nmpsim("run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json " + options +
                                   " --phase train --batch 2 --prompt-tokens 64 --steps 1 --timeline " + file +
                                   " --timeline-layers 2-3 --no-plots --quiet --fidelity " + fidelity + " --out " +
                                   dir + "/" + fidelity);
  EXPECT_EQ(r.code, 0) << r.out;
  return r.code == 0 ? nlohmann::json::parse(testing::read_all(file)) : nlohmann::json::object();
}

TEST(CliTrain, TheTimelineShowsTheGradientSynchronisationThatOutlivesItsBackward) {
  // One attention group of all 16 PEs: the only replicated parameters are the gate's (8 experts x
  // hidden 256 x 2 B = 4096 B per layer), all-reduced over the 16 nodes' ring: 2 (g - 1) x 4096 B sent
  // in all per layer. The synchronisation runs in the background, past the end of its layer's
  // backward, and the timeline (records 2 and 3: the two layers' backward) must still show it.
  const std::string dir = scratch_with_tiny_model("train_timeline");
  for (const char* fidelity : {"flow", "cycle"}) {
    const nlohmann::json t = backward_timeline(dir, "--strategy tp --attn-tp 16", fidelity);
    ASSERT_TRUE(t.contains("traceEvents")) << fidelity;
    std::map<int, double> grad_bytes;  // per layer record
    for (const auto& e : t["traceEvents"])
      if (e["ph"] == "X" && e["cat"] == "transfer" && e["name"] == "grad_sync")
        grad_bytes[e["args"]["layer"].get<int>()] += e["args"]["bytes"].get<double>();
    EXPECT_EQ(grad_bytes.size(), 2u) << fidelity;
    for (const auto& [layer, bytes] : grad_bytes) EXPECT_DOUBLE_EQ(bytes, 2.0 * 15 * 4096) << fidelity << layer;
  }
}

TEST(CliTrain, BackgroundSlicesKeepTheTimelinesLanesAndRowsFreeOfOverlaps) {
  // With four attention groups the attention's gradients are all-reduced too, and one layer's
  // synchronisation runs beside the next layer's backward on the same nodes: every network lane and
  // phase row must still hold slices that do not overlap (docs/FORMATS.md "Timeline").
  const std::string dir = scratch_with_tiny_model("train_timeline_lanes");
  for (const char* fidelity : {"flow", "cycle"}) {
    const nlohmann::json t = backward_timeline(dir, "--strategy ep --attn-tp 4", fidelity);
    ASSERT_TRUE(t.contains("traceEvents")) << fidelity;
    std::map<int, std::vector<std::pair<double, double>>> rows;  // network lanes and phase rows, by tid
    int background_phases = 0;
    for (const auto& e : t["traceEvents"]) {
      if (e["ph"] != "X") continue;
      const int tid = e["tid"];
      if (tid < 1000000 && tid % 100 < 2) continue;  // compute and receive tracks
      if (tid >= 2000000) ++background_phases;
      rows[tid].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
    }
    EXPECT_GT(background_phases, 0) << fidelity;
    for (auto& [tid, slices] : rows) {
      std::sort(slices.begin(), slices.end());
      for (size_t i = 1; i < slices.size(); ++i)
        EXPECT_LE(slices[i - 1].second, slices[i].first + 1e-9) << fidelity << " tid " << tid;
    }
  }
}

}  // namespace
}  // namespace nmpsim
