// A timeline of executed layers in the Chrome trace-event format (open in Perfetto, ui.perfetto.dev, or
// chrome://tracing): per node a compute track, network lanes (a node's transfers and weight streams,
// each lane holding slices that do not overlap) and a receive track; per micro-batch a track of its
// phases; flow arrows from every transfer to its delivery. Both fidelities record the same
// OpTiming, so they give the same kind of file. docs/FORMATS.md "Timeline".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/mapping/schedule_tracker.h"

namespace nmpsim::mapping {

/// Which part of a run the timeline covers: step `step` (-1: none), layers first..last.
struct TimelineWindow {
  int step = -1;
  int first_layer = 0, last_layer = 0;
  bool covers(int s, int layer) const { return s == step && layer >= first_layer && layer <= last_layer; }
};

/// Appends the events of executed layer `layer` (schedule `serial` of `tr`) to `events`, times in
/// microseconds from `origin_s` (the step's start). Events carry no pid: timeline_file sets it.
void append_layer_events(nlohmann::json& events, const ScheduleTracker& tr, uint64_t serial, int layer,
                         double origin_s);

/// The file: one process per strategy (named), its events, and the names of the threads they use.
nlohmann::json timeline_file(const std::vector<std::pair<std::string, const nlohmann::json*>>& strategies);

}  // namespace nmpsim::mapping
