// Which pre-broadcasts pay (issue 13, not in the paper): a broadcast is admitted only when the time it
// saves on the next layer's hottest node exceeds what it costs the current layer, with both predicted
// by running the layer's schedule on the flow model (mapping::FlowExecutor) with and without it, and
// only when it lands before the layer ends (the next layer is planned then). docs/MODEL.md
// "Dynamic pre-broadcast".
#pragma once

#include <vector>

#include "nmpsim/flow/flow_model.h"
#include "nmpsim/mapping/schedule.h"

namespace nmpsim::methods::hdmoe {

/// One holder's share of an expert, streamed along `chain` (a `stream` op).
struct BroadcastStream {
  int src = 0;
  std::vector<int> chain;
  double bytes = 0, chunk_bytes = 0;
};

/// An expert to pre-broadcast: its streams and the nodes holding all of it once they have landed.
struct BroadcastPlan {
  int expert = -1;
  std::vector<BroadcastStream> streams;
  std::vector<int> holders;
  double saving_s = 0;  ///< predicted cut of the next layer's busiest node time, with the plans before it
};

/// Adds `plan`'s streams to phase `ph` of `s`, after op `start`; returns their ops.
std::vector<mapping::OpId> add_broadcast(mapping::LayerSchedule& s, int ph, mapping::OpId start,
                                         const BroadcastPlan& plan);

/// What the flow model predicts for a layer with some broadcasts added.
struct LayerForecast {
  double foreground_s = 0;  ///< the layer's foreground, from its start
  double landed_s = 0;      ///< the last broadcast's end, from the layer's start (0: none)
};

/// Runs a copy of `s` (as it stands, from its start, on an idle machine) with `plans` streamed in a
/// background phase after phase `after`.
LayerForecast forecast_layer(const mapping::AnalyticalHardware& hw, const mapping::LayerSchedule& s, int after,
                             const std::vector<BroadcastPlan>& plans);

struct AdmissionResult {
  std::vector<BroadcastPlan> admitted;
  int considered = 0;
  double predicted_net_s = 0;  ///< saving minus the layer's slow-down, of what was admitted
};

/// Greedy over `candidates` in priority order (their saving_s are cumulative): keeps a candidate when
/// the admitted set's saving, times `reliability` (the share of predicted savings that came true so
/// far), minus its cost (the layer's foreground slow-down) grows and every broadcast lands before the
/// layer's foreground ends.
AdmissionResult admit_by_flow(const mapping::AnalyticalHardware& hw, const mapping::LayerSchedule& s, int after,
                              const std::vector<BroadcastPlan>& candidates, double reliability = 1.0);

}  // namespace nmpsim::methods::hdmoe
