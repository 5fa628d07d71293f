// Results of running one placement strategy for some decode steps, in either fidelity mode,
// and the analytical (flow fidelity) runner.
#pragma once

#include <string>
#include <vector>

#include "mapping/flow_model.h"
#include "mapping/layer_plan.h"

namespace nmpsim::mapping {

struct RunConfig {
  RunShape shape;
  int steps = 4;
  int attn_tp = 0;         ///< nodes per attention TP group, 0 = all nodes
  size_t first_token = 0;  ///< step s uses trace tokens [first + s * batch, first + (s + 1) * batch)
  /// HD-MoE dynamic pre-broadcast (Sec. IV-D): at most this many experts per layer (0 = off).
  int prebroadcast_experts = 0;
  int prebroadcast_targets = 4;      ///< copies go to this many least-loaded nodes (0 = every node)
  std::string predict = "previous";  ///< next layer's loads from: "previous" layer's routing | "trace"
  double prediction_accuracy = 1.0;  ///< "trace": blend of true (a) and profile (1 - a) frequencies
};

struct LayerRecord {
  PhaseTimes t;
  double expert_imbalance_s = 0;  ///< slowest node's expert time minus the mean over nodes with work
};

struct StrategyResult {
  std::string strategy;
  std::string fidelity;                       ///< "cycle" or "flow"
  std::vector<std::vector<LayerRecord>> steps;  ///< [step][layer]
  std::vector<double> node_flops;             ///< per physical node, whole run
  std::vector<double> node_expert_s;          ///< per node: time in expert compute, whole run
  std::vector<double> node_token_work;        ///< per node: routed tokens x shares, whole run
  std::vector<double> link_bytes;             ///< [node * 4 + dir], whole run
  double dispatch_bytes = 0, combine_bytes = 0;
  double wall_s = 0;
  int prebroadcasts = 0;           ///< experts pre-broadcast
  int prebroadcasts_used = 0;      ///< of those, complete in time for least-loaded dispatch
  double prebroadcast_bytes = 0;   ///< bytes read from DRAM by the broadcast sources

  /// Empty result for `nodes` physical nodes.
  StrategyResult(std::string strategy_name, std::string fidelity_name, int nodes);
  StrategyResult() = default;
  double tbt_s(int step) const;
  double mean_tbt_s() const;
  /// Per layer, averaged over steps.
  std::vector<LayerRecord> mean_layers() const;
};

/// Bytes each ring hop carries in one all-gather plus one reduce-scatter, as a [src * n + dst] matrix.
std::vector<double> ring_traffic(const Groups& groups, const std::vector<double>& chunk_bytes, int n);

/// Runs the plans through the flow-level model.
StrategyResult run_flow(const AnalyticalHardware& hw, const ModelSpec& m, const RoutingTrace& trace,
                        const Placement& p, const RunConfig& cfg);

}  // namespace nmpsim::mapping
