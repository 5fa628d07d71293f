// Every point of a sweep is checked as `nmpsim run` would check it (hardware, model, trace, memory,
// groups, policies, strategies and their options) before the first point runs, so that a typo or an
// impossible combination is one input error naming the point and its values, not a failed point.
#include <set>

#include "nmpsim/apps/experiment.h"
#include "nmpsim/apps/run_spec.h"
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

}  // namespace

void resolve_values(const SweepSpec& s, const std::vector<SweepPoint>& points, const mapping::Registry& registry,
                    int concurrent_runs, const SweepPoint* only) {
  check_axis_values(s);
  ExperimentOptions opt;
  opt.registry = &registry;
  opt.jobs = 1;  // each point runs in one worker process
  opt.concurrent_runs = concurrent_runs;
  InputMemo memo;
  std::set<std::string> checked, strategies;
  bool all_strategies = false;
  for (const SweepPoint& p : points) {
    const RunSpec spec = run_spec_from_json(p.spec, "sweep point " + p.id);
    all_strategies = all_strategies || spec.all_strategies;
    for (const StrategySpec& st : spec.strategies) strategies.insert(st.name.empty() ? "" : st.name);
    if ((only && only != &p) || !checked.insert(p.spec.dump()).second) continue;
    try {
      check_experiment(spec, opt, memo);
    } catch (const InputError& e) {
      throw InputError("sweep point " + p.id + " (" + p.values.dump() + "): " + e.what());
    }
  }
  // The baseline is a strategy some point runs (placement files are named by their contents).
  if (!all_strategies && !strategies.count("") && !strategies.count(s.baseline))
    throw InputError("sweep: baseline '" + s.baseline + "' is not a strategy of any point (--baseline)");
}

}  // namespace nmpsim::apps
