// A back end that executes layer schedules: the analytical flow model (flow/flow_executor.h) or
// the SystemC hardware (firmware/cycle_executor.h). One executor runs one placement's decode steps;
// mapping/layer_runner.h drives it layer by layer and turns what it reports into results.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "nmpsim/mapping/modes.h"
#include "nmpsim/mapping/schedule.h"
#include "nmpsim/mapping/schedule_tracker.h"

namespace nmpsim::mapping {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual Fidelity fidelity() const = 0;
  /// Starts `s` now and runs until its foreground ops are done (background ops may go on into later
  /// layers). Returns the schedule's serial number; its op timings are in tracker().timings(serial).
  virtual uint64_t execute(std::shared_ptr<LayerSchedule> s) = 0;
  /// Runs until every background op is done (at the end of a decode step; this time is in no TBT).
  virtual void drain() = 0;
  /// Stops stream op `r` from sending further chunks; the chunks on the way still land and the op is
  /// done once they are acknowledged (its data is then incomplete). Does nothing to other ops.
  virtual void cancel(OpRef r) = 0;
  /// Simulated seconds since the executor was made.
  virtual double now_s() const = 0;
  /// Bytes moved over each directed link [node * 4 + dir] (N, E, S, W) since the executor was made.
  virtual std::vector<double> link_bytes() const = 0;
  /// FLOPs each node has executed since the executor was made.
  virtual std::vector<double> node_flops() const = 0;
  /// Bytes each node's DRAM has read and written since the executor was made (empty when the back
  /// end reports its energy itself: the cycle level).
  virtual std::vector<double> node_dram_bytes() const { return {}; }

  ScheduleTracker& tracker() { return tracker_; }
  const ScheduleTracker& tracker() const { return tracker_; }

 protected:
  ScheduleTracker tracker_;
};

/// Makes a fresh executor (e.g. a cycle-level one on the run's SystemC system, which a tool that
/// needs cycle fidelity gets from the command that runs it without linking SystemC itself).
using ExecutorFactory = std::function<std::unique_ptr<Executor>()>;

}  // namespace nmpsim::mapping
