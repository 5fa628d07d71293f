// Writes the outputs of `nmpsim run`: summary.json entries, summary.csv, layers.csv, links.csv and PNG
// plots. Phases are whatever the results contain: no phase name is known here.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hw/hardware_spec.h"
#include "mapping/run_result.h"

namespace nmpsim::apps {

/// Energy of one strategy's run (cycle fidelity), picojoules.
struct EnergyPj {
  double dram = 0, noc = 0, compute = 0;
  double static_pj = 0;  ///< static and background power x the run's simulated time
  double total() const { return dram + noc + compute + static_pj; }
};

struct StrategyReport {
  mapping::StrategyResult result;
  std::optional<EnergyPj> energy;
};

/// One strategy's entry of summary.json ("strategies": {"<name>": ...}); times in microseconds per
/// decode step. `baseline_tbt_s` > 0 adds speedup_vs_tp. `tokens` = batch x steps (energy per token).
nlohmann::json strategy_json(const StrategyReport& s, double baseline_tbt_s, double tokens);
/// One row per strategy: TBT and its breakdown by phase family.
/// `tokens`: tokens the run decoded (batch x steps), for the energy per token column.
std::string summary_csv(const std::vector<StrategyReport>& reports, double tokens);
/// One row per strategy and layer: every phase of the run (union over strategies), in microseconds.
std::string layers_csv(const std::vector<StrategyReport>& reports);
/// Per directed link: bytes over the run and utilisation = bytes / (bandwidth x simulated time).
std::string links_csv(const std::vector<StrategyReport>& reports, const hw::HardwareSpec& hw);
/// Draws links_<strategy>.png (mesh heatmap), node_load.png and phases.png (TBT by phase) in `dir` with
/// A gnuplot single-quoted string literal: '' stands for a quote, control characters become spaces.
std::string gp_quote(const std::string& s);

/// gnuplot, run by argv (no shell), with their data files, plots.gp and plots.log (gnuplot's messages).
/// Returns "" or a one-line warning (gnuplot missing or failed).
std::string write_plots(const std::string& dir, const std::vector<StrategyReport>& reports, const hw::HardwareSpec& hw);

}  // namespace nmpsim::apps
