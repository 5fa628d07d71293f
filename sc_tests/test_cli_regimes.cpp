// `nmpsim run --phase prefill|mixed`: bad shapes are one-line errors that write nothing; prefill and
// mixed runs at both fidelities report TTFT as the steps that carry the prompt (docs/FORMATS.md
// "summary.json"), and a run's spec reruns it.
#include <algorithm>
#include <map>

#include "hardening_util.h"

namespace nmpsim {
namespace {

using namespace nmpsim::hardening;  // NOLINT: the table's types and check()

const std::string kRun = "run --fidelity flow --strategy tp --no-plots --out {D}/out";

/// A memory budget of 16 GiB whatever the machine has (the simulator's own memory check runs first).
CliOptions budget_16g() {
  CliOptions o;
  o.env = {"NMPSIM_MEMORY_BUDGET_MIB=16384"};
  return o;
}
const CliOptions kBudget = budget_16g();

nlohmann::json summary(const std::string& dir) {
  return nlohmann::json::parse(testing::read_all(dir + "/summary.json"));
}

/// The summary.csv column `name` of the row of `strategy`.
double csv_value(const std::string& dir, const std::string& strategy, const std::string& name) {
  std::istringstream in(testing::read_all(dir + "/summary.csv"));
  auto cells = [](const std::string& line) {
    std::vector<std::string> v;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) v.push_back(c);
    return v;
  };
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> head = cells(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> row = cells(line);
    if (row.empty() || row[0] != strategy) continue;
    for (size_t i = 0; i < head.size() && i < row.size(); ++i)
      if (head[i] == name) return std::stod(row[i]);
  }
  ADD_FAILURE() << "no column " << name << " for " << strategy;
  return 0;
}

TEST(CliRegimes, BadShapesAreOneLineErrorsThatWriteNothing) {
  for (const Case& c : std::vector<Case>{
           {"prompt_0", kRun + " --phase prefill --prompt-tokens 0", 2,
            "prompt_tokens (--prompt-tokens): 0: phase prefill needs a prompt of at least 1 token"},
           {"prompt_beyond_context", kRun + " --phase prefill --prompt-tokens 40000", 2,
            "prompt_tokens (--prompt-tokens): 40000 is beyond mixtral-8x7b's context of 32768 tokens"},
           {"chunk_over_prompt", kRun + " --phase mixed --prompt-tokens 2048 --prefill-chunk 4096", 2,
            "prefill_chunk (--prefill-chunk): 4096 is larger than prompt_tokens (--prompt-tokens) 2048"},
           {"chunk_missing", kRun + " --phase mixed --prompt-tokens 2048", 2,
            "a mixed step carries a chunk of at least 1 prompt token"},
           {"steps_before_last_chunk", kRun + " --phase mixed --prompt-tokens 2048 --prefill-chunk 512 --steps 2", 2,
            "steps (--steps): 2 ends before the prompt's last chunk: 2048 prompt tokens in chunks of 512 need 4 steps"},
           {"prompt_on_decode", kRun + " --prompt-tokens 16", 2,
            "prompt_tokens (--prompt-tokens): applies to phase prefill, mixed or train, not decode"},
           {"chunk_on_prefill", kRun + " --phase prefill --prompt-tokens 16 --prefill-chunk 8", 2,
            "prefill_chunk (--prefill-chunk): applies to phase mixed, not prefill"},
           {"context_on_prefill", kRun + " --phase prefill --prompt-tokens 16 --context 8", 2,
            "--context: a prefill step attends over its prompt"},
           {"phase_unknown", kRun + " --phase chunked", 2,
            "--phase: expected decode, prefill, mixed or train, got 'chunked'"},
           {"step_too_large", kRun + " --phase prefill --batch 1000000 --prompt-tokens 32768", 2,
            "a step of 32768000000 tokens is more than 16777216"},
           {"micro_batches_over_requests", kRun + " --batch 32 --micro-batches 64", 2,
            "micro_batches (--micro-batches): 64 is more than the step's 32 requests"},
           {"micro_batches_0", kRun + " --micro-batches 0", 2, "--micro-batches"},
           {"micro_batches_accounting", kRun + " --micro-batches 2 --accounting hdmoe-authors", 2,
            "accounting hdmoe-authors: charges whole steps, not micro-batches (--micro-batches 2)"},
           {"micro_batches_placement_policy",
            "run --fidelity flow --no-plots --out {D}/out --hw wsc-4x4 --attn-tp 4 --strategy hiermoe "
            "--micro-batches 2",
            2, "placement 'hiermoe' runs its own runtime policy"},
           {"micro_batches_with_policy", kRun + " --micro-batches 2 --policy moentwine-balancer", 2,
            "runtime policy moentwine-balancer acts on one chain of phases per layer"},
           {"timeline_step_beyond", kRun + " --steps 1 --timeline {D}/t.json --timeline-step 1", 2,
            "--timeline-step: must be in [0, 0]"},
           {"timeline_layers_reversed", kRun + " --timeline {D}/t.json --timeline-layers 3-1", 2,
            "--timeline-layers: 3-1 is not a range within the model's layers 0-31"},
           {"timeline_layers_text", kRun + " --timeline {D}/t.json --timeline-layers first", 2,
            "--timeline-layers: expected A or A-B (layer numbers from 0), got 'first'"},
           {"timeline_options_alone", kRun + " --timeline-layers 2", 2,
            "--timeline-layers: applies with --timeline FILE"},
           {"ni_ports_5", kRun + " --set noc.ni_ports=5", 2, "--set noc.ni_ports: must be in [1, 4] ports (got 5)"},
           {"ni_ports_rtl_routers",
            "run --fidelity cycle --router rtl --strategy tp --no-plots --out {D}/out --set "
            "noc.ni_ports=2",
            2,
            "--router rtl: the RTL routers have one local port; noc.ni_ports is 2 (use --router engine or sc, or "
            "noc.ni_ports=1)"},
           {"ni_ports_noc_0", "noc --ni-ports 0", 2, "noc: ni_ports must be in [1, 4] (got 0)"},
           {"pipeline_chunks_0", kRun + " --set collectives.pipeline_chunks=0", 2,
            "--set collectives.pipeline_chunks: must be in [1, 64] chunks (got 0)"},
           {"algorithm_3d", kRun + " --set collectives.algorithm=3d", 2, "--set collectives.algorithm"},
           {"context_beyond_model", kRun + " --context 40000", 2,
            "context (--context): 40000 is beyond mixtral-8x7b's context of 32768 tokens"},
           {"spec_phase", "run --no-plots --out {D}/out --spec {D}/s.json", 2,
            "s.json: phase: expected decode, prefill, mixed or train, got 'training'",
            file("s.json", R"({"phase": "training"})")},
           // By hand, EP of Mixtral-8x7B on 16 nodes (one attention group): half an expert (168 MiB),
           // 1/16 of attention and a whole gate per layer, 32 layers: 5.41 GiB; KV 4 x 32768 tokens x 32
           // layers x 4 KiB / 16 = 1.00 GiB; activations 131072 tokens x 2 x 4096 x 2 B = 2.00 GiB.
           {"kv_and_activations_do_not_fit",
            "run --no-plots --fidelity flow --strategy ep --out {D}/out --phase prefill --batch 4 --prompt-tokens "
            "32768 --hw nmp-4x4-5t50g",
            2,
            "needs 8.41 GiB on node 0 (0,0) (weights 5.41, KV cache 1.00, activations 2.00 GiB), which has 8.00 GiB",
            {},
            kBudget},
           {"simulator_memory",
            "run --no-plots --fidelity flow --strategy ep --out {D}/out --phase train --batch 64 --prompt-tokens "
            "64 --hw nmp-4x4-5t50g --set mesh.width=64 --set mesh.height=64 --attn-tp 16",
            2,
            "69.7 GiB for gradient rings of 4096 nodes",
            {},
            kBudget},
       })
    check(c);
}

TEST(CliRegimes, PrefillReportsTtftAtBothFidelities) {
  const std::string dir = scratch_with_tiny_model("regimes_prefill");
  double ttft[2] = {0, 0};
  for (const char* fidelity : {"flow", "cycle"}) {
    const std::string out = dir + "/" + fidelity;
    const CliRun r = testing::nmpsim("run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json --strategy tp,ep " +
                                     "--phase prefill --batch 2 --prompt-tokens 64 --no-plots --quiet --fidelity " +
                                     fidelity + " --out " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json j = summary(out);
    EXPECT_EQ(j["config"]["phase"], "prefill");
    EXPECT_EQ(j["spec"]["prompt_tokens"], 64);
    for (const char* s : {"tp", "ep"}) {
      const nlohmann::json& st = j["strategies"][s];
      // Two steps, each prefilling 2 prompts of 64: TTFT is the mean step, 128 prompt tokens per TTFT.
      ASSERT_EQ(st["tbt_us"].size(), 2u);
      EXPECT_DOUBLE_EQ(st["ttft_us"].get<double>(), st["mean_tbt_us"].get<double>());
      EXPECT_NEAR(st["prefill_tokens_per_s"].get<double>(), 128 / (st["ttft_us"].get<double>() * 1e-6),
                  1e-6 * st["prefill_tokens_per_s"].get<double>());
      EXPECT_NEAR(csv_value(out, s, "ttft_us"), st["ttft_us"].get<double>(), 1e-3);
    }
    ttft[std::string(fidelity) == "cycle"] = j["strategies"]["tp"]["ttft_us"].get<double>();
  }
  EXPECT_NEAR(ttft[0], ttft[1], 0.15 * ttft[1]) << "flow against cycle";
}

TEST(CliRegimes, MixedStepsCarryThePromptInChunksAndRerunFromTheirSpec) {
  const std::string dir = scratch_with_tiny_model("regimes_mixed");
  const CliRun r = testing::nmpsim("run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json --strategy tp " +
                                   "--phase mixed --batch 4 --context 256 --prompt-tokens 40 --prefill-chunk 16 " +
                                   "--fidelity flow --no-plots --quiet --out " + dir + "/a");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = summary(dir + "/a");
  const nlohmann::json& tp = j["strategies"]["tp"];
  // 40 prompt tokens in chunks of 16: 3 steps (16, 16, 8) by default; TTFT is their sum.
  ASSERT_EQ(tp["tbt_us"].size(), 3u);
  double sum = 0;
  for (const auto& t : tp["tbt_us"]) sum += t.get<double>();
  EXPECT_NEAR(tp["ttft_us"].get<double>(), sum, 1e-9 * sum);
  EXPECT_NEAR(tp["prefill_tokens_per_s"].get<double>(), 40 / (sum * 1e-6), 1e-6 * 40 / (sum * 1e-6));
  // The spec alone reruns it.
  const CliRun again = testing::nmpsim("run --spec " + dir + "/a/summary.json --no-plots --quiet --out " + dir + "/b");
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(summary(dir + "/b")["strategies"]["tp"]["tbt_us"], tp["tbt_us"]);
  // A spec with more steps than chunks reruns with its own steps.
  const CliRun more = testing::nmpsim("run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json --strategy tp " +
                                      "--phase mixed --batch 4 --context 256 --prompt-tokens 40 --prefill-chunk 16 " +
                                      "--steps 5 --fidelity flow --no-plots --quiet --out " + dir + "/c");
  ASSERT_EQ(more.code, 0) << more.out;
  const CliRun rerun = testing::nmpsim("run --spec " + dir + "/c/summary.json --no-plots --quiet --out " + dir + "/d");
  ASSERT_EQ(rerun.code, 0) << rerun.out;
  EXPECT_EQ(summary(dir + "/d")["strategies"]["tp"]["tbt_us"].size(), 5u);
}

TEST(CliRegimes, MicroBatchesReportExposedAndHiddenCommunicationAtBothFidelities) {
  const std::string dir = scratch_with_tiny_model("regimes_micro");
  double step[2] = {0, 0};
  for (const char* fidelity : {"flow", "cycle"}) {
    const std::string out = dir + "/" + fidelity;
    const CliRun r = testing::nmpsim("run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json --strategy tp " +
                                     "--phase prefill --batch 4 --prompt-tokens 64 --micro-batches 2 --steps 1 " +
                                     "--no-plots --quiet --fidelity " + fidelity + " --out " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json j = summary(out);
    const nlohmann::json& tp = j["strategies"]["tp"];
    EXPECT_EQ(j["config"]["micro_batches"], 2);
    // The families still add up to the step; exposed communication is two of them.
    double families = 0;
    for (const char* f : {"attention_us", "allreduce_us", "moe_compute_us", "moe_comm_us", "other_us"})
      families += tp[f].get<double>();
    EXPECT_NEAR(families, tp["mean_tbt_us"].get<double>(), 1e-6 * families);
    EXPECT_NEAR(tp["exposed_comm_us"].get<double>(), tp["allreduce_us"].get<double>() + tp["moe_comm_us"].get<double>(),
                1e-9 * families);
    EXPECT_GE(tp["hidden_comm_us"].get<double>(), 0.0);
    step[std::string(fidelity) == "cycle"] = tp["mean_tbt_us"].get<double>();
  }
  EXPECT_NEAR(step[0], step[1], 0.15 * step[1]) << "flow against cycle";
}

TEST(CliRegimes, NiPortsDoNotSlowTheAllToAllAndFlowTracksCycle) {
  // EP's dispatch and combine: every node sends to and receives from many others at once. On this
  // mesh, links as fast as a port, the links' bisection bounds the all-to-all more than one port does
  // (a uniform all-to-all on 4x4 saturates at half a flit per node and cycle), so four ports help
  // little; they must not hurt, at either fidelity, and flow must track cycle. The k-fold speed-up
  // where the ports bound is NocNetworkInterface.KPortsMoveKMessagesToKNeighboursKTimesFaster.
  const std::string dir = scratch_with_tiny_model("regimes_ports");
  std::map<std::string, double> comm;
  for (const char* fidelity : {"flow", "cycle"})
    for (const char* ports : {"1", "4"}) {
      const std::string out = dir + "/" + fidelity + ports;
      const CliRun r = testing::nmpsim("run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json --strategy ep " +
                                       "--batch 64 --steps 1 --no-plots --quiet --set noc.ni_ports=" + ports +
                                       " --fidelity " + fidelity + " --out " + out);
      ASSERT_EQ(r.code, 0) << r.out;
      EXPECT_EQ(summary(out)["spec"]["hardware"]["noc"]["ni_ports"], std::stoi(ports));
      comm[std::string(fidelity) + ports] = summary(out)["strategies"]["ep"]["moe_comm_us"].get<double>();
    }
  EXPECT_LE(comm["cycle4"], comm["cycle1"]);
  EXPECT_LE(comm["flow4"], comm["flow1"]);
  EXPECT_NEAR(comm["flow4"], comm["cycle4"], 0.15 * comm["cycle4"]);
}

TEST(CliRegimes, PipelinedReduceScattersHideBehindTheAttentionAtBothFidelities) {
  // A prefill of 2 x 2048 tokens: each layer's attention (74 us) outlasts its reduce-scatter (40 us),
  // so in 4 pieces all but the last piece's reduce-scatter (10 us) runs while the attention computes,
  // at both fidelities. Fused reductions: the adds run on each node's reducer, not behind the attention
  // (docs/MODEL.md "Pipelined collectives").
  const std::string dir = scratch_with_tiny_model("regimes_pipeline");
  std::map<std::string, nlohmann::json> tp;
  for (const char* fidelity : {"flow", "cycle"})
    for (const char* chunks : {"1", "4"}) {
      const std::string out = dir + "/" + fidelity + chunks;
      const CliRun r = testing::nmpsim("run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json --strategy tp " +
                                       "--phase prefill --batch 2 --prompt-tokens 2048 --steps 1 --no-plots --quiet " +
                                       "--set collectives.reduce=fused --set collectives.pipeline_chunks=" + chunks +
                                       " --fidelity " + fidelity + " --out " + out);
      ASSERT_EQ(r.code, 0) << r.out;
      tp[std::string(fidelity) + chunks] = summary(out)["strategies"]["tp"];
    }
  for (const char* fidelity : {"flow", "cycle"}) {
    const nlohmann::json &one = tp[std::string(fidelity) + "1"], &four = tp[std::string(fidelity) + "4"];
    EXPECT_LT(four["ttft_us"].get<double>(), one["ttft_us"].get<double>()) << fidelity;
    // The reduce-scatters' share of the all-reduce family: 40 of 158 us per step, then 10.
    EXPECT_NEAR(one["allreduce_us"].get<double>() - four["allreduce_us"].get<double>(), 0.75 * 40 * 2 /* layers */,
                0.05 * 60)
        << fidelity;
  }
  EXPECT_NEAR(tp["flow4"]["ttft_us"].get<double>(), tp["cycle4"]["ttft_us"].get<double>(),
              0.05 * tp["cycle4"]["ttft_us"].get<double>());
}

TEST(CliRegimes, TwoDAndAutoCollectivesAtBothFidelities) {
  // A 16-node attention group on nmp-4x4 with four NI ports and kernel adds (50 ns start-up each): a 2D
  // all-gather and reduce-scatter take 6 steps where a ring takes 15, so the all-reduce family is
  // shorter; auto picks per group by the closed forms; flow tracks cycle (docs/MODEL.md "2D collectives
  // and auto").
  const std::string dir = scratch_with_tiny_model("regimes_2d");
  std::map<std::string, double> ar;
  for (const char* fidelity : {"flow", "cycle"})
    for (const char* alg : {"ring", "2d", "auto"}) {
      const std::string out = dir + "/" + fidelity + alg;
      const CliRun r = testing::nmpsim("run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json --strategy tp " +
                                       "--attn-tp 16 --batch 64 --steps 1 --no-plots --quiet --set noc.ni_ports=4 " +
                                       "--set collectives.reduce=kernel " + "--set collectives.algorithm=" + alg +
                                       " --fidelity " + fidelity + " --out " + out);
      ASSERT_EQ(r.code, 0) << r.out;
      ar[std::string(fidelity) + alg] = summary(out)["strategies"]["tp"]["allreduce_us"].get<double>();
    }
  for (const char* fidelity : {"flow", "cycle"}) {
    const std::string f = fidelity;
    EXPECT_LT(ar[f + "2d"], 0.8 * ar[f + "ring"]) << fidelity;
    // Auto's closed forms see the all-gather's 2D and both-way rings within 1% of each other and keep the
    // both-way ring; the simulated difference is a few percent either way.
    EXPECT_LE(ar[f + "auto"], 1.05 * std::min(ar[f + "2d"], ar[f + "ring"])) << fidelity;
  }
  // Communication of a few microseconds per step, latency-bound: within the 15% asked of communication.
  EXPECT_NEAR(ar["flow2d"], ar["cycle2d"], 0.15 * ar["cycle2d"]);
}

TEST(CliRegimes, TimelineIsAValidTraceThatAccountsForEveryFlopAtBothFidelities) {
  const std::string dir = scratch_with_tiny_model("regimes_timeline");
  for (const char* fidelity : {"flow", "cycle"}) {
    const std::string out = dir + "/" + fidelity, file = dir + "/" + fidelity + ".json";
    const CliRun r = testing::nmpsim("run --hw nmp-4x4-5t50g --model " + dir + "/tiny.json --strategy tp,ep " +
                                     "--batch 8 --micro-batches 2 --steps 2 --timeline " + file +
                                     " --timeline-step 1 --timeline-layers 0-1 --no-plots --quiet --fidelity " +
                                     fidelity + " --out " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json t = nlohmann::json::parse(testing::read_all(file));
    const nlohmann::json j = summary(out);
    std::map<int, std::string> process;
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> compute;
    std::map<int, double> flops;
    int starts = 0, finishes = 0, transfers = 0;
    for (const auto& e : t["traceEvents"]) {
      const std::string ph = e["ph"];
      if (ph == "M" && e["name"] == "process_name") process[e["pid"]] = e["args"]["name"];
      if (ph == "s") ++starts;
      if (ph == "f") ++finishes;
      if (ph != "X") continue;
      EXPECT_GE(e["ts"].get<double>(), 0.0);
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      if (e["cat"] == "transfer") ++transfers;
      if (e["cat"] != "compute") continue;
      compute[{e["pid"], e["tid"]}].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
      flops[e["pid"]] += e["args"]["flops"].get<double>();
    }
    ASSERT_EQ(process.size(), 2u);
    EXPECT_EQ(starts, transfers);  // an arrow per transfer, to its delivery
    EXPECT_EQ(finishes, transfers);
    for (auto& [track, spans] : compute) {  // a node computes one command at a time
      std::sort(spans.begin(), spans.end());
      for (size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].second, spans[i].first + 1e-3) << fidelity;
    }
    // Both layers of the second of two alike steps: half the run's FLOPs.
    for (const auto& [pid, name] : process) {
      double run = 0;
      for (const auto& f : j["strategies"][name]["node_flops"]) run += f.get<double>();
      EXPECT_NEAR(flops[pid], run / 2, 1e-6 * run) << fidelity << " " << name;
    }
  }
}

}  // namespace
}  // namespace nmpsim
