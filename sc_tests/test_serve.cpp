// The serving scheduler (apps/serve.h) against hand-computed cases: a step timer of our own gives
// known step times, so TTFT, TPOT, capacity and Little's law can be checked by arithmetic.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nmpsim/apps/serve.h"
#include "nmpsim/apps/serve_config.h"
#include "nmpsim/apps/serve_steps.h"
#include "nmpsim/apps/sweep.h"
#include "nmpsim/base/errors.h"

namespace nmpsim::apps::serve {
namespace {

/// Prefill steps (any prefill tokens) take `prefill_s`, decode-only steps `decode_s`.
StepTimer two_speeds(double prefill_s, double decode_s) {
  return [=](const StepShape& s) { return StepCost{s.prefill_tokens > 0 ? prefill_s : decode_s, 1.0}; };
}

TEST(Serve, ALoneRequestsTtftIsItsPrefillStepAndItsTpotItsDecodeStep) {
  const std::vector<Request> one = {{2.0, 100, 5}};
  const ServeRun run = simulate_serving(one, SchedulerConfig{}, two_speeds(0.1, 0.01));
  const RequestResult& r = run.requests.at(0);
  EXPECT_DOUBLE_EQ(r.first_token_s, 2.1);  // the prefill step yields the first token
  EXPECT_NEAR(r.ttft_s(), 0.1, 1e-12);
  EXPECT_NEAR(r.tpot_s(), 0.01, 1e-12);  // four decode steps for the other four tokens
  EXPECT_NEAR(r.latency_s(), 0.14, 1e-12);
  ASSERT_EQ(run.steps.size(), 5u);
  EXPECT_EQ(run.steps[0].prefill_tokens, 100);
  EXPECT_EQ(run.steps[1].decode_tokens, 1);
  EXPECT_EQ(run.steps[1].context_tokens, 100);  // the prompt's KV
  EXPECT_EQ(run.steps[4].context_tokens, 103);
  EXPECT_DOUBLE_EQ(run.energy_j, 5.0);
}

TEST(Serve, APromptLongerThanTheBudgetIsPrefilledInChunks) {
  SchedulerConfig c;
  c.token_budget = 64;
  c.max_seqs = 8;
  const ServeRun run = simulate_serving({{0.0, 200, 2}}, c, two_speeds(0.1, 0.01));
  // 64 + 64 + 64 + 8: four prefill steps, then one decode.
  EXPECT_DOUBLE_EQ(run.requests[0].ttft_s(), 0.4);
  ASSERT_EQ(run.steps.size(), 5u);
  EXPECT_EQ(run.steps[3].prefill_tokens, 8);
}

TEST(Serve, WithArrivalsFarApartLatencyDoesNotDependOnTheRate) {
  SyntheticArrivals a;
  a.requests = 50;
  a.prompt_tokens = 64;
  a.output_tokens = 16;
  a.rate_per_s = 0.01;  // 100 s apart on average; a request takes 0.25 s
  const ServeRun slow = simulate_serving(synthetic_requests(a), SchedulerConfig{}, two_speeds(0.1, 0.01));
  a.rate_per_s = 0.001;
  const ServeRun slower = simulate_serving(synthetic_requests(a), SchedulerConfig{}, two_speeds(0.1, 0.01));
  const ServeSummary s1 = summarize(slow, 0, 0), s2 = summarize(slower, 0, 0);
  EXPECT_NEAR(s1.latency_mean_s, 0.1 + 15 * 0.01, 1e-9);
  EXPECT_NEAR(s2.latency_mean_s, s1.latency_mean_s, 1e-9);
  EXPECT_NEAR(s1.ttft_p99_s, 0.1, 1e-9);
}

TEST(Serve, AboveCapacityTheQueueGrowsAndGoodputSaturates) {
  // One request at a time, every step 10 ms, 10 output tokens: 10 steps per request, so the chip
  // serves 10 requests per second whatever the offer.
  SchedulerConfig c;
  c.max_seqs = 1;
  SyntheticArrivals a;
  a.requests = 2000;
  a.prompt_tokens = 8;
  a.output_tokens = 10;
  a.rate_per_s = 50;
  const ServeRun run = simulate_serving(synthetic_requests(a), c, two_speeds(0.01, 0.01));
  const ServeSummary s = summarize(run, /*ttft*/ 1e9, /*tpot*/ 0.0105);
  EXPECT_NEAR(s.throughput_requests_per_s, 10.0, 0.2);
  EXPECT_NEAR(s.goodput_requests_per_s, 10.0, 0.2);  // every request keeps its TPOT; TTFT is unbounded here
  // The queue grows: the last request waits about 2000 / 10 - 2000 / 50 = 160 s before it starts.
  EXPECT_GT(run.requests.back().ttft_s(), 150.0);
  EXPECT_LT(run.requests.front().ttft_s(), 0.02);
  const ServeSummary tight = summarize(run, 1.0, 0.0105);  // a 1 s TTFT limit: only the first few keep it
  EXPECT_LT(tight.goodput_requests_per_s, 0.1);
}

TEST(Serve, LittlesLawHoldsOnALongRun) {
  SchedulerConfig c;
  c.max_seqs = 16;
  SyntheticArrivals a;
  a.requests = 200000;  // the realised arrival rate is then within 0.3% (one sigma) of the offered one
  a.prompt_tokens = 32;
  a.output_tokens = 20;
  a.prompt_spread = a.output_spread = 0.5;
  a.rate_per_s = 30;
  // Steps slow down with the tokens they carry: the queue is busy but stable.
  const StepTimer timer = [](const StepShape& s) {
    return StepCost{0.004 + 1e-4 * (s.decode_tokens + s.prefill_tokens), 0};
  };
  const ServeRun run = simulate_serving(synthetic_requests(a), c, timer);
  const ServeSummary s = summarize(run, 0, 0);
  // L (time-averaged requests in the system, integrated step by step on the scheduler's clock) = lambda W
  // with lambda the offered rate. The clock's integral itself must equal the sum of the latencies.
  EXPECT_NEAR(s.mean_in_system / (a.rate_per_s * s.latency_mean_s), 1.0, 0.02);
  double latencies = 0;
  for (const RequestResult& r : run.requests) latencies += r.latency_s();
  EXPECT_NEAR(run.request_seconds / latencies, 1.0, 1e-9);
}

TEST(Serve, WhenTheKvCacheRunsOutTheLastAdmittedIsPreemptedAndRecomputed) {
  SchedulerConfig c;
  c.kv_tokens = 30;
  const std::vector<Request> two = {{0.0, 10, 15}, {0.0, 10, 15}};
  const ServeRun run = simulate_serving(two, c, two_speeds(0.1, 0.01));
  // Both prompts fit (20 of 30); after 5 decodes each (30 tokens) the next decodes do not: the second
  // request goes back to the queue and the first runs alone, as it would have without the second.
  EXPECT_EQ(run.requests[0].preemptions, 0);
  EXPECT_EQ(run.requests[1].preemptions, 1);
  EXPECT_NEAR(run.requests[0].latency_s(), 0.1 + 14 * 0.01, 1e-9);
  EXPECT_GT(run.requests[1].finish_s, run.requests[0].finish_s);
  EXPECT_LE(run.peak_kv_tokens, 30);
  // By hand: both prefill in step 1 (0.1 s), 5 joint decodes (0.15 s); at the 6th the KV is full and
  // request 2 (6 tokens generated) is preempted; request 1 decodes alone to 0.24 s; then request 2
  // recomputes 10 + 6 = 16 tokens (0.1 s, its 7th token) and decodes 8 more (0.42 s).
  bool recompute = false;
  for (const StepShape& sh : run.steps) recompute |= sh.prefill_tokens == 16;
  EXPECT_TRUE(recompute);
  EXPECT_NEAR(run.requests[1].finish_s, 0.42, 1e-9);
}

TEST(Serve, MaxSeqsAndTheTokenBudgetShapeTheSteps) {
  // Two running at most: the third waits for the first to finish (3 steps: prefill, 2 decodes).
  SchedulerConfig c;
  c.max_seqs = 2;
  c.token_budget = 10;
  const std::vector<Request> three = {{0.0, 4, 3}, {0.0, 4, 3}, {0.0, 4, 1}};
  const ServeRun run = simulate_serving(three, c, two_speeds(0.1, 0.01));
  ASSERT_GE(run.steps.size(), 4u);
  EXPECT_EQ(run.steps[0].prefill_tokens, 8);  // both prompts, within the budget of 10
  EXPECT_EQ(run.steps[1].decode_tokens, 2);
  EXPECT_EQ(run.steps[1].prefill_tokens, 0);  // the third is not admitted: two are running
  // The first two finish at 0.1 + 2 x 0.01; the third's one-token prefill then takes 0.1 s.
  EXPECT_NEAR(run.requests[2].first_token_s, 0.22, 1e-9);
  EXPECT_NEAR(run.requests[2].finish_s, 0.22, 1e-9);
  // Decodes count against the budget: two decoding requests leave 8 of 10 tokens for a prompt of 20,
  // which arrives after their prefill and is prefilled 8 + 8 + 4 in mixed steps.
  c.max_seqs = 4;
  const std::vector<Request> mixed = {{0.0, 4, 10}, {0.0, 4, 10}, {0.05, 20, 2}};
  const ServeRun m = simulate_serving(mixed, c, two_speeds(0.1, 0.01));
  ASSERT_GE(m.steps.size(), 4u);
  EXPECT_EQ(m.steps[1].decode_tokens, 2);
  EXPECT_EQ(m.steps[1].prefill_tokens, 8);
  EXPECT_EQ(m.steps[2].prefill_tokens, 8);
  EXPECT_EQ(m.steps[3].prefill_tokens, 4);
  EXPECT_NEAR(m.requests[2].first_token_s, 0.4, 1e-9);  // four 0.1 s steps (each carries a prefill)
}

TEST(Serve, RequestsThatCanNeverRunAreOneLineErrors) {
  SchedulerConfig c;
  c.kv_tokens = 100;
  c.max_context = 80;
  try {
    simulate_serving({{0.0, 50, 40}}, c, two_speeds(0.1, 0.01));
    ADD_FAILURE() << "accepted";
  } catch (const base::InputError& e) {
    EXPECT_STREQ(e.what(), "request 1: 90 tokens of prompt and output exceed the model's context of 80");
  }
  c.max_context = 0;
  EXPECT_THROW(simulate_serving({{0.0, 90, 40}}, c, two_speeds(0.1, 0.01)), base::InputError);
}

TEST(ServeTrace, BadRowsAreOneLineErrorsNamingTheLineAndField) {
  const std::string path = ::testing::TempDir() + "nmpsim_serve_trace.csv";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"arrival,prompt,output\n", "line 1: expected the header 'arrival_s,prompt_tokens,output_tokens'"},
      {"arrival_s,prompt_tokens,output_tokens\n-1,5,5\n", "line 2: arrival_s: -1 is negative"},
      {"arrival_s,prompt_tokens,output_tokens\n2,5,5\n1,5,5\n",
       "line 3: arrival_s: 1 is before the previous request's (arrivals must be sorted)"},
      {"arrival_s,prompt_tokens,output_tokens\n0,0,5\n", "line 2: prompt_tokens: a request needs at least one token"},
      {"arrival_s,prompt_tokens,output_tokens\n0,5,x\n", "line 2: output_tokens: 'x' is not a whole number"},
      {"arrival_s,prompt_tokens,output_tokens\n0,5\n", "line 2: expected 3 fields, got 2"},
      {"arrival_s,prompt_tokens,output_tokens\nnan,5,5\n", "line 2: arrival_s: 'nan' is not a number"},
      {"arrival_s,prompt_tokens,output_tokens\n", "no requests"},
      {"arrival_s,prompt_tokens,output_tokens\n0,8,2,\n", "line 2: expected 3 fields, got 4"},
      {"arrival_s,prompt_tokens,output_tokens\n 0,8,2\n", "line 2: arrival_s: ' 0' is not a number"},
      {"arrival_s,prompt_tokens,output_tokens\n1e15,8,2\n",
       "line 2: arrival_s: 1e15 is more than 10^7 s (about four months)"},
  };
  for (const auto& [text, want] : cases) {
    std::ofstream(path) << text;
    try {
      read_request_trace(path);
      ADD_FAILURE() << text;
    } catch (const base::InputError& e) {
      EXPECT_EQ(std::string(e.what()), path + ": " + want) << text;
    }
  }
  std::ofstream(path) << "\xEF\xBB\xBF"
                         "arrival_s,prompt_tokens,output_tokens\r\n0,5,7\r\n0.5,100,1\n";  // BOM, CRLF
  const std::vector<Request> ok = read_request_trace(path);
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_EQ(ok[1].prompt_tokens, 100);
}

TEST(ServeSteps, TheBucketGridRoundsUpByLessThanAQuarter) {
  EXPECT_EQ(bucket_up(0), 0);
  EXPECT_EQ(bucket_up(4), 4);
  EXPECT_EQ(bucket_up(5), 5);
  EXPECT_EQ(bucket_up(9), 10);
  EXPECT_EQ(bucket_up(17), 20);
  EXPECT_EQ(bucket_up(513), 640);
  for (int v = 1; v < 100000; v += 7) {
    ASSERT_GE(bucket_up(v), v);
    ASSERT_LT(bucket_up(v), 1.25 * v + 1) << v;
  }
}

TEST(ServeSteps, InterpolationBetweenGridShapesIsExactForAMultilinearCost) {
  // f is linear in each count for the others fixed, so multilinear interpolation reproduces it.
  auto f = [](const StepShape& s) {
    return 1e-3 * (1 + 2.0 * s.decode_tokens + 3.0 * s.prefill_tokens + 0.5 * s.context_tokens +
                   0.01 * s.decode_tokens * s.context_tokens);
  };
  for (const StepShape& s :
       {StepShape{37, 0, 613}, StepShape{0, 999, 0}, StepShape{3, 130, 77}, StepShape{200, 1, 5000}}) {
    int calls = 0;
    const StepCost c = interpolated(s, [&](const StepShape& g) {
      ++calls;
      EXPECT_EQ(bucket_up(g.decode_tokens), g.decode_tokens);  // only grid shapes are simulated
      EXPECT_EQ(bucket_up(g.prefill_tokens), g.prefill_tokens);
      EXPECT_EQ(bucket_up(g.context_tokens), g.context_tokens);
      return StepCost{f(g), 2 * f(g)};
    });
    EXPECT_NEAR(c.seconds, f(s), 1e-12 * f(s)) << s.decode_tokens << " " << s.prefill_tokens << " " << s.context_tokens;
    EXPECT_NEAR(c.energy_j, 2 * f(s), 1e-12 * f(s));
    EXPECT_LE(calls, 8);
  }
}

TEST(ServePower, IdleTimeIsChargedAtTheStaticPower) {
  // Two lone requests 10 s apart, 3 steps each of 0.1 s at 1 J: busy 0.6 s of a 10.3 s run.
  const ServeRun run = simulate_serving({{0.0, 10, 3}, {10.0, 10, 3}}, SchedulerConfig{}, two_speeds(0.1, 0.1));
  const ServeSummary sum = summarize(run, 0, 0);
  hw::CostReport cost;
  cost.nodes = 2;
  cost.compute_static_w = 4;  // 2 nodes x 5 W
  cost.dram_background_w = 1;
  cost.logic_mm2 = 50;  // 2 nodes x 50 mm^2
  const ServePower p = serve_power(run, sum, cost);
  EXPECT_NEAR(run.busy_s, 0.6, 1e-12);
  EXPECT_NEAR(sum.duration_s, 10.3, 1e-12);
  EXPECT_NEAR(p.static_w, 10, 1e-12);
  EXPECT_NEAR(p.idle_energy_j, 10 * 9.7, 1e-9);
  EXPECT_NEAR(p.mean_power_w, (6 + 97) / 10.3, 1e-9);
  EXPECT_NEAR(p.goodput_requests_per_j, (2 / 10.3) / ((6 + 97) / 10.3), 1e-12);  // 2 requests / 103 J
  EXPECT_NEAR(p.area_mm2, 100, 1e-12);
  EXPECT_NEAR(p.goodput_requests_per_s_per_mm2, 2 / 10.3 / 100, 1e-12);
}

TEST(ServeConfig, ReadsEveryKeyAndNamesTheBadOne) {
  const nlohmann::json j = {{"rate", 3.5},         {"requests", 40},       {"prompt_tokens", 64},
                            {"output_tokens", 8},  {"prompt_spread", 0.5}, {"output_spread", 0.25},
                            {"seed", 7},           {"slo_ttft_ms", 2000},  {"slo_tpot_ms", 50},
                            {"token_budget", 512}, {"max_seqs", 16},       {"kv_tokens", 100000},
                            {"bucketing", false}};
  const ServeConfig c = serve_config_from_json(j, "sweep.json");
  EXPECT_EQ(c.arrivals.rate_per_s, 3.5);
  EXPECT_EQ(c.arrivals.requests, 40);
  EXPECT_EQ(c.arrivals.seed, 7u);
  EXPECT_EQ(c.slo_tpot_ms, 50);
  EXPECT_EQ(c.token_budget, 512);
  EXPECT_EQ(c.kv_tokens, 100000);
  EXPECT_FALSE(c.bucketing);
  EXPECT_EQ(serve_config_from_json(serve_config_to_json(c), "again").arrivals.output_spread, 0.25);
  auto error = [](const nlohmann::json& bad) {
    try {
      (void)serve_config_from_json(bad, "sweep.json");
    } catch (const base::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error({{"rat", 1}}), "sweep.json: serve.rat: unknown field");
  EXPECT_NE(error({{"rate", -1}}).find("sweep.json: serve.rate:"), std::string::npos);
  EXPECT_NE(error({{"max_seqs", 0}}).find("sweep.json: serve.max_seqs:"), std::string::npos);
  EXPECT_NE(error({{"prompt_spread", 2}}).find("sweep.json: serve.prompt_spread:"), std::string::npos);
  EXPECT_EQ(error({{"trace_requests", "t.csv"}, {"rate", 2}}),
            "sweep.json: serve.rate: applies to synthetic arrivals, not trace_requests");
  EXPECT_NE(error(nlohmann::json::array()).find("sweep.json"), std::string::npos);
}

TEST(StepCache, TakesTheShapesOfItsOwnRunOnly) {
  SimulatedSteps steps(RunSpec{}, ExperimentOptions{}, true);
  steps.set_identity({{"hardware", "a"}});
  nlohmann::json file = steps.to_json();
  file["shapes"] = {{1, 0, 1, 0.5, 2.0}, {0, 64, 0, 0.25, 1.0}};
  EXPECT_EQ(steps.adopt(file), 2u);
  EXPECT_EQ(steps.adopt(file), 0u);  // nothing new
  // A grid shape is answered from what was taken, without simulating (the empty run spec would fail).
  EXPECT_EQ(steps(StepShape{1, 0, 1}).seconds, 0.5);
  EXPECT_EQ(steps.simulated(), 0u);
  EXPECT_EQ(steps.to_json()["shapes"].size(), 2u);
  // Another run's file (another hardware), or a damaged one, is not taken.
  SimulatedSteps other(RunSpec{}, ExperimentOptions{}, true);
  other.set_identity({{"hardware", "b"}});
  EXPECT_EQ(other.adopt(file), 0u);
  SimulatedSteps fresh(RunSpec{}, ExperimentOptions{}, true);
  fresh.set_identity({{"hardware", "a"}});
  for (const nlohmann::json& bad : {nlohmann::json{{1.5, 0, 1, 0.5, 2.0}}, nlohmann::json{{1, 0, 1, -0.5, 2.0}},
                                    nlohmann::json{{1, 0, 1, 0.5}}, nlohmann::json{{-1, 0, 1, 0.5, 2.0}}}) {
    nlohmann::json damaged = file;
    damaged["shapes"] = bad;
    EXPECT_EQ(fresh.adopt(damaged), 0u) << bad.dump();
  }
  EXPECT_EQ(fresh.adopt(nlohmann::json::array()), 0u);
}

}  // namespace
}  // namespace nmpsim::apps::serve

namespace nmpsim::apps {
namespace {

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ServeSweepPlots, GoodputAtEachDesignsBestRateAndTheFrontOfBoth) {
  SweepSpec s;
  s.serve = nlohmann::json::object();
  s.axes = {{"compute.peak_tflops", {2.5, 10}}, {"serve.rate", {1, 4}}};
  // Goodput, goodput per joule, per mm^2 of logic: at 2.5 TFLOP/s the best rate is 1 (overloaded at
  // 4), at 10 it is 4.
  const std::string head =
      "point,compute.peak_tflops,serve.rate,strategy,goodput_requests_per_s,throughput_requests_per_s,slo_attained,"
      "ttft_p50_ms,ttft_p99_ms,tpot_p50_ms,tpot_p99_ms,energy_per_output_token_j,mean_power_w,area_mm2,"
      "logic_area_mm2,goodput_requests_per_j,goodput_requests_per_s_per_mm2,goodput_requests_per_s_per_logic_mm2,"
      "status\n";
  const std::string csv = head +
                          "p0000,2.5,1,ep,0.9,0.9,1,1,1,1,1,1,10,100,10,0.09,0.009,0.09,ok\n"
                          "p0001,2.5,4,ep,0.2,2.5,0.1,1,1,1,1,1,10,100,10,0.02,0.002,0.02,ok\n"
                          "p0002,10,1,ep,0.9,0.9,1,1,1,1,1,1,20,100,40,0.045,0.009,0.0225,ok\n"
                          "p0003,10,4,ep,3.6,3.6,1,1,1,1,1,1,30,100,40,0.12,0.036,0.09,ok\n";
  const std::string dir = ::testing::TempDir() + "nmpsim_serve_sweep_plots";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  (void)sweep_plots(dir, s, csv);
  const std::string line = file_text(dir + "/sweep_goodput.dat");
  EXPECT_EQ(line, "# ep\n0 0.9\n1 3.6\n\n\n") << line;
  // Per design at its best rate: (0.09 req/J, 9 req/s per cm^2) and (0.12, 9): the second dominates.
  const std::string front = file_text(dir + "/sweep_pareto.dat");
  EXPECT_NE(front.find("# front\n0.12 9\n"), std::string::npos) << front;
  EXPECT_EQ(front.find("0.09 9\n", front.find("# front")), std::string::npos) << front;
  // Each point labelled with its design.
  const std::string labels = file_text(dir + "/sweep_pareto_labels.dat");
  EXPECT_NE(labels.find("0.12 9 \"peak_tflops=10\"\n"), std::string::npos) << labels;
  EXPECT_NE(labels.find("0.09 9 \"peak_tflops=2.5\"\n"), std::string::npos) << labels;
}

}  // namespace
}  // namespace nmpsim::apps
