// Writes the outputs of `nmpsim run`: summary.json entries, summary.csv, layers.csv, links.csv and PNG
// plots. Phases are whatever the results contain: no phase name is known here.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nmpsim/hw/hardware_spec.h"
#include "nmpsim/mapping/regime.h"
#include "nmpsim/mapping/run_result.h"
#include "nmpsim/mapping/train_step.h"

namespace nmpsim::apps {

/// Each level's link name, finest first ("on-die", "die-to-die", "wafer-to-wafer" in the classic form).
std::vector<std::string> link_names(const mapping::Topology& t);

/// Energy of one strategy's run (cycle fidelity), picojoules.
struct EnergyPj {
  double dram = 0, noc = 0, compute = 0;
  double static_pj = 0;  ///< static and background power x the run's simulated time
  double dram_array = 0, dram_interface = 0, dram_activate = 0;  ///< the parts of `dram`
  double noc_level[mapping::kMaxLevels] = {};  ///< `noc` by link level (on-die, die-to-die, wafer-to-wafer, ...)
  /// The levels' link names (Topology::link_name): the keys "noc_<name>".
  std::vector<std::string> level_links = link_names(mapping::Topology{});
  double total() const { return dram + noc + compute + static_pj; }
};
/// {"dram", "dram_array", "dram_interface", "dram_activate", "noc", "noc_<level>", "compute", "static", "total"}.
nlohmann::json energy_to_json(const EnergyPj& e);
EnergyPj energy_from_json(const nlohmann::json& j);

struct StrategyReport {
  mapping::StrategyResult result;
  std::optional<EnergyPj> energy;
};

/// What the reports need of a run's steps.
struct RunSteps {
  mapping::RunShape shape;
  int steps = 0;
  int layers = 0;                   ///< train: the model's layers (0: not a training run)
  double model_flops_per_step = 0;  ///< train: forward and backward model FLOPs of a step (3x the forward)
  double peak_flops = 0;            ///< train: FLOP/s of all nodes together
  /// Train: the step's parts (zero otherwise), and model FLOPs over peak FLOPs x step time.
  mapping::TrainTimes train_times(const mapping::StrategyResult& r) const;
  double mfu(const mapping::StrategyResult& r) const;
  /// Train: batch x prompt_tokens per mean step (0 otherwise).
  double tokens_per_s(const mapping::StrategyResult& r) const;
  /// Tokens of all steps (energy per token).
  double tokens() const;
  /// Time to the first token of a prompt, or a negative number for decode and train runs: prefill, the mean
  /// step (each step prefills its requests); mixed, the sum of the steps that carry the prompt's chunks.
  double ttft_s(const mapping::StrategyResult& r) const;
  /// Prompt tokens per second of ttft_s: prefill requests x prompt tokens, mixed the prompt's tokens.
  double prefill_tokens_per_s(const mapping::StrategyResult& r) const;
};

/// One strategy's entry of summary.json ("strategies": {"<name>": ...}); times in microseconds per
/// step. `baseline_tbt_s` > 0 adds speedup_vs_tp; runs whose steps carry prompts add ttft_us and
/// prefill_tokens_per_s. `top`: policies whose statistics are also put at the top level, under their names.
nlohmann::json strategy_json(const StrategyReport& s, double baseline_tbt_s, const RunSteps& steps,
                             const std::vector<std::string>& top = {});
/// One row per strategy: TBT and its breakdown by phase family (and, when steps carry prompts,
/// ttft_us and prefill_tokens_per_s as the last columns).
std::string summary_csv(const std::vector<StrategyReport>& reports, const RunSteps& steps);
/// One row per strategy and layer: every phase of the run (union over strategies), in microseconds.
std::string layers_csv(const std::vector<StrategyReport>& reports);
/// Per directed link: bytes over the run and utilisation = bytes / (bandwidth x simulated time).
std::string links_csv(const std::vector<StrategyReport>& reports, const hw::HardwareSpec& hw);
/// Whether node `from` has a mesh link in direction `dir` (0 N, 1 E, 2 S, 3 W).
bool link_exists(const mapping::Topology& t, int from, int dir);
/// One directed link's bytes / (bandwidth x the run's simulated time): all traffic (family -1), or
/// the payload of one phase family's transfers (mapping::PhaseFamily as int).
double link_utilisation(const mapping::StrategyResult& r, const hw::HardwareSpec& hw, int v, int dir, int family = -1);

/// A gnuplot single-quoted string literal: '' stands for a quote, control characters become spaces.
std::string gp_quote(const std::string& s);

/// Draws in `dir` (apps/run_plots.cpp): links_<strategy>.png (link utilisation with die and wafer
/// borders; also _collectives and _dispatch maps), node_load.png (expert time per node and max/mean
/// per layer) and phases.png (TBT by phase), with their data files, plots.gp and plots.log, by
/// running gnuplot by argv (no shell). `context` ("model on hardware, batch B") goes into the titles.
/// Returns "" or a one-line warning (gnuplot missing or failed).
std::string write_plots(const std::string& dir, const std::vector<StrategyReport>& reports, const hw::HardwareSpec& hw,
                        const std::string& context);

}  // namespace nmpsim::apps
