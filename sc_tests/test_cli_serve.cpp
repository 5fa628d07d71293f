// `nmpsim serve` end to end: a lone request takes the steps `nmpsim run` reports for its prefill and
// its decodes, and bad request traces are one-line errors that write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace nmpsim::testing {
namespace {

/// The step time `nmpsim run` reports for one step (flow fidelity, EP, a one-layer model, 4x4 chip).
double run_step_ms(const std::string& model, std::vector<std::string> shape) {
  const std::string out = ::testing::TempDir() + "nmpsim_serve_run";
  std::vector<std::string> argv = {"run", "--hw",       "nmp-4x4-5t50g", "--model", model, "--strategy",
                                   "ep",  "--fidelity", "flow",          "--steps", "1",   "--out",
                                   out,   "--no-plots", "--quiet"};
  argv.insert(argv.end(), shape.begin(), shape.end());
  const CliRun r = run_nmpsim(argv);
  EXPECT_EQ(r.code, 0) << r.out;
  std::ifstream in(out + "/summary.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  return j["strategies"]["ep"]["mean_tbt_us"].get<double>() * 1e-3;
}

TEST(CliServe, ALoneRequestTakesThePrefillAndDecodeStepsNmpsimRunReports) {
  const std::string model = one_layer_model();
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "nmpsim_serve_one.csv") << "arrival_s,prompt_tokens,output_tokens\n0.5,64,3\n";
  const std::string out = dir + "nmpsim_serve_one";
  std::filesystem::remove_all(out);
  const CliRun r = run_nmpsim({"serve", "--hw", "nmp-4x4-5t50g", "--model", model, "--trace-requests",
                               dir + "nmpsim_serve_one.csv", "--out", out, "--quiet"});
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(out + "/summary.json");
  const nlohmann::json s = nlohmann::json::parse(in);
  const double prefill = run_step_ms(model, {"--phase", "prefill", "--batch", "1", "--prompt-tokens", "64"});
  // The two decode steps attend over 64 and 65 keys: 64 is a grid point, 65 lies 1/16 of the way from
  // 64 to the next one, 80 (docs/MODEL.md "Serving").
  const double d64 = run_step_ms(model, {"--phase", "decode", "--batch", "1", "--context", "64"});
  const double d80 = run_step_ms(model, {"--phase", "decode", "--batch", "1", "--context", "80"});
  const double decode = 0.5 * (d64 + (15.0 / 16 * d64 + 1.0 / 16 * d80));
  EXPECT_NEAR(s["ttft_ms"]["p50"].get<double>(), prefill, 1e-6 * prefill);
  EXPECT_NEAR(s["tpot_ms"]["p50"].get<double>(), decode, 1e-6 * decode);
  EXPECT_EQ(s["requests"], 1);
}

TEST(CliServe, BadRequestTracesAreOneLineExitTwoAndWriteNothing) {
  const std::string dir = ::testing::TempDir();
  const std::string out = dir + "nmpsim_serve_bad_out";
  std::filesystem::remove_all(out);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"arrival_s,prompt_tokens,output_tokens\n-0.5,10,10\n", "arrival_s: -0.5 is negative"},
      {"arrival_s,prompt_tokens,output_tokens\n1,10,10\n0.5,10,10\n", "(arrivals must be sorted)"},
      {"arrival_s,prompt_tokens,output_tokens\n1,10,0\n", "output_tokens: a request needs at least one token"},
      {"arrival_s,prompt_tokens,output_tokens\n1,40000,10\n", "exceed the model's context of 32768"},
  };
  for (const auto& [text, want] : cases) {
    std::ofstream(dir + "nmpsim_serve_bad.csv") << text;
    const CliRun r = run_nmpsim({"serve", "--trace-requests", dir + "nmpsim_serve_bad.csv", "--out", out, "--quiet"});
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_FALSE(std::filesystem::exists(out)) << text;
  }
}

TEST(CliServe, SeveralRatesShareTheirStepsAndGoodputNeverExceedsThroughput) {
  const std::string model = one_layer_model();
  const std::string out = ::testing::TempDir() + "nmpsim_serve_rates";
  std::filesystem::remove_all(out);
  const CliRun r = run_nmpsim({"serve", "--hw", "nmp-4x4-5t50g", "--model", model, "--rates", "5,50", "--requests",
                               "60", "--prompt-tokens", "64", "--output-tokens", "16", "--slo-tpot-ms", "1", "--out",
                               out, "--no-plots", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(out + "/summary.json");
  const nlohmann::json s = nlohmann::json::parse(in);
  ASSERT_EQ(s["rates"].size(), 2u);
  for (const nlohmann::json& p : s["rates"]) {
    EXPECT_LE(p["goodput_requests_per_s"].get<double>(), p["throughput_requests_per_s"].get<double>() + 1e-12);
    EXPECT_LE(p["throughput_requests_per_s"].get<double>(), 1.5 * p["offered_rate_per_s"].get<double>());
  }
  EXPECT_TRUE(std::filesystem::exists(out + "/rates.csv"));
  const CliRun bad = run_nmpsim({"serve", "--rates", "5,-1", "--out", out + "_bad", "--quiet"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("--rates: '-1' is not a positive number of requests per second"), std::string::npos)
      << bad.out;
  EXPECT_FALSE(std::filesystem::exists(out + "_bad"));
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_all(path)); }

/// The rows of a results.csv as header -> cell maps.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& l) {
    std::vector<std::string> cells(1);
    for (char c : l) {
      if (c == ',')
        cells.emplace_back();
      else
        cells.back().push_back(c);
    }
    return cells;
  };
  std::getline(in, line);
  header = split(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

TEST(CliServeSweep, EveryPointServesAsNmpsimServeDoesWithGoodputPowerAndArea) {
  const std::string model = one_layer_model();
  const std::string out = ::testing::TempDir() + "nmpsim_serve_sweep";
  std::filesystem::remove_all(out);
  const CliRun r = run_nmpsim({"sweep",
                               "--hw",
                               "nmp-4x4-5t50g",
                               "--model",
                               model,
                               "--strategy",
                               "ep",
                               "--axis",
                               "serve.rate=5,20",
                               "--axis",
                               "compute.peak_tflops=2.5,5",
                               "--serve",
                               "requests=30",
                               "--serve",
                               "slo_tpot_ms=1",
                               "--out",
                               out,
                               "--jobs",
                               "2",
                               "--quiet"});
  ASSERT_EQ(r.code, 0) << r.out;
  const auto rows = csv_rows(out + "/results.csv");
  ASSERT_EQ(rows.size(), 4u);
  // Two designs, so two step caches shared by their two rates.
  size_t caches = 0;
  for (const auto& e : std::filesystem::directory_iterator(out + "/step_cache"))
    caches += e.path().extension() == ".json";  // beside each its .lock
  EXPECT_EQ(caches, 2u);
  for (const char* png : {"sweep_goodput.png", "sweep_pareto.png"})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + png)) << png;
  // The last point (20 requests/s, 5 TFLOP/s) as `nmpsim serve` serves it.
  const std::string one = out + "_one";
  std::filesystem::remove_all(one);
  const CliRun s =
      run_nmpsim({"serve", "--hw", "nmp-4x4-5t50g", "--model", model, "--set", "compute.peak_tflops=5", "--rate", "20",
                  "--requests", "30", "--slo-tpot-ms", "1", "--out", one, "--no-plots", "--quiet"});
  ASSERT_EQ(s.code, 0) << s.out;
  const nlohmann::json j = read_json(one + "/summary.json");
  const auto& row = rows.back();
  EXPECT_EQ(row.at("serve.rate"), "20");
  // results.csv has 6 significant digits.
  const double goodput = j["goodput_requests_per_s"].get<double>(), power = j["power"]["mean_power_w"].get<double>();
  EXPECT_NEAR(std::stod(row.at("goodput_requests_per_s")), goodput, 1e-5 * goodput);
  EXPECT_NEAR(std::stod(row.at("mean_power_w")), power, 1e-5 * power);
  // Area by hand (docs/MODEL.md "Area and power"): 16 nodes x (5 TFLOP/s x 0.82 mm^2 + 8 GiB x 33
  // mm^2 + 6 ports x 2 VCs x 8 flits x 50 bytes of buffers at 4.2 mm^2/MiB).
  const double node_mm2 = 5 * 0.82 + 8 * 33 + 4800.0 / (1 << 20) * 4.2;
  EXPECT_NEAR(std::stod(row.at("area_mm2")), 16 * node_mm2, 0.01);
  EXPECT_NEAR(j["power"]["area_mm2"].get<double>(), 16 * node_mm2, 1e-9);
  // Goodput per watt is goodput over mean power.
  EXPECT_NEAR(j["power"]["goodput_requests_per_j"].get<double>(),
              j["goodput_requests_per_s"].get<double>() / j["power"]["mean_power_w"].get<double>(), 1e-12);
}

TEST(CliServeSweep, BadServeOptionsAreOneLineErrorsBeforeAnythingRuns) {
  const std::string out = ::testing::TempDir() + "nmpsim_serve_sweep_bad";
  std::filesystem::remove_all(out);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--serve", "rat=2"}, "--serve: serve.rat: unknown field"},
      {{"--serve", "slo_tpot_ms"}, "--serve: expected KEY=VALUE"},
      {{"--axis", "serve.max_seqs=0,4"}, "serve.max_seqs:"},
      {{"--serve", "token_budget=8"}, "serve.token_budget: (8) must be at least serve.max_seqs (256)"},
      {{"--serve", "rate=2", "--strategy", "all"}, "a serving sweep names its strategies"},
      {{"--serve", "trace_requests=/nonexistent/requests.csv"}, "/nonexistent/requests.csv"},
  };
  for (const auto& [extra, want] : cases) {
    std::vector<std::string> argv = {"sweep", "--axis", "compute.peak_tflops=2.5,5", "--out", out, "--quiet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const CliRun r = run_nmpsim(argv);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_FALSE(std::filesystem::exists(out)) << want;
  }
}

TEST(CliServeSweep, RatesOfOneDesignShareTheirStepTimesAndPointKeepsItsSpec) {
  const std::string model = one_layer_model();
  const std::string out = ::testing::TempDir() + "nmpsim_serve_sweep_cache";
  std::filesystem::remove_all(out);
  const std::vector<std::string> sweep = {
      "sweep", "--hw",   "nmp-4x4-5t50g",      "--model", model,         "--strategy",
      "ep",    "--axis", "serve.rate=20,5,10", "--serve", "requests=20", "--out",
      out,     "--quiet"};
  std::vector<std::string> two = sweep;
  two.insert(two.end(), {"--jobs", "2"});
  ASSERT_EQ(run_nmpsim(two).code, 0);
  // One design: one cache file holding every shape any of its three rates asked for, and the rate run
  // after the first found most of its shapes there.
  std::vector<std::string> caches;
  for (const auto& e : std::filesystem::directory_iterator(out + "/step_cache"))
    if (e.path().extension() == ".json") caches.push_back(e.path().string());
  ASSERT_EQ(caches.size(), 1u);
  const nlohmann::json cache = read_json(caches[0]);
  size_t simulated = 0;
  for (const char* p : {"p0000", "p0001", "p0002"})
    simulated +=
        read_json(out + "/points/" + p + "/summary.json")["strategies"]["ep"]["simulated_step_shapes"].get<size_t>();
  EXPECT_GE(simulated, cache["shapes"].size());  // no shape lost
  EXPECT_GT(cache["shapes"].size(), 0u);
  // --point K runs a point of sweep.json as it was resolved: no --serve on top of it.
  const CliRun p = run_nmpsim({"sweep", "--out", out, "--point", "0", "--serve", "slo_tpot_ms=5", "--quiet"});
  EXPECT_EQ(p.code, 2) << p.out;
  EXPECT_NE(p.out.find("--point runs a point of DIR/sweep.json"), std::string::npos) << p.out;
  EXPECT_EQ(run_nmpsim({"sweep", "--out", out, "--collect", "--quiet"}).code, 0);
}

}  // namespace
}  // namespace nmpsim::testing
