// A timeline of executed layers in the Chrome trace-event format (open in Perfetto, ui.perfetto.dev, or
// chrome://tracing): per node a compute track, network lanes (a node's transfers and weight streams,
// each lane holding slices that do not overlap) and a receive track; per micro-batch a track of its
// phases; flow arrows from every transfer to its delivery. Both fidelities record the same
// OpTiming, so they give the same kind of file. docs/FORMATS.md "Timeline".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "nmpsim/mapping/schedule_tracker.h"

namespace nmpsim::mapping {

/// Which part of a run the timeline covers: step `step` (-1: none), layers first..last.
struct TimelineWindow {
  int step = -1;
  int first_layer = 0, last_layer = 0;
  bool covers(int s, int layer) const { return s == step && layer >= first_layer && layer <= last_layer; }
};

/// Appends the events of a step's executed schedules (`schedules`: serial in `tr`, layer index in the
/// timeline), times in microseconds from `origin_s` (the step's start), once the step's background work
/// has ended: one set of network lanes and background phase rows for all of them, since a layer's
/// background ops run beside the next layers'. Events carry no pid: timeline_file sets it.
void append_step_events(nlohmann::json& events, const ScheduleTracker& tr,
                        const std::vector<std::pair<uint64_t, int>>& schedules, double origin_s);

/// The file: one process per strategy (named), its events, and the names of the threads they use.
nlohmann::json timeline_file(const std::vector<std::pair<std::string, const nlohmann::json*>>& strategies);

}  // namespace nmpsim::mapping
