// A whole machine in SystemC, built from a HardwareSpec: the mesh NoC, one DRAM device and one
// processing element per node (a PE on its hybrid-bonded bank, or a compute die with its HBM).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "nmpsim/dram/dram_target.h"
#include "nmpsim/hw/hardware_spec.h"
#include "nmpsim/hw/network_port.h"
#include "nmpsim/noc/mesh_module.h"
#include "nmpsim/pe/processing_element.h"

namespace nmpsim::hw {

struct EnergyReport {
  double dram_pj = 0;     ///< array + interface + activations, all nodes
  double noc_pj = 0;      ///< flit bits x hops x pJ/bit of each link's level
  double compute_pj = 0;  ///< FLOPs x pJ/FLOP
  double dram_array_pj = 0, dram_interface_pj = 0, dram_activate_pj = 0;  ///< the parts of dram_pj
  double noc_level_pj[mapping::kMaxLevels] = {};                          ///< noc_pj by link level
  double total_pj() const { return dram_pj + noc_pj + compute_pj; }
  uint64_t noc_flit_hops[mapping::kMaxLevels] = {};  ///< by link level (Topology::level_of_link)
};

/// How a testbench wants the system built (docs/LIBRARY.md).
struct SystemOptions {
  /// Nodes built without a PE: a user's module takes its place (bind it to port(node)); the
  /// runtime must not put work there (an op on such a node is an error).
  std::vector<int> without_pe;
  /// Pin-level routers for the mesh (noc::PinMesh: SystemC or Verilated RTL modules, clocked every
  /// cycle); empty: the engine's routers. Every message is delivered in the same cycle either way.
  noc::RouterFactory pin_routers;
};

class System : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(System);
  System(sc_core::sc_module_name name, const HardwareSpec& spec, const SystemOptions& options = {});
  ~System() override;

  const HardwareSpec& spec() const { return spec_; }
  const mapping::Topology& topology() const { return spec_.topology; }
  int nodes() const { return spec_.topology.nodes(); }
  noc::MeshModule& mesh() { return *mesh_; }
  const noc::MeshModule& mesh() const { return *mesh_; }
  /// Whether `node` has a PE (SystemOptions::without_pe).
  bool has_pe(int node) const { return pes_[static_cast<size_t>(node)] != nullptr; }
  /// The node's PE; throws std::logic_error for a node built without one.
  pe::ProcessingElement& pe(int node);
  const pe::ProcessingElement& pe(int node) const;
  dram::DramTarget& dram(int node) { return *drams_[node]; }
  /// The node's TLM-2.0 network edge: bind a user's initiator to port(node).target to read and
  /// write any bank at global_address(node, offset) across the NoC (hw/network_port.h).
  NetworkPort& port(int node) { return *ports_[static_cast<size_t>(node)]; }
  const dram::DramTarget& dram(int node) const { return *drams_[node]; }
  /// Every PE's foreground queue is empty (background broadcasts may still run).
  bool all_idle() const;
  /// By default the simulation pauses (sc_pause) when every foreground queue is idle while background
  /// work still runs, so a caller can treat sc_start() as "run this phase". A firmware that decides
  /// itself when to pause turns this off.
  void set_pause_when_foreground_idle(bool on) { pause_when_idle_ = on; }
  /// Firmware hook: `f` runs in a process of this system, one delta cycle after every wake_firmware()
  /// (at the same simulated time). Lets callbacks from inside the NoC or a PE act in a clean context.
  void set_firmware(std::function<void()> f) { firmware_ = std::move(f); }
  void wake_firmware() { firmware_event_.notify(sc_core::SC_ZERO_TIME); }
  /// Called for every delivered NoC message, after the PEs have seen it.
  void set_delivery_observer(std::function<void(const noc::Delivery&)> f) { delivery_observer_ = std::move(f); }
  /// A second listener to every delivered message (the runtime owns the observer): message logs.
  void set_message_log(std::function<void(const noc::Delivery&)> f) { message_log_ = std::move(f); }
  bool background_idle() const;
  pe::BroadcastRegistry& broadcasts() { return broadcasts_; }

  /// Traces PE busy state and per-link flit counts into a VCD file `path` (written as `path`.partial.vcd).
  /// Call before sc_start; throws SpecError if the file cannot be created.
  void enable_vcd(const std::string& path);
  /// Closes the VCD and renames it to its path (`keep`) or removes it (a failed run). The destructor
  /// removes a VCD that was not finished.
  void finish_vcd(bool keep);
  EnergyReport energy() const;

 private:
  HardwareSpec spec_;
  std::unique_ptr<noc::MeshModule> mesh_;
  std::vector<std::unique_ptr<dram::DramTarget>> drams_;
  PortDirectory directory_;
  std::vector<std::unique_ptr<NetworkPort>> ports_;
  std::vector<std::unique_ptr<pe::ProcessingElement>> pes_;
  sc_core::sc_trace_file* vcd_ = nullptr;
  std::string vcd_path_, vcd_partial_;
  pe::BroadcastRegistry broadcasts_;
  void watch_idle();
  void run_firmware();
  bool pause_when_idle_ = true;
  std::function<void()> firmware_;
  sc_core::sc_event firmware_event_;
  std::function<void(const noc::Delivery&)> delivery_observer_, message_log_;
  std::vector<std::unique_ptr<sc_core::sc_signal<uint32_t>>> link_signals_;  // [node * 4 + dir]
};

}  // namespace nmpsim::hw
