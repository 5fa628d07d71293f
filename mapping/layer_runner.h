// Runs a placement's steps (decode, prefill or mixed) on any back end: for every step and layer,
// plan the layer, build its schedule, let the runtime policies act, execute, and record where the
// time went. Both fidelities go through this one loop; only the Executor differs.
#pragma once

#include <functional>

#include "nmpsim/mapping/placement.h"
#include "nmpsim/mapping/runtime_policy.h"

namespace nmpsim::mapping {

struct RunInputs {
  const ModelSpec& model;
  const RoutingTrace& trace;
  const AnalyticalHardware& hw;
  RunConfig cfg;
  /// The placement's dispatch planner (Registry::make_planner); null: direct dispatch.
  const DispatchPlanner* planner = nullptr;
};

/// Runs cfg.steps steps of `p` on `ex` (a fresh executor per placement). `on_layer(step, layer)`
/// is called after every layer (progress reporting).
StrategyResult run_placement(Executor& ex, const RunInputs& in, const Placement& p, PolicyList& policies,
                             const std::function<void(int, int)>& on_layer = {});

/// The time of a finished layer along its critical path, attributed to phases (docs/MODEL.md
/// "Layer schedules"): from the foreground op that ends last, follow the dependency that ended last
/// back to the layer's start; every op adds end - ready to its phase. Also the node-balance phases'
/// per-node busy time (added to `node_s`) and their imbalance. With a topology, also the payload each
/// phase family put on every link (r.family_link_bytes). Ops cancelled before they started count nothing.
LayerRecord record_layer(StrategyResult& r, const ScheduleTracker& tr, uint64_t serial, std::vector<double>& node_s,
                         const Topology* topology = nullptr);

}  // namespace nmpsim::mapping
