// The nmpsim command line: help, exit codes, one-line errors, JSON output.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace {

using nmpsim::testing::CliRun;
using nmpsim::testing::lines;
using nmpsim::testing::nmpsim;

TEST(Cli, HelpDocumentsEveryNocOptionWithUnits) {
  const CliRun top = nmpsim("--help");
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("noc"), std::string::npos);
  const CliRun r = nmpsim("noc --help");
  EXPECT_EQ(r.code, 0);
  for (const char* opt : {"--mesh", "--traffic", "--injection-rate", "--packet-flits", "--vcs", "--buffer-flits",
                          "--router-delay", "--link-delay", "--warmup-cycles", "--cycles", "--seed", "--json",
                          "--router", "--rtl-nodes", "--vcd", "--vcd-node"})
    EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
  EXPECT_NE(r.out.find("flits per node per cycle"), std::string::npos);
  EXPECT_NE(r.out.find("in cycles"), std::string::npos);
}

TEST(Cli, BadValuesGiveOneLineErrorAndExitTwo) {
  for (const char* args : {"noc --mesh 0x4", "noc --mesh 8by8", "noc --injection-rate -0.1", "noc --injection-rate 2",
                           "noc --traffic zipf", "noc --cycles -5", "noc --vcs 0", "noc --buffer-flits 0",
                           "noc --no-such-option", "noc --traffic transpose --mesh 4x8", "frobnicate"}) {
    const CliRun r = nmpsim(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << args << ": " << r.out;
    EXPECT_NE(r.out.find("error"), std::string::npos) << args;
  }
}

TEST(Cli, NocWritesJsonWithTheDocumentedKeys) {
  const std::string path = ::testing::TempDir() + "/noc_cli.json";
  const CliRun r = nmpsim("noc --mesh 4x4 --cycles 2000 --warmup-cycles 200 --injection-rate 0.2 --json " + path);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  for (const char* key : {"avg_packet_latency_cycles", "p99_packet_latency_cycles", "accepted_flits_per_node_cycle",
                          "offered_flits_per_node_cycle", "injected_flits", "ejected_flits", "simulated_cycles",
                          "wall_seconds", "simulated_cycles_per_second", "link_utilisation"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["injected_flits"], j["ejected_flits"]);
  EXPECT_EQ(j["link_utilisation"].size(), 48u);  // 2 * (3*4 + 4*3) directed links in a 4x4 mesh
  for (const auto& l : j["link_utilisation"]) {
    EXPECT_GE(l["utilisation"].get<double>(), 0.0);
    EXPECT_LE(l["utilisation"].get<double>(), 1.0);
    EXPECT_TRUE(l.contains("from") && l.contains("to"));
  }
  EXPECT_GE(j["simulated_cycles"].get<uint64_t>(), 2200u);
}

TEST(Cli, UnwritableJsonPathFailsCleanly) {
  const CliRun r = nmpsim("noc --mesh 2x2 --cycles 100 --json /nonexistent-dir/x.json");
  EXPECT_EQ(r.code, 2) << r.out;
  // Checked before the simulation runs, naming the option and the directory.
  EXPECT_NE(r.out.find("--json: directory '/nonexistent-dir' does not exist"), std::string::npos) << r.out;
}

}  // namespace

namespace {

/// summary.csv without its wall_seconds column.
std::string results_without_wall_time(const std::string& csv_path) {
  std::ifstream in(csv_path);
  std::string out, line;
  while (std::getline(in, line)) out += line.substr(0, line.rfind(',')) + "\n";
  return out;
}

TEST(CliRun, CycleResultsDoNotDependOnWorkerCountOrOnTheOtherStrategies) {
  // Every strategy runs in its own worker process with its own hardware: one worker or two, alone
  // or after others, a strategy's numbers are the same to the last digit.
  const std::string dir = ::testing::TempDir() + "/cli_jobs";
  const std::string base = "run --hw nmp-4x4-5t50g --batch 8 --steps 1 --context 256 --no-plots --quiet ";
  ASSERT_EQ(nmpsim(base + "--strategy tp,ep,cb --jobs 1 --out " + dir + "/one").code, 0);
  ASSERT_EQ(nmpsim(base + "--strategy tp,ep,cb --jobs 2 --out " + dir + "/two").code, 0);
  ASSERT_EQ(nmpsim(base + "--strategy cb --out " + dir + "/alone").code, 0);
  const std::string one = results_without_wall_time(dir + "/one/summary.csv");
  EXPECT_EQ(one, results_without_wall_time(dir + "/two/summary.csv"));
  const std::string alone = results_without_wall_time(dir + "/alone/summary.csv");
  const std::string cb_row = alone.substr(alone.find('\n') + 1);
  EXPECT_NE(one.find(cb_row), std::string::npos) << one << "\n" << cb_row;
  const CliRun bad = nmpsim(base + "--jobs 0 --out " + dir + "/bad");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("--jobs"), std::string::npos) << bad.out;
}

/// Runs `args`, which end in `--set noc.replay_sessions=`, with replay on and off into dir/true and
/// dir/false, and checks that each of `files` is the same (and not trivially short) in both.
void run_with_and_without_replay(const std::string& dir, const std::string& args,
                                 std::initializer_list<const char*> files) {
  for (const char* on : {"true", "false"}) {
    const CliRun r = nmpsim(args + on + " --out " + dir + "/" + on);
    ASSERT_EQ(r.code, 0) << r.out;
  }
  for (const char* file : files) {
    const std::string a = nmpsim::testing::read_all(dir + "/true/" + file);
    EXPECT_GT(a.size(), 100u) << file;
    EXPECT_EQ(a, nmpsim::testing::read_all(dir + "/false/" + file)) << file;
  }
}

/// simulator.noc_sessions.<what> of a strategy in dir/<on>/summary.json.
int noc_sessions(const std::string& dir, const char* on, const char* strategy, const char* what) {
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(dir + "/" + on + "/summary.json"));
  return j.at("strategies").at(strategy).at("simulator").at("noc_sessions").at(what).get<int>();
}

TEST(CliRun, SessionReplayGivesTheSameMessageLog) {
  // Session replay (docs/MODEL.md "Session replay") against simulating every flit: every message in
  // the same cycle, the same per-layer and per-link results. Two steps: the second repeats the first.
  const std::string dir = ::testing::TempDir() + "/cli_replay";
  ASSERT_NO_FATAL_FAILURE(
      run_with_and_without_replay(dir,
                                  "run --hw nmp-4x4-5t50g --batch 8 --context 256 --steps 2 --no-plots --quiet "
                                  "--message-log --strategy tp,ep --set noc.replay_sessions=",
                                  {"messages-tp.csv", "messages-ep.csv", "layers.csv", "links.csv"}));
  // The second step repeats the first (and TP's layers each other).
  EXPECT_GT(noc_sessions(dir, "true", "tp", "replayed"), 10);
  EXPECT_EQ(noc_sessions(dir, "false", "tp", "replayed"), 0);
}

TEST(CliRun, SessionReplayCountsEveryLinkFlitWhenTheStepEndsMidSession) {
  // Fused reductions and two micro-batches on a wafer: ring steps follow deliveries at once, so the
  // recorded sessions run on past where the step's last session ends. The link counters read at the
  // end of the step must still be every flit's (noc::Network::settle_counters).
  const std::string dir = ::testing::TempDir() + "/cli_replay_mid_session";
  ASSERT_NO_FATAL_FAILURE(run_with_and_without_replay(
      dir,
      "run --hw wsc-8x8 --attn-tp 8 --model mixtral-8x22b --weight-bytes 1 --batch 128 --micro-batches 2 "
      "--set collectives.reduce=fused --set compute.grouped_experts=true --skew 0.8 --steps 1 --strategy tp "
      "--fidelity cycle --no-plots --quiet --set noc.replay_sessions=",
      {"layers.csv", "links.csv"}));
  EXPECT_GT(noc_sessions(dir, "true", "tp", "replayed"), 100);
}

TEST(CliRun, FlowSessionReplayGivesTheSameResultsToTheBit) {
  // Session replay at flow fidelity (docs/MODEL.md "Session replay at flow fidelity") against solving
  // every session: the same per-layer, per-link and summary results. Two steps on an 8-node
  // attention group: TP's collectives repeat layer after layer.
  const std::string dir = ::testing::TempDir() + "/cli_flow_replay";
  ASSERT_NO_FATAL_FAILURE(run_with_and_without_replay(
      dir,
      "run --hw nmp-4x4-5t50g --batch 8 --context 256 --steps 2 --no-plots --quiet --fidelity flow "
      "--strategy tp,ep,cb --set noc.replay_sessions=",
      {"layers.csv", "links.csv"}));
  EXPECT_GT(noc_sessions(dir, "true", "tp", "replayed"), 10);
  EXPECT_EQ(noc_sessions(dir, "false", "tp", "replayed"), 0);
  EXPECT_EQ(noc_sessions(dir, "true", "tp", "sessions"), noc_sessions(dir, "false", "tp", "sessions"));
  // summary.csv but its last column (wall seconds)
  const auto drop_wall = [](std::string csv) {
    std::string out;
    std::istringstream in(csv);
    for (std::string line; std::getline(in, line);) out += line.substr(0, line.rfind(',')) + "\n";
    return out;
  };
  EXPECT_EQ(drop_wall(nmpsim::testing::read_all(dir + "/true/summary.csv")),
            drop_wall(nmpsim::testing::read_all(dir + "/false/summary.csv")));
}

TEST(CliRun, StrategiesWithTheSamePlacementAreSimulatedOnceAndGetTheSameResults) {
  // EP's placement under another name: the same simulation, so the run simulates it once and both
  // strategies report its results (and its message log); CB in between keeps its own.
  const std::string dir = ::testing::TempDir() + "/cli_same";
  std::filesystem::create_directories(dir);
  const std::string args = "--hw nmp-4x4-5t50g --batch 8 --context 256 ";
  ASSERT_EQ(nmpsim("place --strategy ep " + args + "--out " + dir + "/ep.json").code, 0);
  nlohmann::json p = nlohmann::json::parse(std::ifstream(dir + "/ep.json"));
  p["strategy"] = "ep-copy";
  std::ofstream(dir + "/copy.json") << p.dump();
  for (const char* fidelity : {"cycle", "flow"}) {
    const std::string out = dir + "/" + fidelity;
    const bool cycle = std::string(fidelity) == "cycle";
    const CliRun r = nmpsim("run " + args + "--steps 1 --no-plots --fidelity " + fidelity +
                            (cycle ? " --message-log" : "") + " --strategy ep,cb," + dir + "/copy.json --out " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("ep-copy: the same placement as ep, simulated once"), std::string::npos) << r.out;
    // summary.csv rows by strategy, without the name and the wall time.
    std::map<std::string, std::string> row;
    std::istringstream rows(results_without_wall_time(out + "/summary.csv"));
    for (std::string line; std::getline(rows, line);) row[line.substr(0, line.find(','))] = line.substr(line.find(','));
    ASSERT_EQ(row.count("ep-copy"), 1u);
    EXPECT_EQ(row["ep"], row["ep-copy"]);
    EXPECT_NE(row["ep"], row["cb"]);
    if (cycle) {
      EXPECT_EQ(nmpsim::testing::read_all(out + "/messages-ep.csv"),
                nmpsim::testing::read_all(out + "/messages-ep-copy.csv"));
    }
  }
}

TEST(CliRun, WritesSummaryCsvAndPlotsForEveryStrategy) {
  const std::string out = ::testing::TempDir() + "/cli_run";
  const CliRun r = nmpsim("run --hw nmp-4x4-5t50g --strategy tp,ep,cb --batch 16 --steps 2 --context 256 --out " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* s : {"tp ", "ep ", "cb "}) EXPECT_NE(r.out.find(s), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(out + "/summary.json"));
  for (const char* s : {"tp", "ep", "cb"}) {
    const auto& st = j["strategies"][s];
    for (const char* key :
         {"mean_tbt_us", "tbt_us", "attention_us", "allreduce_us", "moe_compute_us", "moe_comm_us", "layers"})
      EXPECT_TRUE(st.contains(key)) << s << " " << key;
    EXPECT_EQ(st["tbt_us"].size(), 2u);
    EXPECT_EQ(st["layers"].size(), 32u);
    // The phase families add up to the TBT (gate is part of MoE compute), and so do the phases.
    EXPECT_NEAR(st["attention_us"].get<double>() + st["allreduce_us"].get<double>() +
                    st["moe_compute_us"].get<double>() + st["moe_comm_us"].get<double>() + st["other_us"].get<double>(),
                st["mean_tbt_us"].get<double>(), 1e-6 * st["mean_tbt_us"].get<double>());
    double phases_us = 0, dispatch = -1, combine = -2;
    for (const auto& ph : st["phases"]) {
      phases_us += ph["us"].get<double>();
      if (ph["name"] == "dispatch") dispatch = ph["bytes"].get<double>();
      if (ph["name"] == "combine") combine = ph["bytes"].get<double>();
    }
    EXPECT_NEAR(phases_us, st["mean_tbt_us"].get<double>(), 1e-6 * st["mean_tbt_us"].get<double>());
    EXPECT_DOUBLE_EQ(dispatch, combine);                 // every token's partial output returns the way it came
    EXPECT_EQ(st["layers"][0]["phases_us"].size(), 7u);  // Mixtral: no shared experts, so 7 phases
    const auto& e = st["energy_pj"];
    EXPECT_GT(e["dram"].get<double>(), 0);
    EXPECT_GT(e["noc"].get<double>(), 0);
    EXPECT_GT(e["compute"].get<double>(), 0);
    EXPECT_GT(e["static"].get<double>(), 0);
    EXPECT_NEAR(
        e["total"].get<double>(),
        e["dram"].get<double>() + e["noc"].get<double>() + e["compute"].get<double>() + e["static"].get<double>(),
        1e-6 * e["total"].get<double>());
  }
  // TP and EP stream the same expert weights (each once per layer), so their DRAM energy is close.
  EXPECT_NEAR(j["strategies"]["tp"]["energy_pj"]["dram"].get<double>(),
              j["strategies"]["ep"]["energy_pj"]["dram"].get<double>(),
              0.1 * j["strategies"]["tp"]["energy_pj"]["dram"].get<double>());
  EXPECT_DOUBLE_EQ(j["strategies"]["tp"]["speedup_vs_tp"].get<double>(), 1.0);
  std::ifstream summary_csv(out + "/summary.csv");
  std::string first;
  std::getline(summary_csv, first);
  EXPECT_EQ(first.rfind("strategy,fidelity,mean_tbt_us,", 0), 0u);
  std::ifstream layers(out + "/layers.csv"), links(out + "/links.csv");
  std::string header;
  std::getline(layers, header);
  EXPECT_EQ(header.rfind("strategy,layer,", 0), 0u);
  int rows = 0;
  for (std::string line; std::getline(layers, line);) ++rows;
  EXPECT_EQ(rows, 3 * 32);
  std::getline(links, header);
  EXPECT_EQ(header,
            "strategy,from,to,from_x,from_y,to_x,to_y,level,bytes,utilisation,attention_payload_bytes,"
            "allreduce_payload_bytes,moe_compute_payload_bytes,moe_comm_payload_bytes,other_payload_bytes");
  // Every link's payload by phase family fits in what crossed it (payload plus packet headers).
  double payload_total = 0;
  for (std::string line; std::getline(links, line);) {
    std::vector<double> v;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) v.push_back(std::atof(cell.c_str()));
    ASSERT_EQ(v.size(), 15u) << line;
    const double payload = v[10] + v[11] + v[12] + v[13] + v[14];
    EXPECT_LE(payload, v[8] + 1) << line;
    payload_total += payload;
  }
  EXPECT_GT(payload_total, 0);
  // The complete spec is in summary.json.
  EXPECT_EQ(j["spec"]["batch"], 16);
  EXPECT_EQ(j["spec"]["strategies"].size(), 3u);
  EXPECT_EQ(j["spec"]["hardware"], "nmp-4x4-5t50g");
  for (const char* png : {"/links_tp.png", "/links_ep.png", "/links_cb.png", "/node_load.png", "/phases.png"}) {
    std::ifstream f(out + png, std::ios::binary);
    char magic[4] = {};
    f.read(magic, 4);
    EXPECT_EQ(std::string(magic + 1, 3), "PNG") << png;
  }
}

TEST(CliRun, FlowFidelityAndPlacementFiles) {
  const std::string out = ::testing::TempDir() + "/cli_flow";
  const CliRun r = nmpsim(
      "run --hw nmp-4x4-5t50g --model deepseek-v2-lite --fidelity flow --batch 32 --strategy ep "
      "--no-plots --out " +
      out);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(out + "/summary.json"));
  EXPECT_EQ(j["strategies"]["ep"]["fidelity"], "flow");
  EXPECT_EQ(j["strategies"]["ep"]["layers"].size(), 27u);  // 1 dense + 26 MoE layers
  // The same in cycle fidelity, briefly: a dense layer has phases with no work, and SystemC stays quiet.
  const CliRun c = nmpsim(
      "run --hw nmp-4x4-5t50g --model deepseek-v2-lite --batch 4 --steps 1 --strategy ep "
      "--no-plots --out " +
      out);
  EXPECT_EQ(c.code, 0) << c.out;
  EXPECT_EQ(c.out.find("Warning"), std::string::npos) << c.out.substr(0, 400);
}

/// Reads a whole file.
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(CliPlace, HybridepWritesItsPairCountsAndRejectsBadDomains) {
  // Four 8x8 wafers: level 0 has 4 workers (wafers), level 1 64 (dies). Domains 2,4: per position of
  // level 0, 4 (4/2 - 1) all-to-all and 4 (2 - 1) all-gather pairs, times 64 positions; level 1:
  // 64 (64/4 - 1) and 64 (4 - 1), times 4 wafers.
  const std::string out = ::testing::TempDir() + "/hybridep_place.json";
  const CliRun r = nmpsim(
      "place --hw wsc-4wafer-8x8 --attn-tp 16 --model deepseek-v3 --weight-bytes 1 "
      "--strategy hybridep --sed 2,4 --out " +
      out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("level 1: 64 workers, domain size 4: 3840 all-to-all pairs, 768 all-gather pairs"),
            std::string::npos)
      << r.out;
  const nlohmann::json p = nlohmann::json::parse(slurp(out));
  const nlohmann::json& lv = p["stats"]["hybridep"]["levels"];
  ASSERT_EQ(lv.size(), 2u);
  EXPECT_EQ(lv[0]["a2a_pairs"], 64 * 4 * (4 / 2 - 1));
  EXPECT_EQ(lv[0]["ag_pairs"], 64 * 4 * (2 - 1));
  EXPECT_EQ(lv[1]["sed"], 4);
  EXPECT_EQ(p["runtime"][0]["name"], "hybridep");
  for (const auto& [args, msg] : std::vector<std::pair<std::string, std::string>>{
           {"--strategy hybridep --sed 3,4", "sed: domain size 3 at level 0 does not divide its 4 workers"},
           {"--strategy hybridep --sed 2", "1 domain sizes for 2 levels"},
           {"--strategy hybridep --sed 2,x", "expected domain sizes like 2,4"},
           {"--strategy ep --sed 2,4", "--sed applies to the hybridep strategy only"},
           {"--strategy hybridep --sed 4,64", "domains 4,64 need"}}) {
    const CliRun bad =
        nmpsim("place --hw wsc-4wafer-8x8 --attn-tp 16 --model deepseek-v3 " + args + " --out " + out + "x");
    EXPECT_EQ(bad.code, 2) << args << bad.out;
    EXPECT_EQ(lines(bad.out), 1) << args << bad.out;
    EXPECT_NE(bad.out.find(msg), std::string::npos) << args << bad.out;
  }
}

TEST(CliRun, StrategyAllRunsEveryRegisteredStrategyAndASecondRunReusesTheSolve) {
  const std::string dir = ::testing::TempDir() + "/cli_all", cache = dir + "/cache";
  std::filesystem::remove_all(dir);  // a fresh cache: the first run must solve
  const std::string args =
      "run --hw nmp-4x4-5t50g --fidelity flow --strategy all --batch 16 --steps 1 --no-plots "
      "--strategy-opt hdmoe-node.time_limit_s=0.05 --strategy-opt hdmoe.time_limit_s=0.05 "
      "--cache-dir " +
      cache + " --out " + dir;
  const CliRun first = nmpsim(args);
  ASSERT_EQ(first.code, 0) << first.out;
  for (const char* s : {"\n  tp ", "\n  ep ", "\n  cb ", "\n  hdmoe-node ", "\n  hdmoe "})
    EXPECT_NE(first.out.find(s), std::string::npos) << s << first.out;
  EXPECT_NE(first.out.find("solving node balance"), std::string::npos) << first.out;  // says when a solve runs
  const nlohmann::json a = nlohmann::json::parse(slurp(dir + "/summary.json"));
  const CliRun second = nmpsim(args);
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_EQ(second.out.find("solving"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("hdmoe: placement from the cache"), std::string::npos) << second.out;
  const nlohmann::json b = nlohmann::json::parse(slurp(dir + "/summary.json"));
  for (const char* s : {"hdmoe-node", "hdmoe"})
    EXPECT_EQ(a["strategies"][s]["mean_tbt_us"], b["strategies"][s]["mean_tbt_us"]) << s;
  // The spec lists what "all" meant, with every option resolved.
  EXPECT_EQ(a["spec"]["strategies"].size(),
            13u);  // tp ep cb hdmoe{-node,} hiermoe{,-swap,-2dh,-megatron} hybridep moentwine-*
  EXPECT_EQ(a["spec"]["strategies"][4]["options"]["mapper"], "bo");
}

TEST(CliRun, TheAuthorsAccountingGivesTheirTpRowAndItsSpecReruns) {
  // data/reference/hdmoe/ACCOUNTING.md: Mixtral 4x8, 10 TFLOP/s, 25 GB/s, B = 16: TP 2994.08 us.
  const std::string dir = ::testing::TempDir() + "/cli_accounting";
  const CliRun r = nmpsim(
      "run --hw nmp-4x8-10t25g --model mixtral-8x7b --trace mtbench-reasoning --batch 16 --steps 1 "
      "--strategy tp --accounting hdmoe-authors --no-plots --out " +
      dir + "/a");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json a = nlohmann::json::parse(slurp(dir + "/a/summary.json"));
  EXPECT_NEAR(a["strategies"]["tp"]["mean_tbt_us"].get<double>(), 2994.08, 0.01);
  EXPECT_EQ(a["config"]["accounting"], "hdmoe-authors");
  EXPECT_EQ(a["spec"]["accounting"]["options"]["random_mesh_for"], "ep");
  const CliRun again = nmpsim("run --spec " + dir + "/a/summary.json --no-plots --out " + dir + "/b");
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir + "/b/summary.json"))["strategies"]["tp"]["mean_tbt_us"],
            a["strategies"]["tp"]["mean_tbt_us"]);
}

TEST(CliRun, TheSpecInSummaryJsonReproducesTheRun) {
  const std::string dir = ::testing::TempDir() + "/cli_spec";
  const CliRun r = nmpsim(
      "run --hw nmp-4x4-10t25g --model deepseek-v2-lite --trace synthetic --skew 1.1 --seed 7 "
      "--batch 24 --steps 2 --attn-tp 4 --strategy tp,cb --cb-regions 4 --fidelity flow --no-plots "
      "--out " +
      dir + "/a");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json a = nlohmann::json::parse(slurp(dir + "/a/summary.json"));
  { std::ofstream(dir + "/spec.json") << a["spec"].dump(2); }
  const CliRun again = nmpsim("run --spec " + dir + "/spec.json --no-plots --out " + dir + "/b");
  ASSERT_EQ(again.code, 0) << again.out;
  const nlohmann::json b = nlohmann::json::parse(slurp(dir + "/b/summary.json"));
  EXPECT_EQ(a["spec"], b["spec"]);
  EXPECT_EQ(a["strategies"]["cb"]["layers"], b["strategies"]["cb"]["layers"]);  // bit for bit
  EXPECT_EQ(a["spec"]["strategies"][1]["options"]["regions"], 4);
  EXPECT_EQ(a["spec"]["trace"]["synthetic"]["seed"], 7);
  // A summary.json is a spec too.
  const CliRun direct = nmpsim("run --spec " + dir + "/a/summary.json --no-plots --out " + dir + "/d");
  ASSERT_EQ(direct.code, 0) << direct.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir + "/d/summary.json"))["strategies"]["cb"]["layers"],
            a["strategies"]["cb"]["layers"]);
  // The example spec parses (overridden here to run briefly).
  const CliRun example =
      nmpsim("run --spec " + std::string(NMPSIM_SOURCE_DIR) +
             "/examples/specs/hdmoe_4x8.json --strategy tp,ep --steps 1 --no-plots --out " + dir + "/e");
  EXPECT_EQ(example.code, 0) << example.out;
  // Options given with --spec override its fields.
  const CliRun over = nmpsim("run --spec " + dir + "/spec.json --batch 8 --no-plots --out " + dir + "/c");
  ASSERT_EQ(over.code, 0) << over.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir + "/c/summary.json"))["spec"]["batch"], 8);
}

TEST(CliRun, HelpAndListsComeFromTheRegistry) {
  const CliRun help = nmpsim("run --help");
  ASSERT_EQ(help.code, 0);
  for (const char* s : {"tp | ep |", "hdmoe-node | hdmoe", "moentwine-er", "--strategy-opt", "--policy", "--spec"})
    EXPECT_NE(help.out.find(s), std::string::npos) << s;
  const CliRun list = nmpsim("run --list-strategies --list-policies");
  ASSERT_EQ(list.code, 0);
  for (const char* s : {"hdmoe: HD-MoE", "gamma (default 1)", "regions (default 0)", "hdmoe-prebroadcast",
                        "(cycle fidelity)", "experts (default 2)"})
    EXPECT_NE(list.out.find(s), std::string::npos) << s << list.out;
}

TEST(CliRun, BadInputsAreOneLineExitTwo) {
  const std::string dir = ::testing::TempDir();
  { std::ofstream(dir + "/t_bad.json") << "{\"0\": [[0, 9]]}"; }
  { std::ofstream(dir + "/t_k.json") << "{\"0\": [[0, 1, 2]]}"; }
  { std::ofstream(dir + "/p_bad.json") << "{\"experts\": 8, \"nodes\": 16, \"layers\": [[[[0, 0.5]]]]}"; }
  nlohmann::json small_hw = nlohmann::json::parse(nmpsim("hw --preset nmp-4x4-5t50g --print-json").out);
  small_hw["memory"]["capacity_bytes"] = 1 << 30;
  { std::ofstream(dir + "/hw_small.json") << small_hw.dump(); }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run --model gpt-9", "unknown model preset 'gpt-9'"},
      {"run --hw nope", "unknown hardware preset 'nope'"},
      {"run --trace " + dir + "/t_bad.json", "expert id 9 out of range"},
      {"run --trace " + dir + "/t_k.json", "expected 2 expert ids (top-k)"},
      {"run --strategy " + dir + "/p_bad.json --hw nmp-4x4-5t50g", "expected 8 expert rows"},
      {"run --hw " + dir + "/hw_small.json --strategy tp", "of MoE weights do not fit in 16 nodes"},
      {"run --batch 0", "--batch: must be in"},
      {"run --fidelity exact", "--fidelity: expected cycle or flow"},
      {"run --attn-tp 5", "must divide the 32 nodes"},
      {"run --strategy foo",
       "'foo' is neither a strategy (tp, ep, cb, hdmoe-node, hdmoe, hiermoe, hiermoe-swap, hiermoe-2dh, "
       "hiermoe-megatron, hybridep, moentwine-baseline, moentwine-er, moentwine-her, all) nor a readable"},
      {"run --strategy tp,tp --fidelity flow", "strategy 'tp' is listed twice"},
      {"run --strategy tp,cb --strategy-opt cb.regions=abc", "strategy cb options: regions: expected an integer"},
      {"run --strategy tp --strategy-opt ep.x=1", "--strategy-opt: no strategy 'ep' in this run's --strategy list"},
      {"run --strategy tp --strategy-opt tp.x=1", "strategy tp options: x: unknown field"},
      {"run --strategy tp --strategy-opt nodot", "--strategy-opt: expected NAME.KEY=VALUE"},
      {"run --strategy tp --policy nope", "unknown policy 'nope'"},
      {"run --strategy tp --fidelity flow --prebroadcast 2", "policy hdmoe-prebroadcast needs cycle fidelity"},
      {"run --strategy tp --policy hdmoe-prebroadcast --policy-opt hdmoe-prebroadcast.predict=oracle",
       "predict: expected previous or trace"},
      {"run --strategy tp --fidelity flow --policy moentwine-balancer",
       "policy moentwine-balancer: MoE layer 0: expert 0 is not whole on one node"},
      {"run --strategy tp --policy moentwine-balancer --policy-opt moentwine-balancer.migrate=teleport",
       "migrate: expected staged, paused or free, got 'teleport'"},
      {"run --strategy tp --accounting nope", "unknown accounting 'nope' (registered: hdmoe-authors)"},
      {"run --strategy tp --accounting hdmoe-authors --prebroadcast 2", "runtime policies need a simulation"},
      {"run --strategy tp --accounting hdmoe-authors --accounting-opt hdmoe-authors.x=1",
       "accounting hdmoe-authors options: x: unknown field"},
      {"run --strategy tp --accounting-opt hdmoe-authors.x=1", "no accounting 'hdmoe-authors' in this run's"},
      {"run --spec " + dir + "/spec_bad.json", "spec_bad.json: batchsize: unknown field"},
      {"run --spec " + dir + "/spec_strat.json", "spec_strat.json: strategies[0]: expected an object"},
  };
  { std::ofstream(dir + "/spec_bad.json") << "{\"batchsize\": 4}"; }
  { std::ofstream(dir + "/spec_strat.json") << "{\"strategies\": [3]}"; }
  for (const auto& [args, needle] : cases) {
    const CliRun r = nmpsim(args + " --out " + dir + "/never");
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_EQ(lines(r.out), 1) << args << ": " << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << ": " << r.out;
  }
  std::ifstream never(dir + "/never/summary.json");
  EXPECT_FALSE(never.good());  // nothing half-written
}

}  // namespace
