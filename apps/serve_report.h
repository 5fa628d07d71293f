// The outputs of `nmpsim serve` (docs/FORMATS.md "nmpsim serve"): per-request and per-step CSVs, the
// summary JSON, the table of offered rates, and the plots (gnuplot PNGs).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/apps/serve.h"

namespace nmpsim::apps::serve {

std::string requests_csv(const ServeRun& run);
std::string steps_csv(const ServeRun& run);
nlohmann::json summary_json(const ServeSummary& s, const ServeRun& run, double slo_ttft_ms, double slo_tpot_ms,
                            const SchedulerConfig& c, size_t simulated);

/// One offered rate of `--rates` and what it gave.
struct RatePoint {
  double rate_per_s = 0;
  ServeSummary summary;
  ServePower power;
};
std::string rates_csv(const std::vector<RatePoint>& points);
nlohmann::json rates_json(const std::vector<RatePoint>& points);

/// Draws, in `dir`, latency_cdf.png (the TTFT and TPOT distributions of `run`, when given) and, with
/// two rates or more, goodput.png (throughput and goodput against the offered rate). Returns empty,
/// or a one-line note when gnuplot is missing or failed.
std::string write_serve_plots(const std::string& dir, const ServeRun* run, const std::vector<RatePoint>& rates,
                              const std::string& title);

}  // namespace nmpsim::apps::serve
