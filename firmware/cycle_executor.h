// Cycle fidelity: executes layer schedules on the SystemC hardware, like a firmware would.
//  - compute ops become commands on their node's PE (foreground queue; a PE runs its commands in
//    order), with weight reads through its DMA and DRAM model;
//  - transfers become NoC messages, injected at the simulated time their dependencies are done and
//    done when the destination has received the last flit;
//  - stream ops become PE weight broadcasts along their chain (background queue for background
//    streams), done when the last node has stored the last chunk.
// Each op is issued the moment its dependencies are done (a firmware process of hw::System, one
// delta cycle later at the same simulated time); execute() runs the simulation until the layer's
// foreground ops are done, then pauses it. docs/MODEL.md "SystemC execution".
#pragma once

#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "nmpsim/hw/analytical.h"
#include "nmpsim/hw/system.h"
#include "nmpsim/mapping/analytical_hardware.h"
#include "nmpsim/mapping/executor.h"
#include "nmpsim/mapping/layer_runner.h"

namespace nmpsim::firmware {

class CycleExecutor : public mapping::Executor {
 public:
  explicit CycleExecutor(hw::System& sys);
  ~CycleExecutor() override;
  CycleExecutor(const CycleExecutor&) = delete;
  CycleExecutor& operator=(const CycleExecutor&) = delete;

  mapping::Fidelity fidelity() const override { return mapping::Fidelity::kCycle; }
  uint64_t execute(std::shared_ptr<mapping::LayerSchedule> s) override;
  void drain() override;
  void cancel(mapping::OpRef r) override;
  double now_s() const override;
  std::vector<double> link_bytes() const override;
  std::vector<double> node_flops() const override;

 private:
  void pump();  // the firmware process: issue every ready op, pause when the awaited work is done
  void issue_ready();
  void issue(mapping::OpRef r);
  void issue_compute(mapping::OpRef r, const mapping::Op& op);
  void issue_stream(mapping::OpRef r, const mapping::Op& op);
  void completed(mapping::OpRef r);
  void on_delivery(const noc::Delivery& d);
  /// sc_start() until `done()`; throws on a NoC stall or when nothing is left to simulate.
  template <class Done>
  void run_until(Done done, const char* what);

  hw::System& sys_;
  double t0_s_;
  std::unordered_map<uint64_t, mapping::OpRef> in_flight_;  // NoC tag -> transfer
  std::unordered_map<uint64_t, uint64_t> stream_tags_;      // stream op -> broadcast tag, while it runs
  std::unordered_set<uint64_t> cancelled_;                  // cancelled stream ops not issued yet
  uint64_t next_tag_ = 1;
  uint64_t awaited_ = 0;  // serial whose foreground ends the current run; 0 while draining
  bool draining_ = false;
  std::vector<uint64_t> weight_cursor_;  // per node: next DRAM address for own-weight reads
  std::vector<double> links0_, flops0_;
};

/// Cycle fidelity in one call: run_placement on a fresh CycleExecutor of `sys` (which may have run
/// other placements before; the result counts this run only).
mapping::StrategyResult run_cycle(hw::System& sys, const mapping::ModelSpec& m, const mapping::RoutingTrace& trace,
                                  const mapping::Placement& p, const mapping::RunConfig& cfg,
                                  mapping::PolicyList* policies = nullptr);

}  // namespace nmpsim::firmware
