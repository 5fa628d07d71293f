#include "nmpsim/hw/cost_model.h"

#include "nmpsim/hw/hardware_spec.h"
#include "nmpsim/noc/noc_config.h"

namespace nmpsim::hw {

const char* static_power_name(StaticPower p) { return p == StaticPower::kScaled ? "scaled" : "fixed"; }

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;

/// Mean per node of the off-die links' PHY area and idle power: a node has, per neighbour across a die
/// boundary, a PHY that sends the link's bandwidth one way and receives it the other (UCIe's bandwidth
/// density counts both), and charges the idle power of its outgoing direction (each direction's
/// full-rate power, pJ/bit per hop, covers both ends).
void add_phys(const HardwareSpec& s, CostReport& r) {
  const mapping::Topology& t = s.topology;
  const noc::MeshGeometry geo{t.width, t.height};
  double gbytes_per_s = 0, watts = 0;
  for (int n = 0; n < t.nodes(); ++n)
    for (int dir = 0; dir < noc::kNumMeshDirs; ++dir) {
      const int m = geo.neighbour(n, dir);
      if (m < 0 || t.level_of_link(n, m) == 0) continue;
      const mapping::LinkParams& p = t.link(n, m);
      gbytes_per_s += 2 * p.gbytes_per_s;  // out and in
      watts += p.gbytes_per_s * 8e9 * p.pj_per_bit * 1e-12 * s.cost.phy_static_fraction;
    }
  r.phy_mm2 = gbytes_per_s * s.cost.phy_mm2_per_gbytes_per_s / t.nodes();
  r.noc_static_w += watts / t.nodes();
}

}  // namespace

CostReport cost_report(const HardwareSpec& s) {
  const CostParams& c = s.cost;
  CostReport r;
  r.nodes = s.topology.nodes();
  r.logic_mm2 = s.compute.peak_flops / 1e12 * c.logic_mm2_per_tflops;
  r.sram_mm2 = c.sram_mib * c.sram_mm2_per_mib;
  const double gib = static_cast<double>(s.memory.capacity_bytes) / kGiB;
  r.dram_mm2 = gib * c.dram_mm2_per_gib;
  // Flit buffers: every VC of every input port (4 mesh ports and the NI's), and the NI's side of its
  // ports likewise.
  const noc::NocConfig nc = s.noc_config();
  const double buffer_bytes = (noc::kNumMeshDirs + 2.0 * nc.ni_ports) * nc.vcs * nc.buffer_flits * nc.flit_bytes;
  r.buffer_mm2 = buffer_bytes / kMiB * c.buffer_mm2_per_mib;
  add_phys(s, r);
  if (c.static_power == StaticPower::kFixed) {
    r.compute_static_w = s.compute.static_w;
    r.dram_background_w = s.memory.background_w;
    r.noc_static_w = 0;  // the fixed model charges nothing else
    return r;
  }
  r.compute_static_w = r.logic_mm2 * c.logic_static_w_per_mm2;
  r.sram_static_w = c.sram_mib * c.sram_static_w_per_mib;
  r.noc_static_w += r.buffer_mm2 * c.logic_static_w_per_mm2;
  r.dram_background_w = gib * c.dram_background_w_per_gib;
  return r;
}

}  // namespace nmpsim::hw
