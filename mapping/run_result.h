// Results of running one placement strategy for some decode steps, at either fidelity. Phase times
// are a list of named phases (whatever the schedules contained), so a new phase reaches every report
// without any reporter knowing its name.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/mapping/modes.h"
#include "nmpsim/mapping/schedule.h"

namespace nmpsim::mapping {

struct PhaseInfo {
  std::string name;
  PhaseFamily family = PhaseFamily::kOther;
  int stream = kForeground;
};

struct LayerRecord {
  /// Seconds of each phase on the layer's critical path, by StrategyResult::phases index (phases the
  /// layer does not have: 0 or absent). They add up to the layer's time.
  std::vector<double> phase_s;
  double expert_imbalance_s = 0;  ///< slowest node's time in node-balance phases minus the mean over busy nodes
  /// Seconds during which some communication op (transfer or stream of a phase of family allreduce or
  /// moe_comm) was in progress: the measure of the union of their [issue, delivery].
  double comm_busy_s = 0;
  double total_s() const;
  double phase(size_t i) const { return i < phase_s.size() ? phase_s[i] : 0.0; }
};

struct StrategyResult {
  std::string strategy;
  Fidelity fidelity = Fidelity::kCycle;
  std::vector<PhaseInfo> phases;                ///< every phase seen, in order of first appearance
  std::vector<std::vector<LayerRecord>> steps;  ///< [step][layer]
  std::vector<double> phase_bytes;              ///< per phase: NoC payload bytes, whole run
  std::vector<double> node_flops;               ///< per physical node, whole run
  std::vector<double> node_dram_bytes;          ///< per physical node, whole run (flow fidelity; empty at cycle)
  std::vector<double> node_expert_s;            ///< per node: time in node-balance (expert) phases, whole run
  std::vector<double> node_token_work;          ///< per node: routed tokens x shares, whole run
  std::vector<double> link_bytes;               ///< [node * 4 + dir], whole run
  /// Payload bytes the schedules' transfers and streams put on each link (XY), by the family of
  /// their phase: [family][node * 4 + dir], whole run (empty when the run did not record them).
  std::vector<std::vector<double>> family_link_bytes;
  double wall_s = 0;
  nlohmann::json policies = nlohmann::json::object();  ///< per runtime policy: its own statistics
  /// How the simulator got the results, not a result: cycle fidelity's network sessions and how many
  /// of them were replayed (docs/MODEL.md "Session replay"); empty at flow fidelity.
  nlohmann::json simulator = nlohmann::json::object();
  /// Chrome trace events of the layers RunConfig::timeline chose (mapping/timeline.h; empty: none).
  nlohmann::json timeline = nlohmann::json::array();

  /// Empty result for `nodes` physical nodes.
  StrategyResult(std::string strategy_name, Fidelity f, int nodes);
  StrategyResult() = default;
  /// Index of a phase, added to the table if new.
  int phase_index(const Phase& p);
  int find_phase(const std::string& name) const;  ///< -1 if absent
  double bytes_of(const std::string& phase) const;
  /// A record's seconds in the phase called `name` (0 if the run has no such phase).
  double phase_s(const LayerRecord& r, const std::string& name) const;
  double tbt_s(int step) const;
  double mean_tbt_s() const;
  /// Per layer, averaged over steps (phase_s sized to the phase table).
  std::vector<LayerRecord> mean_layers() const;
  /// Sum of a record's phases of one family.
  double family_s(const LayerRecord& r, PhaseFamily f) const;
  /// Per step (summed over layers, averaged over steps): each phase's seconds; each family's seconds.
  std::vector<double> mean_phase_s() const;
  double mean_family_s(PhaseFamily f) const;
  double mean_expert_imbalance_s() const;
  /// Per step: communication on the critical path (families allreduce and moe_comm), and communication
  /// that ran while the critical path was elsewhere (per layer max(0, comm_busy_s - exposed), summed).
  double mean_exposed_comm_s() const;
  double mean_hidden_comm_s() const;
};

}  // namespace nmpsim::mapping

namespace nmpsim::mapping {

/// The whole result as JSON and back, exactly (doubles round-trip): how a worker process hands its
/// result to the parent (apps/workers.h).
nlohmann::json result_to_json(const StrategyResult& r);
StrategyResult result_from_json(const nlohmann::json& j);

}  // namespace nmpsim::mapping
