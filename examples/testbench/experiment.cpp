// An out-of-tree experiment against an installed nmpsim: a run spec (the JSON format of
// `nmpsim run --spec`, docs/FORMATS.md) run from C++ with every registered method, and its results
// read back: the time between tokens of each strategy and its MoE communication. Exit code 0 when both
// strategies ran, took time, and EP's tokens crossed the mesh.
#include "nmpsim/apps/experiment.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "nmpsim/methods/register_all.h"

int sc_main(int, char*[]) {  // SystemC's entry point: the library links it, and cycle runs need it
  nmpsim::mapping::Registry registry;
  nmpsim::methods::register_all(registry);  // the baselines and every method of the installed build
  const nlohmann::json spec = {{"hardware", "nmp-4x4-5t50g"}, {"model", "mixtral-8x7b"},   {"batch", 16}, {"steps", 1},
                               {"fidelity", "flow"},          {"strategies", {"tp", "ep"}}};
  nmpsim::apps::ExperimentOptions opt;
  opt.registry = &registry;
  const nmpsim::apps::Experiment x =
      nmpsim::apps::run_experiment(nmpsim::apps::run_spec_from_json(spec, "example spec"), opt);
  int bad = x.reports.size() == 2 ? 0 : 1;
  std::printf("nmpsim experiment: %s on %s, batch %d, flow fidelity\n", x.prepared.model.name.c_str(),
              x.prepared.hardware.name.c_str(), x.prepared.cfg.shape.batch);
  for (const auto& report : x.reports) {
    const nmpsim::mapping::StrategyResult& r = report.result;
    std::printf("  %-4s TBT %10.1f us  (moe comm %.1f us)\n", r.strategy.c_str(), r.mean_tbt_s() * 1e6,
                r.mean_family_s(nmpsim::mapping::PhaseFamily::kMoeComm) * 1e6);
    if (!(r.mean_tbt_s() > 0)) ++bad;
    if (r.strategy == "ep" && !(r.mean_family_s(nmpsim::mapping::PhaseFamily::kMoeComm) > 0)) ++bad;
  }
  return bad == 0 ? 0 : 1;
}
