// nmpsim serve: requests arrive (Poisson or a trace), a continuous-batching scheduler forms each step,
// and each step is simulated on the chip like `nmpsim run` (reused by shape): per-request TTFT, TPOT
// and latency, percentiles, throughput and goodput at an SLO (apps/serve.h, docs/MODEL.md "Serving").
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/commands.h"
#include "nmpsim/apps/serve.h"
#include "nmpsim/apps/serve_config.h"
#include "nmpsim/apps/serve_report.h"
#include "nmpsim/apps/serve_steps.h"
#include "nmpsim/apps/spec_options.h"
#include "nmpsim/base/output_files.h"
#include "nmpsim/mapping/placement_cache.h"
#include "nmpsim/methods/register_all.h"

namespace nmpsim::apps {

namespace po = boost::program_options;
using namespace serve;

namespace {

struct ServeOptions {
  double rate = 2, prompt_spread = 0, output_spread = 0, slo_ttft_ms = 0, slo_tpot_ms = 0;
  long long requests = 200, prompt_tokens = 512, output_tokens = 128, token_budget = 2048, max_seqs = 256;
  long long kv_tokens = 0, seed = 1;
  std::string trace, out = "serve-out", fidelity = "flow", cache, rates;

  void add(po::options_description& d) {
    // clang-format off
    d.add_options()
      ("help,h", "show this help")
      ("rate", po::value(&rate)->default_value(rate, "2"), "synthetic arrivals: Poisson, requests per second")
      ("requests", po::value(&requests)->default_value(requests), "synthetic arrivals: how many requests")
      ("prompt-tokens", po::value(&prompt_tokens)->default_value(prompt_tokens), "synthetic: mean prompt tokens")
      ("output-tokens", po::value(&output_tokens)->default_value(output_tokens), "synthetic: mean output tokens")
      ("prompt-spread", po::value(&prompt_spread)->default_value(0, "0"),
       "synthetic: prompt lengths uniform within +-this fraction of the mean (0..1)")
      ("output-spread", po::value(&output_spread)->default_value(0, "0"), "synthetic: likewise for output lengths")
      ("rates", po::value(&rates),
       "synthetic arrivals at each of these rates, R1,R2,... (requests per second; instead of --rate): "
       "rates.csv, goodput.png, one summary per rate; the step shapes are simulated once for all")
      ("no-plots", "do not draw latency_cdf.png / goodput.png")
      ("trace-requests", po::value(&trace), "requests from a CSV file arrival_s,prompt_tokens,output_tokens (docs/FORMATS.md) instead")
      ("slo-ttft-ms", po::value(&slo_ttft_ms)->default_value(0, "none"), "goodput: time to first token at most this")
      ("slo-tpot-ms", po::value(&slo_tpot_ms)->default_value(0, "none"), "goodput: time per output token at most this")
      ("token-budget", po::value(&token_budget)->default_value(token_budget), "scheduler: tokens per step (decodes + prefill chunks)")
      ("max-seqs", po::value(&max_seqs)->default_value(max_seqs), "scheduler: requests running at once")
      ("kv-tokens", po::value(&kv_tokens)->default_value(0, "from memory"),
       "scheduler: KV-cache capacity in tokens (default: every node's memory less the weights)")
      ("no-bucketing", "simulate every distinct step shape (slower; to measure the bucketing's error)")
      ("fidelity", po::value(&fidelity)->default_value(fidelity), "step simulation: flow or cycle")
      ("serve-seed", po::value(&seed)->default_value(seed), "synthetic arrivals: seed")
      ("out", po::value(&out)->default_value(out), "output directory: requests.csv, steps.csv, summary.json")
      ("cache", po::value(&cache), "placement cache directory (as nmpsim run)")
      ("quiet", "print nothing but errors");
    // clang-format on
  }
};

/// The serving config of the command line (errors name the options).
ServeConfig config_of(const po::variables_map& vm, const ServeOptions& o) {
  ServeConfig c;
  c.slo_ttft_ms = o.slo_ttft_ms;
  c.slo_tpot_ms = o.slo_tpot_ms;
  c.max_seqs = static_cast<int>(checked_count(o.max_seqs, "max-seqs", 1, kMaxSeqs));
  c.token_budget = static_cast<int>(checked_count(o.token_budget, "token-budget", 1, kMaxBudget));
  c.kv_tokens = vm["kv-tokens"].defaulted() ? 0 : static_cast<int64_t>(checked_count(o.kv_tokens, "kv-tokens", 1));
  c.bucketing = !vm.count("no-bucketing");
  if (vm.count("trace-requests")) {
    for (const char* k :
         {"rate", "requests", "prompt-tokens", "output-tokens", "prompt-spread", "output-spread", "serve-seed"})
      if (given(vm, k))
        throw UsageError(std::string("--") + k + ": applies to synthetic arrivals, not --trace-requests");
    c.trace_requests = o.trace;
    return c;
  }
  SyntheticArrivals& a = c.arrivals;
  if (!(o.rate > 0) || !std::isfinite(o.rate))
    throw UsageError("--rate: must be a positive number of requests per second");
  a.rate_per_s = o.rate;
  a.requests = static_cast<int>(checked_count(o.requests, "requests", 1, kMaxRequests));
  a.prompt_tokens = static_cast<int>(checked_count(o.prompt_tokens, "prompt-tokens", 1, kMaxTokens));
  a.output_tokens = static_cast<int>(checked_count(o.output_tokens, "output-tokens", 1, kMaxTokens));
  for (const auto& [v, k] : {std::pair{o.prompt_spread, "prompt-spread"}, {o.output_spread, "output-spread"}})
    if (!(v >= 0 && v <= 1)) throw UsageError(std::string("--") + k + ": must be in 0..1");
  a.prompt_spread = o.prompt_spread;
  a.output_spread = o.output_spread;
  a.seed = checked_count(o.seed, "serve-seed", 0);
  if (a.requests / a.rate_per_s > kMaxArrivalS)
    throw UsageError("--rate: " + std::to_string(a.requests) + " requests at this rate span more than " +
                     std::to_string(static_cast<long>(kMaxArrivalS)) + " s");
  return c;
}

void print_summary(const ServeOutcome& x, const std::string& out, const std::string& note) {
  const ServeSummary& sum = x.summary;
  std::printf(
      "nmpsim serve: %d requests over %.3f s, %zu steps (%zu shapes simulated)\n"
      "  TTFT ms p50 %.2f p90 %.2f p99 %.2f; TPOT ms p50 %.3f p90 %.3f p99 %.3f\n"
      "  throughput %.3f req/s, %.1f output tokens/s; goodput %.3f req/s (%.1f%% within the SLO)\n"
      "  power %.4g W mean (static %.4g W), area %.5g mm^2: goodput %.4g req/J, %.4g req/s per cm^2\n"
      "  outputs in %s%s%s\n",
      sum.requests, sum.duration_s, x.run.steps.size(), x.simulated_shapes, sum.ttft_p50_s * 1e3, sum.ttft_p90_s * 1e3,
      sum.ttft_p99_s * 1e3, sum.tpot_p50_s * 1e3, sum.tpot_p90_s * 1e3, sum.tpot_p99_s * 1e3,
      sum.throughput_requests_per_s, sum.throughput_tokens_per_s, sum.goodput_requests_per_s, 100 * sum.slo_attained,
      x.power.mean_power_w, x.power.static_w, x.power.area_mm2, x.power.goodput_requests_per_j,
      x.power.goodput_requests_per_s_per_mm2 * 100, out.c_str(), note.empty() ? "" : "; ", note.c_str());
}

/// Draws the plots into a scratch directory and adopts them into `dir`; returns gnuplot's note.
std::string plots(base::OutputFiles& out, const std::string& dir, const ServeRun* run,
                  const std::vector<RatePoint>& rates, const std::string& title) {
  const std::string scratch = out.make_scratch_dir(dir);
  const std::string note = write_serve_plots(scratch, run, rates, title);
  for (const char* png : {"latency_cdf.png", "goodput.png"})
    if (std::filesystem::exists(scratch + "/" + png)) out.adopt(scratch + "/" + png, dir + "/" + png, "--out");
  return note;
}

/// --rates: one synthetic run per offered rate, the step shapes shared.
std::vector<double> parse_rates(const std::string& text) {
  std::vector<double> rates;
  for (const std::string& item : split_list(text, "--rates")) {
    char* end = nullptr;
    const double r = std::strtod(item.c_str(), &end);
    if (*end != '\0' || !(r > 0) || !std::isfinite(r))
      throw UsageError("--rates: '" + base::shown(item) + "' is not a positive number of requests per second");
    rates.push_back(r);
  }
  if (rates.size() > 100) throw UsageError("--rates: at most 100 rates");
  return rates;
}

int serve_rates(const po::variables_map& vm, const ServeOptions& o, const ServeConfig& c,
                const std::vector<double>& rates, ServeContext& s) {
  std::vector<RatePoint> points;
  for (const double r : rates) {
    ServeConfig one = c;
    one.arrivals.rate_per_s = r;
    const ServeOutcome x = serve_requests(config_requests(one), c, s.scheduler, *s.steps, s.cost);
    points.push_back({r, x.summary, x.power});
  }
  base::OutputFiles out;
  out.make_dir(o.out, "--out");
  out.write(o.out + "/rates.csv", rates_csv(points), "--out");
  nlohmann::json j = {{"rates", rates_json(points)},
                      {"slo_ttft_ms", c.slo_ttft_ms},
                      {"slo_tpot_ms", c.slo_tpot_ms},
                      {"simulated_step_shapes", s.steps->simulated()}};
  out.write(o.out + "/summary.json", j.dump(2) + "\n", "--out");
  const std::string note = vm.count("no-plots") ? "" : plots(out, o.out, nullptr, points, s.title);
  out.commit();
  if (vm.count("quiet")) return kExitOk;
  std::printf("nmpsim serve: %zu offered rates, %zu step shapes simulated; outputs in %s%s%s\n", points.size(),
              s.steps->simulated(), o.out.c_str(), note.empty() ? "" : "; ", note.c_str());
  std::printf("  offered/s  throughput/s  goodput/s  within SLO  TTFT p99 ms  TPOT p99 ms  power W\n");
  for (const RatePoint& p : points)
    std::printf("  %9.3f  %12.3f  %9.3f  %9.1f%%  %11.2f  %11.3f  %7.4g\n", p.rate_per_s,
                p.summary.throughput_requests_per_s, p.summary.goodput_requests_per_s, 100 * p.summary.slo_attained,
                p.summary.ttft_p99_s * 1e3, p.summary.tpot_p99_s * 1e3, p.power.mean_power_w);
  return kExitOk;
}

}  // namespace

int cmd_serve(const std::vector<std::string>& args) {
  mapping::Registry registry;
  methods::register_all(registry);
  ServeOptions o;
  SpecOptions so;
  po::options_description desc(
      "nmpsim serve: requests served on the simulated chip, continuous batching, TTFT/TPOT/goodput\n\n"
      "Usage: nmpsim serve [options]   (defaults: HD-MoE 4x8 NMP chip, Mixtral-8x7B, EP, Poisson arrivals)\n\nOptions");
  o.add(desc);
  so.add_workload(desc);
  so.add_strategies(desc, registry, "ep");
  const po::variables_map vm = parse_options(args, desc);
  if (vm.count("help")) {
    std::cout << desc << "\nOutputs: docs/FORMATS.md. Exit codes: 0 ok, 1 simulation failure, 2 bad input.\n";
    return kExitOk;
  }
  RunSpec spec;
  so.apply(vm, spec, registry);
  if (spec.all_strategies || spec.strategies.size() != 1) throw UsageError("--strategy: serve runs one strategy");
  spec.fidelity = mapping::parse_fidelity(o.fidelity, "--fidelity");
  for (const auto& [v, k] : {std::pair{o.slo_ttft_ms, "slo-ttft-ms"}, {o.slo_tpot_ms, "slo-tpot-ms"}})
    if (!(v >= 0) || !std::isfinite(v)) throw UsageError(std::string("--") + k + ": must be a non-negative number");
  if (vm.count("rates") && (vm.count("trace-requests") || given(vm, "rate")))
    throw UsageError("--rates: synthetic arrivals at several rates; not with --trace-requests or --rate");
  const std::vector<double> rates = vm.count("rates") ? parse_rates(o.rates) : std::vector<double>{};
  const ServeConfig config = config_of(vm, o);
  // The requests made once here to check the trace or the synthetic options before anything runs.
  const std::vector<Request> requests = config_requests(config);
  base::OutputFiles::check_dir(o.out, "--out");
  mapping::PlacementCache placements(placement_cache_dir(vm, o.cache), [](const std::string&) {});
  ExperimentOptions opt;
  opt.registry = &registry;
  opt.cache = &placements;
  opt.jobs = 1;
  ServeContext s = serve_context(spec, config, opt);
  if (vm.count("rates")) return serve_rates(vm, o, config, rates, s);
  const ServeOutcome x = serve_requests(requests, config, s.scheduler, *s.steps, s.cost);
  const ServeRun& run = x.run;
  base::OutputFiles out;
  out.make_dir(o.out, "--out");
  out.write(o.out + "/requests.csv", requests_csv(run), "--out");
  out.write(o.out + "/steps.csv", steps_csv(run), "--out");
  out.write(o.out + "/summary.json", outcome_json(x, config).dump(2) + "\n", "--out");
  const std::string note = vm.count("no-plots") ? "" : plots(out, o.out, &run, {}, s.title);
  out.commit();
  if (!vm.count("quiet")) print_summary(x, o.out, note);
  return kExitOk;
}

}  // namespace nmpsim::apps
