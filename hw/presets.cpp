// Built-in hardware presets. Sources for every number: docs/MODEL.md "Hardware presets".
#include <cstdio>
#include <map>

#include "nmpsim/hw/hardware_spec.h"

namespace nmpsim::hw {

namespace {

struct NmpPoint {
  const char* tag;
  double tflops;
  double link_gbytes_per_s;
};
const NmpPoint kNmpPoints[] = {{"2.5t75g", 2.5, 75.0}, {"5t50g", 5.0, 50.0}, {"10t25g", 10.0, 25.0}};
const std::pair<int, int> kNmpMeshes[] = {{4, 4}, {4, 8}, {8, 8}};

/// The 3D-NMP chip of HD-MoE (Huang et al.): one PE per hybrid-bonded DRAM bank, one die, 2D mesh NoC.
HardwareSpec nmp(int w, int h, const NmpPoint& p) {
  HardwareSpec s;
  s.name = "nmp-" + std::to_string(w) + "x" + std::to_string(h) + "-" + p.tag;
  char desc[160];
  std::snprintf(desc, sizeof desc,
                "HD-MoE 3D-NMP chip, %dx%d PEs at %g TFLOP/s, %g GB/s NoC links, 625 GB/s hybrid-bonded DRAM per PE", w,
                h, p.tflops, p.link_gbytes_per_s);
  s.description = desc;
  s.node_kind = NodeKind::kNmpPe;
  s.topology.width = s.topology.die().width = s.topology.wafer().width = w;
  s.topology.height = s.topology.die().height = s.topology.wafer().height = h;
  s.topology.links[0] = mapping::LinkParams{p.link_gbytes_per_s, 1.0, 0.25};
  s.compute.peak_flops = p.tflops * 1e12;
  s.compute.startup_ns = 50;
  s.compute.pj_per_flop = 0.5;
  s.memory = dram::DramSpec{};  // hb-dram defaults: 625 GB/s, 8 GiB, 32 banks of 2 KiB rows, 0.88 pJ/bit bond
  s.noc.clock_ghz = 1.0;
  return s;
}

/// The wafer-scale chip of Luo et al.'s wafer inference paper: B200-class compute dies with HBM, one die per mesh node.
HardwareSpec wafer(int w, int h, int wafers_x, int wafers_y, bool border_per_link = false) {
  HardwareSpec s;
  s.node_kind = NodeKind::kDie;
  s.topology.width = w * wafers_x;
  s.topology.height = h * wafers_y;
  s.topology.die().width = s.topology.die().height = 1;
  s.topology.wafer().width = w;
  s.topology.wafer().height = h;
  // 8 TB/s bidirectional per die-to-die link = 4 TB/s each way; 9 TB/s bidirectional per wafer border,
  // shared by the border's links.
  s.topology.links[0] = mapping::LinkParams{4000.0, 20.0, 0.1};
  s.topology.links[1] = mapping::LinkParams{4000.0, 20.0, 0.1};
  // The other reading: 9 TB/s bidirectional on every border link.
  const int border_links = border_per_link ? 1 : std::min(w, h);
  s.topology.links[2] = mapping::LinkParams{9000.0 / 2 / border_links, 100.0, 0.1};
  s.compute.peak_flops = 2250e12;
  s.compute.startup_ns = 2000;  // kernel launch scale on a GPU-class die
  s.compute.pj_per_flop = 0.4;
  s.attn_tp_default = 4;  // attention TP over 4 neighbouring dies (docs/MODEL.md "Attention TP default")
  // Area and static power (docs/MODEL.md "Area and power"): B200's two dies, about 1600 mm^2 for 2250
  // dense FP16 TFLOP/s; leakage set so that the die idles at 100 W, about 10% of its 1000 W TDP.
  s.cost.logic_mm2_per_tflops = 0.72;
  s.cost.logic_static_w_per_mm2 = 100.0 / (2250 * 0.72);
  s.compute.dma_chunk_bytes = 16 << 20;
  s.compute.copy_chunk_bytes = 16 << 20;
  auto& m = s.memory;
  m.kind = dram::DramKind::kHbm;
  m.capacity_bytes = 180'000'000'000ULL;
  m.peak_gbytes_per_s = 8000.0;
  m.banks = 4096;
  m.row_bytes = 1024;
  m.array_pj_per_bit = 1.0;
  m.interface_pj_per_bit = 2.9;
  m.activate_pj = 500.0;
  // 8 HBM stacks at about 1.5 W of background and refresh each (docs/MODEL.md): 12 W per 180 GB.
  s.cost.dram_background_w_per_gib = 12.0 / (180e9 / (1024.0 * 1024 * 1024));
  m.queue_depth = 32;
  s.noc.clock_ghz = 1.0;
  s.noc.ni_ports = 4;  // a die injects on all four of its edges at once (docs/MODEL.md "Preset numbers")
  return s;
}

/// The per-direction link bandwidths of the 32-GPU cluster's levels, GB/s (docs/MODEL.md "A cluster
/// on the mesh"): NVLink bridge inside a pair, PCIe 4.0 x16 between pairs of a socket, the cross-socket
/// path (the paper's measured inter-QPI / inter-PCIe ratio), InfiniBand HDR per node over its border links.
constexpr double kNvlinkGBps = 112.5 / 2, kPcieGBps = 31.5, kQpiGBps = kPcieGBps * 2.06e-8 / 1.17e-7,
                 kIbGBps = 200.0 / 8 / 6;

/// Sets a general hierarchy: level sizes (the last is the mesh) and each level's links.
void set_levels(HardwareSpec& s, const std::vector<mapping::Level>& levels,
                const std::vector<mapping::LinkParams>& links) {
  s.topology.classic = false;
  s.topology.levels = levels;
  for (size_t l = 0; l < links.size(); ++l) s.topology.links[l] = links[l];
}

/// HierMoE's testbed (Table III, Fig. 1(b)): 4 nodes of 8 RTX A6000 GPUs; NVLink pairs, PCIe inside a
/// socket, QPI between the two sockets, InfiniBand between nodes. On an 8x4 mesh: pair 2x1, socket 2x2,
/// node 4x2, the 4 nodes 2x2.
HardwareSpec gpu_cluster() {
  HardwareSpec s;
  s.node_kind = NodeKind::kDie;
  s.topology.width = 8;
  s.topology.height = 4;
  set_levels(s, {{"gpu", 1, 1}, {"pair", 2, 1}, {"socket", 2, 2}, {"node", 4, 2}, {"cluster", 8, 4}},
             {{kNvlinkGBps, 500, 1.0},
              {kNvlinkGBps, 500, 1.0},
              {kPcieGBps, 500, 1.0},
              {kQpiGBps, 500, 1.0},
              {kIbGBps, 500, 1.0}});
  s.compute.peak_flops = 154.8e12;            // dense FP16 tensor, RTX A6000 datasheet
  s.compute.startup_ns = 5000;                // kernel launch scale on a PCIe GPU
  s.compute.pj_per_flop = 1.9;                // 300 W board power / 154.8 TFLOP/s
  s.cost.static_power = StaticPower::kFixed;  // a GPU's idle power as measured, not scaled
  s.compute.static_w = 30;
  s.compute.dma_chunk_bytes = 4 << 20;
  s.compute.copy_chunk_bytes = 4 << 20;
  auto& m = s.memory;
  m.kind = dram::DramKind::kHbm;  // GDDR6 on the HBM controller model (docs/MODEL.md)
  m.capacity_bytes = 48ULL << 30;
  m.peak_gbytes_per_s = 768.0;
  m.banks = 384;
  m.row_bytes = 2048;
  m.array_pj_per_bit = 1.0;
  m.interface_pj_per_bit = 6.5;
  m.activate_pj = 500.0;
  m.background_w = 10.0;
  m.queue_depth = 32;
  s.noc.clock_ghz = 1.0;
  s.noc.ni_ports = 4;
  s.attn_tp_default = 1;
  return s;
}

/// Four 8x8 wafers whose levels have the cluster's bandwidth ratios: a wafer is a cluster node, its two
/// 8x4 halves its sockets, its 4x4 quarters its NVLink pairs; 4000 GB/s die-to-die is NVLink.
HardwareSpec wafer_levels() {
  HardwareSpec s = wafer(8, 8, 2, 2);
  const double d2d = s.topology.links[1].gbytes_per_s, lat = s.topology.links[1].latency_ns;
  set_levels(s, {{"die", 1, 1}, {"quarter", 4, 4}, {"half", 8, 4}, {"wafer", 8, 8}, {"system", 16, 16}},
             {{d2d, lat, 0.1},
              {d2d, lat, 0.1},
              {d2d * kPcieGBps / kNvlinkGBps, lat, 0.1},
              {d2d * kQpiGBps / kNvlinkGBps, lat, 0.1},
              {d2d * kIbGBps / kNvlinkGBps, s.topology.links[2].latency_ns, 0.1}});
  return s;
}

/// HybridEP's testbed (Sec. V-A): A800 GPUs joined by PCIe 3.0 x16 inside a data centre, 10 Gb/s Ethernet
/// between data centres (docs/MODEL.md "Data centres on the mesh"). FP32 (the paper's models, Table III).
constexpr double kPcie3GBps = 8.0 * 16 * 128 / 130 / 8, kEthernetGBps = 10.0 / 8;

/// One A800 80GB PCIe per mesh node.
HardwareSpec a800_node() {
  HardwareSpec s;
  s.node_kind = NodeKind::kDie;
  s.compute.peak_flops = 19.5e12;             // FP32 (non-tensor), A800 / A100 80GB PCIe datasheet
  s.compute.startup_ns = 5000;                // kernel launch scale on a PCIe GPU (as gpu-cluster-32)
  s.compute.pj_per_flop = 15.4;               // 300 W board power / 19.5 TFLOP/s
  s.cost.static_power = StaticPower::kFixed;  // a GPU's idle power as measured, not scaled
  s.compute.static_w = 30;
  s.compute.dma_chunk_bytes = 4 << 20;
  s.compute.copy_chunk_bytes = 4 << 20;
  auto& m = s.memory;
  m.kind = dram::DramKind::kHbm;
  m.capacity_bytes = 80ULL << 30;
  m.peak_gbytes_per_s = 1935.0;  // HBM2e, datasheet
  m.banks = 1280;                // 5 stacks x 16 pseudo-channels x 16 banks
  m.row_bytes = 1024;
  m.array_pj_per_bit = 1.0;
  m.interface_pj_per_bit = 2.9;
  m.activate_pj = 500.0;
  m.background_w = 7.5;  // 5 stacks at about 1.5 W each (as the wafer presets' HBM)
  m.queue_depth = 32;
  s.noc.clock_ghz = 1.0;
  s.noc.ni_ports = 4;
  s.attn_tp_default = 1;  // data-parallel attention (PyTorch DDP in the paper's testbed)
  // The gradient collectives' algorithm per call, as NCCL picks it (docs/MODEL.md "Data centres on the mesh").
  s.collectives.gradients = mapping::RingAlgorithm::kAuto;
  return s;
}

/// Cluster-L of HybridEP's Table V: 4 data centres of 8 GPUs on an 8x4 mesh, each data centre 4x2, the
/// four 2x2; a data centre's 10 Gb/s is shared by its 6 border links.
HardwareSpec dc_cluster() {
  HardwareSpec s = a800_node();
  s.topology.width = 8;
  s.topology.height = 4;
  set_levels(s, {{"gpu", 1, 1}, {"dc", 4, 2}, {"wan", 8, 4}},
             {{kPcie3GBps, 500, 1.0}, {kPcie3GBps, 500, 1.0}, {kEthernetGBps / 6, 500, 1.0}});
  return s;
}

/// HybridEP's Fig. 17 (reconstruction): 1000 one-GPU data centres on a 40x25 mesh, each data centre's
/// 10 Gb/s shared by its 4 links.
HardwareSpec dc_thousand() {
  HardwareSpec s = a800_node();
  s.topology.width = 40;
  s.topology.height = 25;
  set_levels(s, {{"dc", 1, 1}, {"wan", 40, 25}}, {{kEthernetGBps / 4, 500, 1.0}, {kEthernetGBps / 4, 500, 1.0}});
  s.noc.flit_bytes = 16;  // not the 1-byte flit of the slow links at 1 GHz (flow fidelity does not use it)
  return s;
}

std::map<std::string, HardwareSpec> build_presets() {
  std::map<std::string, HardwareSpec> all;
  for (const auto& [w, h] : kNmpMeshes)
    for (const auto& p : kNmpPoints) {
      HardwareSpec s = nmp(w, h, p);
      all[s.name] = s;
    }
  for (int k : {4, 6, 8}) {
    HardwareSpec s = wafer(k, k, 1, 1);
    s.name = "wsc-" + std::to_string(k) + "x" + std::to_string(k);
    s.description = "wafer-scale chip (Luo et al.): " + std::to_string(k) + "x" + std::to_string(k) +
                    " B200-class dies (2250 TFLOP/s FP16, 180 GB HBM at 8 TB/s), 8 TB/s die-to-die links";
    all[s.name] = s;
  }
  HardwareSpec s = wafer(8, 8, 2, 2);
  s.name = "wsc-4wafer-8x8";
  s.description = "four 8x8 wafers (Luo et al.) joined edge to edge (2x2), 9 TB/s per wafer border";
  all[s.name] = s;
  s = wafer(8, 8, 2, 2, /*border_per_link=*/true);
  s.name = "wsc-4wafer-8x8-wide-border";
  s.description = "four 8x8 wafers (Luo et al.) (2x2), 9 TB/s on every border link (the other reading)";
  all[s.name] = s;
  s = gpu_cluster();
  s.name = "gpu-cluster-32";
  s.description =
      "HierMoE's testbed: 4 nodes x 8 RTX A6000 (NVLink pairs, PCIe, QPI, 200 Gb/s InfiniBand) "
      "on an 8x4 mesh";
  all[s.name] = s;
  s = dc_cluster();
  s.name = "xdc-4x8-a800";
  s.description =
      "HybridEP's Cluster-L: 4 data centres x 8 A800 (PCIe 3.0 x16 inside, 10 Gb/s Ethernet between) on an 8x4 mesh";
  all[s.name] = s;
  s = dc_thousand();
  s.name = "xdc-1000";
  s.description = "HybridEP's Fig. 17 (reconstruction): 1000 one-A800 data centres, 10 Gb/s each, on a 40x25 mesh";
  all[s.name] = s;
  s = wafer_levels();
  s.name = "wsc-4wafer-8x8-levels";
  s.description = "four 8x8 wafers (Luo et al.) in five levels with the 32-GPU cluster's bandwidth ratios";
  all[s.name] = s;
  return all;
}

const std::map<std::string, HardwareSpec>& presets() {
  static const std::map<std::string, HardwareSpec> all = build_presets();
  return all;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, spec] : presets()) names.push_back(name);
  return names;
}

std::string preset_summary(const std::string& name) { return presets().at(name).description; }

HardwareSpec preset(const std::string& name) {
  auto it = presets().find(name);
  if (it == presets().end())
    throw SpecError("unknown hardware preset '" + name + "' (nmpsim hw --list-presets lists them)");
  it->second.validate("preset " + name);
  return it->second;
}

}  // namespace nmpsim::hw
