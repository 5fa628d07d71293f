// `nmpsim sweep` and `--set`, end to end through the binary: a 2 x 2 grid of hardware fields at
// flow fidelity, its results.csv against the points' own summaries, resuming, one-line input errors
// before anything runs, and the GNU parallel path for real (emit, run with parallel, collect).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_test_util.h"

namespace nmpsim::testing {
namespace {

const std::vector<std::string> kGrid = {"sweep",
                                        "--axis",
                                        "compute.peak_tflops=2.5,10",
                                        "--axis",
                                        "links.on_die.gbytes_per_s=25,75",
                                        "--strategy",
                                        "tp,ep",
                                        "--fidelity",
                                        "flow",
                                        "--batch",
                                        "16",
                                        "--steps",
                                        "1",
                                        "--hw",
                                        "nmp-4x4-5t50g",
                                        "--no-plots"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(CliSweep, AGridOfHardwareFieldsRunsEveryPointAndResumes) {
  const std::string dir = ::testing::TempDir() + "/sweep_grid";
  std::filesystem::remove_all(dir);
  const CliRun r = run_nmpsim(with(kGrid, {"--out", dir, "--jobs", "2"}));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("4 points, 4 complete (4 run now), 0 failed"), std::string::npos) << r.out;
  const std::string csv = read_all(dir + "/results.csv");
  EXPECT_EQ(count_lines(csv), 1 + 4 * 2) << csv;  // header + points x strategies
  // Each row's TBT is its point's summary; TP's speedup over itself is 1.
  const nlohmann::json p3 = nlohmann::json::parse(read_all(dir + "/points/p0003/summary.json"));
  EXPECT_EQ(p3["spec"]["hardware"]["compute"]["peak_tflops"], 10.0);
  EXPECT_EQ(p3["spec"]["hardware"]["links"]["on_die"]["gbytes_per_s"], 75.0);
  char row[128];
  std::snprintf(row, sizeof row, "p0003,10,75,tp,%.3f,", p3["strategies"]["tp"]["mean_tbt_us"].get<double>());
  EXPECT_NE(csv.find(row), std::string::npos) << row << "\n" << csv;
  EXPECT_NE(csv.find(",1.000000,,"), std::string::npos) << csv;  // then ttft_us: empty for decode
  // The row carries its point's exposed communication.
  std::snprintf(row, sizeof row, ",%f,", p3["strategies"]["tp"]["exposed_comm_us"].get<double>());
  EXPECT_NE(csv.find(row), std::string::npos) << row << "\n" << csv;
  // More compute is faster for TP at the same links (p0002 -> p0000 is 2.5 -> 10 TFLOP/s at 25 GB/s).
  const nlohmann::json p0 = nlohmann::json::parse(read_all(dir + "/points/p0000/summary.json"));
  const nlohmann::json p2 = nlohmann::json::parse(read_all(dir + "/points/p0002/summary.json"));
  EXPECT_LT(p2["strategies"]["tp"]["mean_tbt_us"].get<double>(), p0["strategies"]["tp"]["mean_tbt_us"].get<double>());
  // A rerun reuses every point; a lost point is run again.
  std::filesystem::remove(dir + "/points/p0001/summary.json");
  const CliRun again = run_nmpsim(with(kGrid, {"--out", dir}));
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("4 points, 4 complete (1 run now)"), std::string::npos) << again.out;
  EXPECT_EQ(read_all(dir + "/results.csv"), csv);
}

TEST(CliSweep, TextAndChoiceFieldsAreAxesToo) {
  const std::string dir = ::testing::TempDir() + "/sweep_choice";
  std::filesystem::remove_all(dir);
  const CliRun r = run_nmpsim({"sweep", "--axis", "memory.kind=hb-dram,hbm", "--axis", "noc.router_kind=vc,lookahead",
                               "--strategy", "tp", "--fidelity", "flow", "--batch", "16", "--steps", "1", "--hw",
                               "nmp-4x4-5t50g", "--no-plots", "--out", dir});
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("4 points, 4 complete"), std::string::npos) << r.out;
  const nlohmann::json p3 = nlohmann::json::parse(read_all(dir + "/points/p0003/summary.json"));
  EXPECT_EQ(p3["spec"]["hardware"]["memory"]["kind"], "hbm");
  EXPECT_EQ(p3["spec"]["hardware"]["noc"]["router_kind"], "lookahead");
}

TEST(CliSweep, AFailedPointIsARowWithItsErrorAndTheOthersStillRun) {
  // 5.9 GB of memory per node holds Mixtral's experts across the 16 nodes but not TP's share of them
  // with the attention weights and the KV cache (a placement's memory check, run by the point): that
  // point fails, the other runs.
  const std::string dir = ::testing::TempDir() + "/sweep_fail";
  std::filesystem::remove_all(dir);
  const CliRun r =
      run_nmpsim({"sweep", "--axis", "memory.capacity_bytes=5900000000,8589934592", "--strategy", "tp", "--fidelity",
                  "flow", "--batch", "16", "--steps", "1", "--hw", "nmp-4x4-5t50g", "--no-plots", "--out", dir});
  EXPECT_EQ(r.code, 1) << r.out;  // a point failed
  EXPECT_NE(r.out.find("2 points, 1 complete (1 run now), 1 failed"), std::string::npos) << r.out;
  const std::string csv = read_all(dir + "/results.csv");
  EXPECT_NE(csv.find("p0000,5900000000,,,,,,,,,,,,,\"failed: "), std::string::npos) << csv;
  EXPECT_NE(csv.find("p0001,8589934592,tp,"), std::string::npos) << csv;
  EXPECT_NE(read_all(dir + "/points/p0000/error.txt").find("needs"), std::string::npos);
}

TEST(CliSweep, EmittedJobsRunUnderGnuParallelAndAreCollected) {
  const std::string dir = ::testing::TempDir() + "/sweep_parallel", jobs = ::testing::TempDir() + "/sweep_jobs.txt";
  std::filesystem::remove_all(dir);
  const CliRun emit = run_nmpsim(with(kGrid, {"--out", dir, "--emit-jobs", jobs}));
  ASSERT_EQ(emit.code, 0) << emit.out;
  EXPECT_EQ(count_lines(read_all(jobs)), 4);
  EXPECT_NE(read_all(jobs + ".slurm").find("#SBATCH --array=0-3"), std::string::npos);
  // GNU parallel runs the lines (CI installs it: .ci/install-deps.sh).
  const pid_t pid = fork();
  if (pid == 0) {
    execlp("parallel", "parallel", "--will-cite", "-j", "2", "-a", jobs.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_NE(WEXITSTATUS(status), 127) << "GNU parallel is not installed (bash .ci/install-deps.sh)";
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const CliRun collect = run_nmpsim({"sweep", "--collect", "--no-plots", "--out", dir});
  ASSERT_EQ(collect.code, 0) << collect.out;
  EXPECT_NE(collect.out.find("4 points, 4 complete (0 run now), 0 failed"), std::string::npos) << collect.out;
  EXPECT_EQ(count_lines(read_all(dir + "/results.csv")), 1 + 4 * 2);
}

TEST(CliSweep, BadAxesAndSetsAreOneLineErrorsBeforeAnythingRuns) {
  const std::string dir = ::testing::TempDir() + "/sweep_bad";
  std::filesystem::remove_all(dir);
  {
    std::ofstream(dir + "_bad.json") << R"({"axes": [{"path": "batch", "values": []}]})";
    std::ofstream(dir + "_nojson.json") << "{\"axes\": [";
    std::ofstream(dir + "_notobj.json")
        << R"({"base": {"hardware": {"noc": 5}}, "axes": [{"path": "noc.vcs", "values": [2]}]})";
  }
  for (const auto& [args, msg] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"sweep", "--axis", "compute.nope=1,2", "--out", dir}, "--set compute.nope: no such field"},
           {{"sweep", "--axis", "mesh.width=4.5", "--out", dir}, "expected an integer"},
           {{"sweep", "--axis", "compute.peak_tflops=-1,2", "--out", dir}, "sweep point p0000"},
           {{"sweep", "--axis", "batch=0,2", "--out", dir}, "sweep point p0000"},
           {{"sweep", "--axis", "batch", "--out", dir}, "--axis: expected PATH=V1,V2"},
           {{"sweep", "--out", dir}, "give at least one --axis"},
           {{"run", "--set", "links.on_die.gbytes_per_s=fast", "--out", dir}, "expected a number"},
           {{"hw", "--hw", "nmp-4x4-5t50g", "--set", "x"}, "--set: expected PATH=VALUE"},
           {{"sweep", "--axis", "batch=8", "--point", "-1", "--out", dir}, "--point: must be >= 0"},
           {{"sweep", "--axis", "batch=8", "--jobs", "0", "--out", dir}, "--jobs: must be in [1, 1024]"},
           {{"sweep", "--axis", "batch=8", "--point", "5", "--out", dir}, "--point 5: the sweep has 1 points"},
           {{"sweep", "--spec", dir + "_bad.json", "--out", dir},
            "_bad.json: axes[0].values: expected a non-empty list"},
           {{"sweep", "--spec", dir + "_nojson.json", "--out", dir}, "_nojson.json"},
           {{"sweep", "--spec", dir + "_notobj.json", "--out", dir},
            "--set noc.vcs: noc in the hardware description is not an object"},
           {{"sweep", "--collect", "--out", dir + "_none"}, "sweep.json"}}) {
    const CliRun r = run_nmpsim(args);
    EXPECT_EQ(r.code, 2) << msg << r.out;
    EXPECT_EQ(count_lines(r.out), 1) << r.out;
    EXPECT_NE(r.out.find(msg), std::string::npos) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/points"));
  // --set names the hardware after its overrides.
  const CliRun hw = run_nmpsim({"hw", "--hw", "nmp-4x4-5t50g", "--set", "compute.peak_tflops=10"});
  ASSERT_EQ(hw.code, 0) << hw.out;
  EXPECT_NE(hw.out.find("nmp-4x4-5t50g+compute.peak_tflops=10"), std::string::npos) << hw.out;
  EXPECT_NE(hw.out.find("10 TFLOP/s peak"), std::string::npos) << hw.out;
  // A bigger NMP chip, not two chips: the die and wafer that spanned the mesh follow it.
  const CliRun wide = run_nmpsim({"hw", "--hw", "nmp-4x4-5t50g", "--set", "mesh.width=8"});
  ASSERT_EQ(wide.code, 0) << wide.out;
  EXPECT_NE(wide.out.find("1 die of 8x4 nodes, 1 wafer of 8x4 nodes"), std::string::npos) << wide.out;
}

}  // namespace
}  // namespace nmpsim::testing

namespace nmpsim::testing {
namespace {

TEST(CliEnergy, BothFidelitiesReportEnergyPerTokenAndStaticPowerByHand) {
  const std::string dir = ::testing::TempDir() + "/energy";
  nlohmann::json e[2];
  const char* fid[2] = {"cycle", "flow"};
  for (int i = 0; i < 2; ++i) {
    const CliRun r = run_nmpsim({"run", "--hw", "nmp-4x4-5t50g", "--strategy", "tp,ep", "--batch", "16", "--steps", "1",
                                 "--fidelity", fid[i], "--no-plots", "--quiet", "--out", dir + fid[i]});
    ASSERT_EQ(r.code, 0) << r.out;
    e[i] = nlohmann::json::parse(read_all(dir + fid[i] + "/summary.json"))["strategies"];
  }
  for (const char* s : {"tp", "ep"}) {
    const nlohmann::json& c = e[0][s]["energy_pj"];
    const nlohmann::json& f = e[1][s]["energy_pj"];
    // The flow estimate from its counters against the SystemC model's own energy counters.
    for (const char* part : {"dram", "noc", "compute"})
      EXPECT_NEAR(f[part].get<double>(), c[part].get<double>(), 0.05 * c[part].get<double>()) << s << " " << part;
    // Static: the node's static power x 16 nodes x the step's TBT; the parts add up.
    for (int i = 0; i < 2; ++i) {
      const nlohmann::json& p = e[i][s]["energy_pj"];
      EXPECT_NEAR(p["dram_array"].get<double>() + p["dram_interface"].get<double>() + p["dram_activate"].get<double>(),
                  p["dram"].get<double>(), 1e-9 * p["dram"].get<double>());
      EXPECT_NEAR(
          p["noc_on-die"].get<double>() + p["noc_die-to-die"].get<double>() + p["noc_wafer-to-wafer"].get<double>(),
          p["noc"].get<double>(), 1e-9 * p["noc"].get<double>());
      EXPECT_GT(p["noc_on-die"].get<double>(), 0);  // one die: every link is on-die
      const double tbt_s = e[i][s]["mean_tbt_us"].get<double>() * 1e-6;
      // Scaled static power (docs/MODEL.md "Area and power"): 4.1 mm^2 of logic (5 TFLOP/s x 0.82) at
      // 0.122 W/mm^2 = 0.5002 W; 8 GiB at 0.0375 W/GiB = 0.3 W; the router's flit buffers, 6 ports (4
      // mesh, the NI's two sides) x 2 VCs x 8 flits x 50 bytes = 4800 bytes at 4.2 mm^2/MiB, leaking at
      // 0.122 W/mm^2.
      const double node_w = 4.1 * 0.122 + 0.3 + 4800.0 / (1 << 20) * 4.2 * 0.122;
      EXPECT_NEAR(e[i][s]["energy_pj"]["static"].get<double>(), node_w * 16 * tbt_s * 1e12,
                  1e-6 * node_w * 16 * tbt_s * 1e12);
      const nlohmann::json& t = e[i][s]["energy_pj"];
      EXPECT_NEAR(e[i][s]["energy_per_token_uj"].get<double>(), t["total"].get<double>() / 16 / 1e6,
                  1e-9 * t["total"].get<double>());
    }
  }
  // No static power, no static energy; the summary.csv has the column.
  const CliRun z = run_nmpsim({"run", "--hw", "nmp-4x4-5t50g", "--set", "compute.static_w=0", "--set",
                               "memory.background_w=0", "--strategy", "tp", "--batch", "16", "--steps", "1",
                               "--fidelity", "flow", "--no-plots", "--quiet", "--out", dir + "z"});
  ASSERT_EQ(z.code, 0) << z.out;
  const nlohmann::json zs = nlohmann::json::parse(read_all(dir + "z/summary.json"))["strategies"]["tp"];
  EXPECT_EQ(zs["energy_pj"]["static"].get<double>(), 0.0);
  EXPECT_NE(read_all(dir + "z/summary.csv").find("energy_per_token_uj"), std::string::npos);
}

}  // namespace
}  // namespace nmpsim::testing

namespace nmpsim::testing {
namespace {

TEST(CliDefaults, WafersSplitAttentionOverFourDiesAndWideGroupsWarn) {
  const std::string dir = ::testing::TempDir() + "/defaults";
  const CliRun r =
      run_nmpsim({"run", "--hw", "wsc-4x4", "--model", "deepseek-v2-lite", "--weight-bytes", "1", "--strategy", "ep",
                  "--batch", "16", "--steps", "1", "--fidelity", "flow", "--out", dir});
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(read_all(dir + "/summary.json"))["config"]["attn_tp"], 4);
  EXPECT_EQ(r.out.find("warning: attention tensor"), std::string::npos) << r.out;
  // DeepSeek-V2-Lite at batch 16 on B200-class dies: 2 us of start-up against 2.7 us of attention per layer.
  EXPECT_NE(r.out.find("warning: ep: the compute start-up"), std::string::npos) << r.out;
  // The plots that explain: per-kind link maps next to the total.
  for (const char* png : {"links_ep.png", "links-dispatch_ep.png", "links-collectives_ep.png", "node_load.png"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + png)) << png;
  const CliRun wide = run_nmpsim({"run",
                                  "--hw",
                                  "wsc-4wafer-8x8",
                                  "--attn-tp",
                                  "256",
                                  "--model",
                                  "deepseek-v2-lite",
                                  "--weight-bytes",
                                  "1",
                                  "--strategy",
                                  "ep",
                                  "--batch",
                                  "16",
                                  "--steps",
                                  "1",
                                  "--fidelity",
                                  "flow",
                                  "--no-plots",
                                  "--out",
                                  dir + "w"});
  ASSERT_EQ(wide.code, 0) << wide.out;
  EXPECT_NE(wide.out.find("warning: attention tensor parallelism over 256 nodes"), std::string::npos) << wide.out;
}

}  // namespace
}  // namespace nmpsim::testing
