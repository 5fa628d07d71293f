// HardwareSpec: the whole machine, from a JSON file (docs/FORMATS.md) or a named preset.
// Plain C++: loading and validating a spec needs no SystemC.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "nmpsim/base/json_fields.h"
#include "nmpsim/dram/dram_spec.h"
#include "nmpsim/hw/cost_model.h"
#include "nmpsim/mapping/modes.h"
#include "nmpsim/mapping/topology.h"
#include "nmpsim/noc/noc_config.h"
#include "nmpsim/pe/pe_spec.h"

namespace nmpsim::hw {

/// Bad hardware description: one line naming the file or preset and the field.
using SpecError = mapping::InputError;

/// Ranges of quantities derived from several fields; every field's own range is in the field table
/// (hw/hardware_fields.cpp).
namespace ranges {
inline constexpr uint32_t kMaxFlitBytes = 65536;  ///< a flit wider than this is not a NoC
inline constexpr int kMaxLinkDelayCycles = 4096;  ///< noc::NocConfig's limit
}  // namespace ranges

/// The network's parameters. Those the standalone NoC shares take noc::NocConfig's defaults, so that
/// each default is written once.
struct NocParams {
  double clock_ghz = noc::NocConfig{}.clock_ghz;
  /// The input-buffered VC router, or the look-ahead router (no VCs: vcs is then taken as 1).
  noc::RouterKind router_kind = noc::NocConfig{}.router_kind;
  int vcs = noc::NocConfig{}.vcs;
  /// Flits per VC buffer; 0 = auto: enough to cover the credit round trip of the slowest-turning link
  /// (bandwidth-delay product), at least 8, so every link can run at its full bandwidth.
  int buffer_flits = 0;
  int router_delay_cycles = noc::NocConfig{}.router_delay_cycles;
  int max_packet_flits = noc::NocConfig{}.max_packet_flits;
  /// Injection (DMA) queues per network interface; 0 = one per VC (noc::NocConfig::ni_queues).
  int ni_queues = noc::NocConfig{}.ni_queues;
  /// Ports between a router and its network interface (noc::NocConfig::ni_ports).
  int ni_ports = noc::NocConfig{}.ni_ports;
  /// Flow fidelity only: share of a mesh link's bandwidth that flows contending for it get, the
  /// wormhole and allocator losses of the cycle-level routers (docs/MODEL.md "Flow-level network").
  double flow_link_efficiency = 0.9;
  /// Flow fidelity only: the rates are re-solved exactly once the flows started or finished since the
  /// last solve reach this share of the flows in flight; 0 = after every change (docs/MODEL.md).
  double flow_resolve_fraction = 0.05;
  /// Both fidelities: repeated network sessions are replayed from a recording instead of being
  /// simulated again, with identical results (docs/MODEL.md "Session replay", "Session replay at flow
  /// fidelity"); false = simulate all.
  bool replay_sessions = noc::NocConfig{}.replay_sessions;
  /// 0: derived so that the fastest link moves one flit per cycle (flit = its bytes per cycle).
  uint32_t flit_bytes = 0;
};

/// What one mesh node is: a PE on a hybrid-bonded DRAM bank, or a compute die with HBM.
enum class NodeKind { kNmpPe, kDie };
/// "nmp-pe", "die".
const char* node_kind_name(NodeKind k);

/// How collectives run (docs/MODEL.md "Reductions and grouped experts").
struct CollectiveParams {
  mapping::ReduceMode reduce = mapping::ReduceMode::kFused;
  mapping::RingAlgorithm algorithm = mapping::RingAlgorithm::kAuto;
  /// A training step's gradient all-reduces and reduce-scatters (docs/MODEL.md "Training step").
  mapping::RingAlgorithm gradients = mapping::RingAlgorithm::kBidirectional;
  /// The attention's (and shared experts') compute in this many pieces, each reduce-scattered as soon
  /// as it is done (docs/MODEL.md "Pipelined collectives"); 1 = the whole output, then the collective.
  int pipeline_chunks = 1;
};

struct HardwareSpec {
  std::string name = "custom";
  std::string description;
  NodeKind node_kind = NodeKind::kNmpPe;
  /// Nodes per attention tensor-parallel group when a run does not set --attn-tp (0: all nodes).
  int attn_tp_default = 0;
  mapping::Topology topology;
  pe::PeSpec compute;
  dram::DramSpec memory;
  NocParams noc;
  CollectiveParams collectives;
  /// Area and static power (hw/cost_model.h).
  CostParams cost;

  /// Throws SpecError naming `where` (file or preset) and the field: every number in its documented
  /// range, and the quantities derived from them (flit width, link delay in cycles) in theirs.
  void validate(const std::string& where) const;
  /// The cycle-level NoC this hardware maps to: flit width, per-link bandwidth fraction and latency.
  noc::NocConfig noc_config() const;
  uint32_t flit_bytes() const;
  /// The fastest link level this topology uses (GB/s; a 1x1 mesh: the on-die level's).
  double max_link_gbytes_per_s() const;
  /// Peak FLOP/s per byte/s of one outgoing on-die (or die-to-die) link, and of local memory.
  double flops_per_link_byte() const;
  double flops_per_memory_byte() const;
  /// Multi-line human description (nmpsim hw --describe).
  std::string describe() const;
  /// Legal but unusual settings, one line each (a coarser level whose links are faster than a finer one's).
  std::vector<std::string> warnings() const;

 private:
  void validate_derived(const std::string& where) const;
};

/// Which link levels occur in this topology (a 1x1 mesh: none).
std::array<bool, mapping::kMaxLevels> link_levels_present(const mapping::Topology& t);

nlohmann::json to_json(const HardwareSpec& s);
/// Parses a spec; `where` names the source in error messages. Unknown keys are errors.
HardwareSpec hardware_from_json(const nlohmann::json& j, const std::string& where);
HardwareSpec load_hardware_file(const std::string& path);

/// Built-in presets (docs/MODEL.md cites every number).
std::vector<std::string> preset_names();
std::string preset_summary(const std::string& name);
HardwareSpec preset(const std::string& name);  ///< throws SpecError for an unknown name
/// A preset name, or else a path to a JSON file.
HardwareSpec load_hardware(const std::string& preset_or_file);

}  // namespace nmpsim::hw
