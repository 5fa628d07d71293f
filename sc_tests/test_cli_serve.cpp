// `nmpsim serve` end to end: a lone request takes the steps `nmpsim run` reports for its prefill and
// its decodes, and bad request traces are one-line errors that write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

}  // namespace
}  // namespace nmpsim::testing

namespace nmpsim::testing {
namespace {

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

}  // namespace
}  // namespace nmpsim::testing
