// nmpsim serve: requests arrive (Poisson or a trace), a continuous-batching scheduler forms each step,
// and each step is simulated on the chip like `nmpsim run` (reused by shape): per-request TTFT, TPOT
// and latency, percentiles, throughput and goodput at an SLO (apps/serve.h, docs/MODEL.md "Serving").
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/commands.h"
#include "nmpsim/apps/serve.h"
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
  std::string trace, out = "serve-out", fidelity = "flow", cache;

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

std::vector<Request> requests_of(const po::variables_map& vm, const ServeOptions& o) {
  if (vm.count("trace-requests")) {
    for (const char* k :
         {"rate", "requests", "prompt-tokens", "output-tokens", "prompt-spread", "output-spread", "serve-seed"})
      if (given(vm, k))
        throw UsageError(std::string("--") + k + ": applies to synthetic arrivals, not --trace-requests");
    return read_request_trace(o.trace);
  }
  SyntheticArrivals a;
  if (!(o.rate > 0) || !std::isfinite(o.rate))
    throw UsageError("--rate: must be a positive number of requests per second");
  a.rate_per_s = o.rate;
  a.requests = static_cast<int>(checked_count(o.requests, "requests", 1, 1 << 22));
  a.prompt_tokens = static_cast<int>(checked_count(o.prompt_tokens, "prompt-tokens", 1, 1 << 24));
  a.output_tokens = static_cast<int>(checked_count(o.output_tokens, "output-tokens", 1, 1 << 24));
  for (const auto& [v, k] : {std::pair{o.prompt_spread, "prompt-spread"}, {o.output_spread, "output-spread"}})
    if (!(v >= 0 && v <= 1)) throw UsageError(std::string("--") + k + ": must be in 0..1");
  a.prompt_spread = o.prompt_spread;
  a.output_spread = o.output_spread;
  a.seed = checked_count(o.seed, "serve-seed", 0);
  return synthetic_requests(a);
}

std::string requests_csv(const ServeRun& run) {
  std::ostringstream os;
  os << "request,arrival_s,prompt_tokens,output_tokens,first_token_s,finish_s,ttft_ms,tpot_ms,latency_ms,preemptions\n";
  char buf[256];
  for (size_t i = 0; i < run.requests.size(); ++i) {
    const RequestResult& r = run.requests[i];
    std::snprintf(buf, sizeof buf, "%zu,%.9g,%d,%d,%.9g,%.9g,%.6g,%.6g,%.6g,%d\n", i + 1, r.arrival_s, r.prompt_tokens,
                  r.output_tokens, r.first_token_s, r.finish_s, r.ttft_s() * 1e3, r.tpot_s() * 1e3, r.latency_s() * 1e3,
                  r.preemptions);
    os << buf;
  }
  return os.str();
}

std::string steps_csv(const ServeRun& run) {
  std::ostringstream os;
  os << "step,end_s,decode_tokens,prefill_tokens,context_tokens\n";
  for (size_t i = 0; i < run.steps.size(); ++i)
    os << i << ',' << run.step_end_s[i] << ',' << run.steps[i].decode_tokens << ',' << run.steps[i].prefill_tokens
       << ',' << run.steps[i].context_tokens << '\n';
  return os.str();
}

nlohmann::json summary_json(const ServeSummary& s, const ServeRun& run, const ServeOptions& o, const SchedulerConfig& c,
                            size_t simulated) {
  auto ms = [](double a, double b, double d) {
    return nlohmann::json{{"p50", a * 1e3}, {"p90", b * 1e3}, {"p99", d * 1e3}};
  };
  nlohmann::json lat = ms(s.latency_p50_s, s.latency_p90_s, s.latency_p99_s);
  lat["mean"] = s.latency_mean_s * 1e3;
  return {{"requests", s.requests},
          {"duration_s", s.duration_s},
          {"ttft_ms", ms(s.ttft_p50_s, s.ttft_p90_s, s.ttft_p99_s)},
          {"tpot_ms", ms(s.tpot_p50_s, s.tpot_p90_s, s.tpot_p99_s)},
          {"latency_ms", lat},
          {"throughput_requests_per_s", s.throughput_requests_per_s},
          {"throughput_output_tokens_per_s", s.throughput_tokens_per_s},
          {"goodput_requests_per_s", s.goodput_requests_per_s},
          {"slo_attained", s.slo_attained},
          {"slo_ttft_ms", o.slo_ttft_ms},
          {"slo_tpot_ms", o.slo_tpot_ms},
          {"mean_requests_in_system", s.mean_in_system},
          {"energy_per_output_token_j", s.energy_per_token_j},
          {"steps", run.steps.size()},
          {"simulated_step_shapes", simulated},
          {"preemptions", run.preemptions},
          {"peak_kv_tokens", run.peak_kv_tokens},
          {"scheduler", {{"token_budget", c.token_budget}, {"max_seqs", c.max_seqs}, {"kv_tokens", c.kv_tokens}}}};
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
  const std::vector<Request> requests = requests_of(vm, o);
  base::OutputFiles::check_dir(o.out, "--out");
  mapping::PlacementCache placements(placement_cache_dir(vm, o.cache), [](const std::string&) {});
  ExperimentOptions opt;
  opt.registry = &registry;
  opt.cache = &placements;
  opt.jobs = 1;
  const PreparedExperiment prepared = prepare_experiment(step_spec(spec, StepShape{1, 0, 1}), opt);
  SchedulerConfig c;
  c.max_seqs = static_cast<int>(checked_count(o.max_seqs, "max-seqs", 1, 1 << 16));
  c.token_budget = static_cast<int>(checked_count(o.token_budget, "token-budget", c.max_seqs, 1 << 20));
  c.kv_tokens = vm["kv-tokens"].defaulted() ? kv_capacity_tokens(prepared)
                                            : static_cast<int64_t>(checked_count(o.kv_tokens, "kv-tokens", 1));
  c.max_context = prepared.model.max_context;
  SimulatedSteps steps(spec, opt, !vm.count("no-bucketing"));
  const ServeRun run = simulate_serving(requests, c, [&](const StepShape& s) { return steps(s); });
  const ServeSummary sum = summarize(run, o.slo_ttft_ms * 1e-3, o.slo_tpot_ms * 1e-3);
  base::OutputFiles out;
  out.make_dir(o.out, "--out");
  out.write(o.out + "/requests.csv", requests_csv(run), "--out");
  out.write(o.out + "/steps.csv", steps_csv(run), "--out");
  out.write(o.out + "/summary.json", summary_json(sum, run, o, c, steps.simulated()).dump(2) + "\n", "--out");
  out.commit();
  if (!vm.count("quiet"))
    std::printf(
        "nmpsim serve: %d requests over %.3f s, %zu steps (%zu shapes simulated)\n"
        "  TTFT ms p50 %.2f p90 %.2f p99 %.2f; TPOT ms p50 %.3f p90 %.3f p99 %.3f\n"
        "  throughput %.3f req/s, %.1f output tokens/s; goodput %.3f req/s (%.1f%% within the SLO)\n"
        "  outputs in %s\n",
        sum.requests, sum.duration_s, run.steps.size(), steps.simulated(), sum.ttft_p50_s * 1e3, sum.ttft_p90_s * 1e3,
        sum.ttft_p99_s * 1e3, sum.tpot_p50_s * 1e3, sum.tpot_p90_s * 1e3, sum.tpot_p99_s * 1e3,
        sum.throughput_requests_per_s, sum.throughput_tokens_per_s, sum.goodput_requests_per_s, 100 * sum.slo_attained,
        o.out.c_str());
  return kExitOk;
}

}  // namespace nmpsim::apps
