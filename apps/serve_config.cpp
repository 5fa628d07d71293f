// A serving run as data, and one run of it (apps/serve_config.h).
#include "nmpsim/apps/serve_config.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "nmpsim/apps/serve_report.h"
#include "nmpsim/apps/serve_steps.h"
#include "nmpsim/base/input_file.h"
#include "nmpsim/base/json_fields.h"
#include "nmpsim/base/output_files.h"
#include "nmpsim/mapping/moe_model.h"

namespace nmpsim::apps::serve {

std::vector<Request> config_requests(const ServeConfig& c) {
  return c.trace_requests.empty() ? synthetic_requests(c.arrivals) : read_request_trace(c.trace_requests);
}

SchedulerConfig scheduler_config(const ServeConfig& c, const PreparedExperiment& prepared) {
  SchedulerConfig s;
  s.max_seqs = c.max_seqs;
  s.token_budget = c.token_budget;
  if (s.token_budget < s.max_seqs)
    throw base::InputError(c.name("token_budget") + " (" + std::to_string(s.token_budget) + ") must be at least " +
                           (c.where.empty() ? "--max-seqs" : "serve.max_seqs") + " (" + std::to_string(s.max_seqs) +
                           "): every running request may decode in one step");
  s.kv_given = c.kv_tokens > 0;
  s.kv_tokens = s.kv_given ? c.kv_tokens : kv_capacity_tokens(prepared);
  s.max_context = prepared.model.max_context;
  return s;
}

ServePower serve_power(const ServeRun& run, const ServeSummary& s, const hw::CostReport& cost) {
  ServePower p;
  p.area_mm2 = cost.total_mm2();
  p.static_w = cost.total_static_w();
  p.idle_energy_j = p.static_w * std::max(0.0, s.duration_s - run.busy_s);
  if (s.duration_s > 0) p.mean_power_w = (run.energy_j + p.idle_energy_j) / s.duration_s;
  if (p.mean_power_w > 0) p.goodput_requests_per_j = s.goodput_requests_per_s / p.mean_power_w;
  if (p.area_mm2 > 0) p.goodput_requests_per_s_per_mm2 = s.goodput_requests_per_s / p.area_mm2;
  p.logic_area_mm2 = cost.chip_logic_mm2() * cost.nodes;
  if (p.logic_area_mm2 > 0) p.goodput_requests_per_s_per_logic_mm2 = s.goodput_requests_per_s / p.logic_area_mm2;
  return p;
}

nlohmann::json power_json(const ServePower& p, const hw::CostReport& cost) {
  return {{"area_mm2", p.area_mm2},
          {"logic_area_mm2", p.logic_area_mm2},
          {"dram_area_mm2", cost.dram_mm2 * cost.nodes},
          {"static_w", p.static_w},
          {"idle_energy_j", p.idle_energy_j},
          {"mean_power_w", p.mean_power_w},
          {"goodput_requests_per_j", p.goodput_requests_per_j},
          {"goodput_requests_per_s_per_mm2", p.goodput_requests_per_s_per_mm2},
          {"goodput_requests_per_s_per_logic_mm2", p.goodput_requests_per_s_per_logic_mm2}};
}

ServeOutcome serve_requests(const std::vector<Request>& requests, const ServeConfig& c, const SchedulerConfig& sched,
                            SimulatedSteps& steps, const hw::CostReport& cost) {
  ServeOutcome o;
  o.scheduler = sched;
  o.run = simulate_serving(requests, sched, [&](const StepShape& x) { return steps(x); });
  o.summary = summarize(o.run, c.slo_ttft_ms * 1e-3, c.slo_tpot_ms * 1e-3);
  o.cost = cost;
  o.power = serve_power(o.run, o.summary, o.cost);
  o.simulated_shapes = steps.simulated();
  return o;
}

namespace {

/// The step cache file's shapes that `steps` lacks ({} when it cannot be read).
void read_step_cache(SimulatedSteps& steps, const std::string& file) {
  try {  // a cache that cannot be read is no cache
    (void)steps.adopt(base::parse_json_text(base::read_input_file(file, size_t{256} << 20), file));
  } catch (const base::InputError&) {
  }
}

/// Adds this run's shapes to the step cache: under an exclusive lock (FILE.lock), the file is read
/// again and written with the union, so that points running at once lose none of each other's.
void write_step_cache(SimulatedSteps& steps, const std::string& file) {
  const int fd = ::open((file + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return;  // nor does one that cannot be written fail the run
  if (::flock(fd, LOCK_EX) == 0) {
    read_step_cache(steps, file);
    try {
      base::OutputFiles out;
      out.write(file, steps.to_json().dump() + "\n");
      out.commit();
    } catch (const base::InputError&) {
    }
  }
  ::close(fd);  // releases the lock
}

}  // namespace

ServeContext serve_context(const RunSpec& spec, const ServeConfig& c, const ExperimentOptions& opt) {
  ServeContext s;
  const PreparedExperiment prepared = prepare_experiment(step_spec(spec, StepShape{1, 0, 1}), opt);
  s.scheduler = scheduler_config(c, prepared);
  s.steps = std::make_unique<SimulatedSteps>(spec, opt, c.bucketing);
  s.steps->set_identity(
      {{"hardware", hw::to_json(prepared.hardware)}, {"model", mapping::model_to_json(prepared.model)}});
  s.cost = hw::cost_report(prepared.hardware);
  s.title = prepared.model.name + " on " + prepared.hardware.name + ", " + spec.strategies.at(0).name;
  return s;
}

ServeOutcome serve_once(const RunSpec& spec, const ServeConfig& c, const ExperimentOptions& opt,
                        const std::string& step_cache) {
  const std::vector<Request> requests = config_requests(c);
  ServeContext s = serve_context(spec, c, opt);
  if (!step_cache.empty()) read_step_cache(*s.steps, step_cache);
  ServeOutcome o = serve_requests(requests, c, s.scheduler, *s.steps, s.cost);
  if (!step_cache.empty()) write_step_cache(*s.steps, step_cache);
  return o;
}

nlohmann::json outcome_json(const ServeOutcome& o, const ServeConfig& c) {
  nlohmann::json j = summary_json(o.summary, o.run, c.slo_ttft_ms, c.slo_tpot_ms, o.scheduler, o.simulated_shapes);
  j["power"] = power_json(o.power, o.cost);
  return j;
}

}  // namespace nmpsim::apps::serve
