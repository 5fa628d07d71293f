// What a run's results say beyond the simulated times: energy from the flow model's counters, static
// energy, warnings about likely unintended setups, and summary.json (apps/experiment.h).
#include <cstdio>

#include "nmpsim/apps/experiment.h"
#include "nmpsim/apps/run_shape.h"
#include "nmpsim/mapping/topology.h"
#include "nmpsim/mapping/train_step.h"

namespace nmpsim::apps {

EnergyPj flow_energy(const hw::HardwareSpec& hw, const mapping::StrategyResult& r) {
  EnergyPj e;
  const dram::DramSpec& m = hw.memory;
  for (double b : r.node_dram_bytes) {
    e.dram_array += b * 8 * m.array_pj_per_bit;
    e.dram_interface += b * 8 * m.interface_pj_per_bit;
    e.dram_activate += b / m.row_bytes * m.activate_pj;
  }
  e.dram = e.dram_array + e.dram_interface + e.dram_activate;
  const mapping::Topology& t = hw.topology;
  e.level_links = link_names(t);
  for (int v = 0; v < t.nodes(); ++v)
    for (int d = 0; d < 4; ++d) {
      const double bytes = r.link_bytes[static_cast<size_t>(v) * 4 + static_cast<size_t>(d)];
      const int to = mapping::neighbour(t, v, d);
      if (bytes <= 0 || to < 0) continue;
      const double pj = bytes * 8 * t.link(v, to).pj_per_bit;
      e.noc += pj;
      e.noc_level[t.level_of_link(v, to)] += pj;
    }
  for (double f : r.node_flops) e.compute += f * hw.compute.pj_per_flop;
  return e;
}

std::vector<std::string> setup_warnings(const PreparedExperiment& e, const std::vector<StrategyReport>& reports) {
  std::vector<std::string> out;
  for (const std::string& w : e.hardware.warnings()) out.push_back("warning: " + w);
  const double step_tokens = static_cast<double>(max_step_tokens(e.cfg.shape, e.cfg.steps));
  if (step_tokens > static_cast<double>(e.trace.tokens())) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "warning: a step carries %.0f tokens, more than the trace's %zu: its routing repeats (token ids wrap "
                  "around the trace)",
                  step_tokens, e.trace.tokens());
    out.push_back(line);
  }
  const double startup_s = e.hardware.compute.startup_ns * 1e-9;
  using F = mapping::PhaseFamily;
  for (const StrategyReport& r : reports)
    for (F f : {F::kAttention, F::kMoeCompute}) {
      const double per_layer = r.result.mean_family_s(f) / e.model.layers();
      if (per_layer > 0 && startup_s > 0.5 * per_layer) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "warning: %s: the compute start-up (%.3g us) is more than half of its %s time per layer (%.3g "
                      "us): fixed costs dominate (compute.startup_ns, or a larger --batch)",
                      r.result.strategy.c_str(), startup_s * 1e6, mapping::family_name(f), per_layer * 1e6);
        out.push_back(line);
        break;
      }
    }
  return out;
}

double static_energy_pj(const hw::HardwareSpec& hw, const mapping::StrategyResult& r) {
  double seconds = 0;
  for (size_t s = 0; s < r.steps.size(); ++s) seconds += r.tbt_s(static_cast<int>(s));
  return hw::cost_report(hw).total_static_w() * seconds * 1e12;
}

RunSteps run_steps(const PreparedExperiment& e) {
  RunSteps s{e.cfg.shape, e.cfg.steps};
  if (e.cfg.shape.kind != mapping::StepKind::kTrain) return s;
  s.layers = e.model.layers();
  s.model_flops_per_step = 3.0 * mapping::forward_flops(e.model, e.cfg.shape.step(0));
  s.peak_flops = e.hardware.compute.peak_flops * e.hardware.topology.nodes();
  return s;
}

nlohmann::json summary_json(const PreparedExperiment& e, const std::vector<StrategyReport>& reports,
                            const mapping::Registry* registry) {
  std::vector<std::string> top;  // policies whose statistics also go at the top
  if (registry)
    for (const std::string& n : registry->policy_names())
      if (registry->policy(n)->stats_at_top) top.push_back(n);
  double tp_tbt = 0;
  for (const auto& r : reports)
    if (r.result.strategy == "tp") tp_tbt = r.result.mean_tbt_s();
  const RunSteps steps = run_steps(e);
  nlohmann::json strategies = nlohmann::json::object();
  for (const auto& r : reports) strategies[r.result.strategy] = strategy_json(r, tp_tbt, steps, top);
  const int group = e.cfg.attn_tp > 0 ? e.cfg.attn_tp : e.hardware.topology.nodes();
  return {{"spec", run_spec_to_json(e.spec)},
          {"config",
           {{"hardware", e.hardware.name},
            {"model", e.model.name},
            {"trace", e.trace.source()},
            {"phase", mapping::step_kind_name(e.cfg.shape.kind)},
            {"batch", e.cfg.shape.batch},
            {"steps", e.cfg.steps},
            {"context", e.cfg.shape.context},
            {"prompt_tokens", e.cfg.shape.prompt_tokens},
            {"prefill_chunk", e.cfg.shape.prefill_chunk},
            {"recompute", e.cfg.shape.recompute},
            {"micro_batches", e.cfg.micro_batches},
            {"moe_chunks", e.cfg.moe_chunks},
            {"attn_tp", group},
            {"fidelity", mapping::fidelity_name(e.spec.fidelity)},
            {"accounting", e.spec.accounting.name.empty() ? "simulation" : e.spec.accounting.name},
            {"weight_bytes", e.model.weight_bytes},
            {"activation_bytes", e.model.activation_bytes}}},
          {"strategies", strategies}};
}

}  // namespace nmpsim::apps
