// Every point of a sweep is checked as `nmpsim run` would check it (hardware, model, trace, memory,
// groups, policies, strategies and their options) before the first point runs, so that a typo or an
// impossible combination is one input error naming the point and its values, not a failed point.
#include <set>

#include "nmpsim/apps/experiment.h"
#include "nmpsim/apps/run_spec.h"
#include "nmpsim/apps/serve_spec.h"
#include "nmpsim/apps/sweep.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/registry.h"

namespace nmpsim::apps {

namespace {

using mapping::InputError;

/// An axis lists each value once: a repeated value would run (and be reported) twice.
void check_axis_values(const SweepSpec& s) {
  for (const SweepAxis& a : s.axes) {
    std::set<std::string> seen;
    for (const nlohmann::json& v : a.values)
      if (!seen.insert(v.dump()).second)
        throw InputError("sweep: axis '" + a.path + "' lists the value " + v.dump() + " twice");
  }
}

/// A serving point names its strategies (each serves on its own) and its request trace reads.
void check_serving(const SweepPoint& p, const RunSpec& spec, std::set<std::string>& traces) {
  if (spec.all_strategies) throw InputError("a serving sweep names its strategies (--strategy NAME,...)");
  const serve::ServeConfig c = serve::serve_config_from_json(point_serve(p), "serve");
  if (!c.trace_requests.empty() && traces.insert(c.trace_requests).second)
    (void)serve::read_request_trace(c.trace_requests);
}

}  // namespace

void resolve_values(const SweepSpec& s, const std::vector<SweepPoint>& points, const mapping::Registry& registry,
                    int concurrent_runs, const SweepPoint* only) {
  check_axis_values(s);
  ExperimentOptions opt;
  opt.registry = &registry;
  opt.jobs = 1;  // each point runs in one worker process
  opt.concurrent_runs = concurrent_runs;
  InputMemo memo;
  std::set<std::string> checked, checked_runs, strategies, traces;
  bool all_strategies = false;
  for (const SweepPoint& p : points) {
    const RunSpec spec = point_run_spec(p);
    all_strategies = all_strategies || spec.all_strategies;
    for (const StrategySpec& st : spec.strategies) strategies.insert(st.name.empty() ? "" : st.name);
    if ((only && only != &p) || !checked.insert(p.spec.dump()).second) continue;
    try {
      if (p.spec.contains("serve")) check_serving(p, spec, traces);
      if (!checked_runs.insert(run_spec_to_json(spec).dump()).second) continue;  // a design's other rates
      check_experiment(spec, opt, memo);
    } catch (const InputError& e) {
      throw InputError("sweep point " + p.id + " (" + p.values.dump() + "): " + e.what());
    }
  }
  // The baseline is a strategy some point runs (placement files are named by their contents).
  if (!s.serving() && !all_strategies && !strategies.count("") && !strategies.count(s.baseline))
    throw InputError("sweep: baseline '" + s.baseline + "' is not a strategy of any point (--baseline)");
}

}  // namespace nmpsim::apps
