// Flow fidelity against cycle fidelity on the quick subset of the validation set
// (bench/flow_vs_cycle.configs, first four configurations x tp, ep, cb = 12 runs; hdmoe is left out
// here because solving its placements takes minutes on a fresh cache): the R^2 of
// MoE communication and of TBT must stay >= 0.9 and 0.99, so a change that breaks the flow model's
// tracking fails CI; and on the first two configurations of issue 33's set (a prefill and a
// micro-batched decode step, tp and ep), each run within the 5% (step) and 15% (MoE
// communication). The full sets and their numbers: bench/flow_vs_cycle.sh, docs/PERFORMANCE.md.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli_test_util.h"

namespace nmpsim::testing {
namespace {

constexpr int kSubsetConfigs = 4;
constexpr int kRegimeConfigs = 2;

struct Config {
  std::string label;
  std::vector<std::string> args;
};

/// The first `count` configurations of a validation set (bench/*.configs).
std::vector<Config> subset(const std::string& file = "flow_vs_cycle.configs", int count = kSubsetConfigs) {
  std::ifstream in(std::string(NMPSIM_SOURCE_DIR) + "/bench/" + file);
  std::vector<Config> out;
  std::string line;
  while (static_cast<int>(out.size()) < count && std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    Config c;
    words >> c.label;
    for (std::string w; words >> w;) c.args.push_back(w);
    out.push_back(c);
  }
  return out;
}

/// column by strategy from summary.csv
std::map<std::string, double> column(const std::string& csv, const std::string& name) {
  std::istringstream in(read_all(csv));
  std::string header, row;
  std::getline(in, header);
  std::vector<std::string> cols;
  for (std::istringstream h(header); std::getline(h, row, ',');) cols.push_back(row);
  std::map<std::string, double> out;
  while (std::getline(in, row)) {
    std::istringstream r(row);
    std::string strategy, cell;
    std::getline(r, strategy, ',');
    for (size_t i = 1; std::getline(r, cell, ','); ++i)
      if (cols[i] == name) out[strategy] = std::stod(cell);
  }
  return out;
}

double r_squared(const std::vector<double>& reference, const std::vector<double>& model) {
  double mean = 0;
  for (double v : reference) mean += v / static_cast<double>(reference.size());
  double res = 0, tot = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    res += (reference[i] - model[i]) * (reference[i] - model[i]);
    tot += (reference[i] - mean) * (reference[i] - mean);
  }
  return 1 - res / tot;
}

/// MoE communication and step time of `configs` x `strategies` at both fidelities: {cycle, flow} each.
struct Pairs {
  std::vector<double> comm_cycle, comm_flow, tbt_cycle, tbt_flow;
  std::vector<std::string> runs;  ///< "label strategy"
};

Pairs run_pairs(const std::vector<Config>& configs, const char* strategies) {
  const std::string dir = std::filesystem::temp_directory_path() / ("nmpsim_flow_accuracy_" + std::to_string(getpid()));
  Pairs p;
  for (const Config& c : configs) {
    std::map<std::string, std::map<std::string, double>> comm, tbt;
    for (const std::string fid : {"cycle", "flow"}) {
      std::vector<std::string> args{"run"};
      args.insert(args.end(), c.args.begin(), c.args.end());
      const std::string out = dir + "/" + fid + "/" + c.label;
      for (const char* a : {"--steps", "1", "--strategy", strategies, "--no-plots", "--quiet", "--fidelity"})
        args.push_back(a);
      args.push_back(fid);
      args.push_back("--out");
      args.push_back(out);
      const CliRun r = run_nmpsim(args);
      EXPECT_EQ(r.code, 0) << c.label << " " << fid << ": " << r.out;
      if (r.code != 0) return p;
      comm[fid] = column(out + "/summary.csv", "moe_comm_us");
      tbt[fid] = column(out + "/summary.csv", "mean_tbt_us");
    }
    for (const auto& [strategy, v] : comm["cycle"]) {
      p.comm_cycle.push_back(v);
      p.comm_flow.push_back(comm["flow"].at(strategy));
      p.tbt_cycle.push_back(tbt["cycle"].at(strategy));
      p.tbt_flow.push_back(tbt["flow"].at(strategy));
      p.runs.push_back(c.label + " " + strategy);
    }
  }
  std::filesystem::remove_all(dir);
  return p;
}

TEST(FlowAccuracy, FlowTracksCycleOnTheQuickSubsetOfTheValidationSet) {
  const Pairs p = run_pairs(subset(), "tp,ep,cb");
  ASSERT_EQ(p.comm_cycle.size(), 3u * kSubsetConfigs);
  EXPECT_GE(r_squared(p.comm_cycle, p.comm_flow), 0.9);
  EXPECT_GE(r_squared(p.tbt_cycle, p.tbt_flow), 0.99);
}

TEST(FlowAccuracy, FlowTracksCycleOnPrefillAndMicroBatchedSteps) {
  // The first configurations of issue 33's validation set (bench/flow_vs_cycle_regimes.configs), tp and
  // ep: the criteria run by run, step time (TTFT for a one-step prefill) within 5% and MoE
  // communication within 15%.
  const Pairs p = run_pairs(subset("flow_vs_cycle_regimes.configs", kRegimeConfigs), "tp,ep");
  ASSERT_EQ(p.runs.size(), 2u * kRegimeConfigs);
  for (size_t i = 0; i < p.runs.size(); ++i) {
    EXPECT_NEAR(p.tbt_flow[i], p.tbt_cycle[i], 0.05 * p.tbt_cycle[i]) << p.runs[i];
    EXPECT_NEAR(p.comm_flow[i], p.comm_cycle[i], 0.15 * p.comm_cycle[i]) << p.runs[i];
  }
}

}  // namespace
}  // namespace nmpsim::testing
