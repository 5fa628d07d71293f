// The firmware-like runtime: loads a placement and a trace and, for every decode step and layer,
// issues the layer plan's work to the processing elements as commands (ring all-gather, attention,
// ring reduce-scatter, gate, dispatch, expert compute, combine), with a barrier after each phase.
// All traffic is real NoC messages; all compute and DRAM time comes from the PE and DRAM models.
#pragma once

#include <functional>
#include <string>

#include "hw/system.h"
#include "mapping/run_result.h"

namespace nmpsim::firmware {

class Runtime {
 public:
  Runtime(hw::System& sys, const mapping::ModelSpec& model, const mapping::RoutingTrace& trace,
          const mapping::RunConfig& cfg);
  /// Runs cfg.steps decode steps under placement p (cycle fidelity). May be called again with another
  /// placement on the same system: results are deltas.
  mapping::StrategyResult run(const mapping::Placement& p);
  /// Called after every layer with (step, layer) when set (progress reporting).
  std::function<void(int, int)> on_layer;

 private:
  /// Issues work via `issue`, runs the simulation until every PE is idle, returns the phase's seconds.
  double phase(const char* name, const std::function<void()>& issue);
  void ring(const mapping::LayerPlan& plan, bool reduce, uint64_t tag);
  void exchange(const std::vector<double>& bytes, uint64_t tag, const std::vector<double>* reduce_flops);
  uint64_t next_tag() { return ++tag_ << 16; }
  /// Picks and issues (in the background) the pre-broadcasts for MoE layer `next` of this step.
  void prebroadcast(const std::vector<std::vector<std::vector<double>>>& physical, int moe_layer, int next,
                    size_t first_token, double window_s, mapping::StrategyResult& r);

  struct Pending {
    int expert;
    std::vector<uint64_t> tags;
    std::vector<int> holders;  ///< nodes that will hold the whole expert
  };
  std::vector<std::vector<Pending>> pending_;  ///< per MoE layer of the current step
  std::vector<int> broadcast_ring_;

  hw::System& sys_;
  mapping::ModelSpec model_;
  const mapping::RoutingTrace& trace_;
  mapping::RunConfig cfg_;
  mapping::Groups groups_;
  uint64_t tag_ = 0;
};

/// The analytical view of a hardware spec, for the flow model and the optimisers.
mapping::AnalyticalHardware to_analytical(const hw::HardwareSpec& spec);

}  // namespace nmpsim::firmware
