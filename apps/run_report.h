// Writes the outputs of `nmpsim run`: summary.json, layers.csv, links.csv and PNG plots.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "hw/hardware_spec.h"
#include "mapping/run_result.h"

namespace nmpsim::apps {

/// One strategy's entry of summary.json ("strategies": {"<name>": ...}); times in microseconds.
nlohmann::json strategy_json(const mapping::StrategyResult& r, double tp_tbt_s);
/// One row per strategy: the headline numbers of summary.json.
std::string summary_csv(const std::vector<mapping::StrategyResult>& results);
std::string layers_csv(const std::vector<mapping::StrategyResult>& results);
/// Per directed link: bytes over the run and utilisation = bytes / (bandwidth x simulated time).
std::string links_csv(const std::vector<mapping::StrategyResult>& results, const hw::HardwareSpec& hw);
/// Draws links_<strategy>.png (mesh heatmap) and node_load.png with gnuplot. Returns "" or a warning.
std::string write_plots(const std::string& dir, const std::vector<mapping::StrategyResult>& results,
                        const hw::HardwareSpec& hw);

}  // namespace nmpsim::apps
