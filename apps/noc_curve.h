// `nmpsim noc --curve RATES`: latency and accepted throughput against offered load for the chosen
// router beside its model (docs/RTL.md "Latency and throughput curves"). Each point runs in its own
// worker process (SystemC allows one simulation per process), at most one per core.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "nmpsim/apps/router_choice.h"
#include "nmpsim/noc/testbench.h"

namespace nmpsim::apps {

/// One run of the testbench on the chosen routers (the engine, or a pin mesh); with `vcd_path`,
/// the RTL router at `vcd_node` dumps its signals there.
noc::TestbenchResult run_noc_testbench(const noc::TestbenchConfig& cfg, const RouterChoice& rc,
                                       const std::string& vcd_path = "", int vcd_node = -1);

/// Parses "FROM:TO:STEP" or "R1,R2,..." into offered loads in [0, 1] (at most 200); throws
/// UsageError naming --curve.
std::vector<double> parse_curve_rates(const std::string& text);

struct CurveOutputs {
  std::string json_path, plot_path;
  bool quiet = false;
  std::FILE* report = stdout;  ///< where the table goes (stderr when an output is standard output)
};

/// Runs the curve and prints it (unless quiet); writes the JSON and the PNG when asked. Returns the
/// exit code: 1 when a run failed a check or, for a router that implements the model (not one of
/// your own), the two disagree at some load.
int run_noc_curve(const noc::TestbenchConfig& cfg, const RouterChoice& rc, const std::vector<double>& rates,
                  const CurveOutputs& out);

}  // namespace nmpsim::apps
