// Area and static power as functions of the design point (docs/MODEL.md "Area and power"): compute
// logic by its peak TFLOP/s, SRAM and DRAM by their capacity, routers by their flit buffers, off-die
// links by their bandwidth; per-component coefficients in the style of Accelergy's tables, each with
// its source. Plain C++, no SystemC.
#pragma once

namespace nmpsim::hw {

struct HardwareSpec;

/// Where static power comes from.
enum class StaticPower {
  kScaled,  ///< from the coefficients below, so that it follows the design point
  kFixed    ///< compute.static_w and memory.background_w as given (the model before issue 40)
};
/// "scaled", "fixed".
const char* static_power_name(StaticPower p);

/// The coefficients, per node (docs/MODEL.md "Area and power" gives each one's source). The defaults
/// are the NMP chip's; the wafer presets set their own.
struct CostParams {
  StaticPower static_power = StaticPower::kScaled;
  /// Compute logic: area per peak TFLOP/s (the dies it is taken from include their caches and I/O).
  double logic_mm2_per_tflops = 0.82;
  /// Leakage and idle power of logic (compute and router buffers) per mm^2.
  double logic_static_w_per_mm2 = 0.122;
  /// On-chip SRAM per node beyond what logic_mm2_per_tflops includes (not in the timing model).
  double sram_mib = 0;
  double sram_mm2_per_mib = 0.35;
  double sram_static_w_per_mib = 0.001;
  /// DRAM (the hybrid-bonded bank or the HBM stacks): die area and background power per GiB.
  double dram_mm2_per_gib = 33;
  double dram_background_w_per_gib = 0.0375;
  /// Router and network-interface flit buffers (flip-flop or register-file cells), per MiB.
  double buffer_mm2_per_mib = 4.2;
  /// Links that leave a die (every level but the finest): PHY area per GB/s sent or received, and the
  /// share of a link's full-rate power it draws idle.
  double phy_mm2_per_gbytes_per_s = 0.00074;
  double phy_static_fraction = 0.15;
};

/// One node's (and the whole system's) area and static power, by component.
struct CostReport {
  double logic_mm2 = 0, sram_mm2 = 0, buffer_mm2 = 0, phy_mm2 = 0, dram_mm2 = 0;
  double compute_static_w = 0, sram_static_w = 0, noc_static_w = 0, dram_background_w = 0;
  int nodes = 0;
  /// Per node: logic + SRAM + buffers + PHYs, and that plus DRAM.
  double chip_logic_mm2() const { return logic_mm2 + sram_mm2 + buffer_mm2 + phy_mm2; }
  double node_mm2() const { return chip_logic_mm2() + dram_mm2; }
  double node_static_w() const { return compute_static_w + sram_static_w + noc_static_w + dram_background_w; }
  /// The whole system (every node, each with its own end of its off-die links).
  double total_mm2() const { return node_mm2() * nodes; }
  double total_static_w() const { return node_static_w() * nodes; }
};

/// The spec's area and static power (scaled or fixed); the NoC's buffers as the cycle-level NoC sizes
/// them (HardwareSpec::noc_config). A mean over nodes: border nodes have fewer links than inner ones.
CostReport cost_report(const HardwareSpec& s);

}  // namespace nmpsim::hw
