#include "nmpsim/hw/hardware_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "nmpsim/base/input_file.h"
#include "nmpsim/hw/hardware_fields.h"

namespace nmpsim::hw {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

const char* node_kind_name(NodeKind k) { return k == NodeKind::kDie ? "die" : "nmp-pe"; }

std::array<bool, mapping::kMaxLevels> link_levels_present(const mapping::Topology& t) {
  std::array<bool, mapping::kMaxLevels> used{};
  for (int n = 0; n < t.nodes(); ++n) {
    if (t.x(n) + 1 < t.width) used[static_cast<size_t>(t.level_of_link(n, n + 1))] = true;
    if (t.y(n) + 1 < t.height) used[static_cast<size_t>(t.level_of_link(n, n + t.width))] = true;
  }
  return used;
}

void HardwareSpec::validate(const std::string& where) const {
  auto fail = [&](const std::string& msg) { throw SpecError(where + ": " + msg); };
  // Every field in its range first (the table's ranges), then the rules that join several fields.
  if (const std::string why = first_field_violation(*this); !why.empty()) fail(why);
  try {
    topology.validate(where);
  } catch (const std::invalid_argument& e) {
    throw SpecError(e.what());
  }
  if (attn_tp_default > 0 && topology.nodes() % attn_tp_default != 0)
    fail("attn_tp_default: " + std::to_string(attn_tp_default) + " does not divide the " +
         std::to_string(topology.nodes()) + " nodes (0 = all nodes)");
  validate_derived(where);
  try {
    noc_config().validate();
  } catch (const noc::ConfigError& e) {
    fail(e.what());
  }
}

void HardwareSpec::validate_derived(const std::string& where) const {
  auto fail = [&](const std::string& msg) { throw SpecError(where + ": " + msg); };
  const auto used = link_levels_present(topology);
  // The flit is derived from the fastest link and the clock (unless given): it must stay a flit.
  const double widest = std::ceil(max_link_gbytes_per_s() / noc.clock_ghz - 1e-9);
  if (noc.flit_bytes == 0 && widest > ranges::kMaxFlitBytes)
    fail("noc.clock_ghz: " + fmt("%g", noc.clock_ghz) + " GHz with " + fmt("%g", max_link_gbytes_per_s()) +
         " GB/s links needs " + fmt("%.0f", widest) + "-byte flits (at most " + std::to_string(ranges::kMaxFlitBytes) +
         "): raise noc.clock_ghz");
  if (noc.flit_bytes > ranges::kMaxFlitBytes)
    fail("noc.flit_bytes: must be at most " + std::to_string(ranges::kMaxFlitBytes));
  const uint32_t fb = flit_bytes();
  for (int l = 0; l < topology.num_levels(); ++l) {
    if (!used[l]) continue;
    const std::string key = topology.link_field(l);
    const double bytes_per_cycle = topology.links[l].gbytes_per_s / noc.clock_ghz;
    if (bytes_per_cycle > fb * (1 + 1e-9))
      fail(key + ".gbytes_per_s: " + fmt("%g", topology.links[l].gbytes_per_s) + " GB/s is more than one " +
           std::to_string(fb) + "-byte flit per cycle at " + fmt("%g", noc.clock_ghz) +
           " GHz (raise noc.flit_bytes or leave it 0)");
    if (bytes_per_cycle * 4096 < fb) fail(key + ".gbytes_per_s: below 1/4096 of the fastest link");
    const double cycles = std::round(topology.links[l].latency_ns * noc.clock_ghz);
    if (cycles > ranges::kMaxLinkDelayCycles)
      fail(key + ".latency_ns: " + fmt("%g", topology.links[l].latency_ns) + " ns is " + fmt("%.0f", cycles) +
           " cycles at " + fmt("%g", noc.clock_ghz) + " GHz (at most " + std::to_string(ranges::kMaxLinkDelayCycles) +
           ")");
  }
}

double HardwareSpec::max_link_gbytes_per_s() const {
  const auto used = link_levels_present(topology);
  double fastest = 0;
  for (int l = 0; l < topology.num_levels(); ++l)
    if (used[l]) fastest = std::max(fastest, topology.links[l].gbytes_per_s);
  return fastest == 0 ? topology.links[0].gbytes_per_s : fastest;  // 1x1 mesh: no links at all
}

uint32_t HardwareSpec::flit_bytes() const {
  if (noc.flit_bytes) return noc.flit_bytes;
  const double bytes = std::ceil(max_link_gbytes_per_s() / noc.clock_ghz - 1e-9);
  // Clamped so that an out-of-range spec cannot wrap; validate() reports it.
  return static_cast<uint32_t>(std::clamp(bytes, 1.0, double(ranges::kMaxFlitBytes) * 2));
}

noc::NocConfig HardwareSpec::noc_config() const {
  noc::NocConfig c;
  c.width = topology.width;
  c.height = topology.height;
  c.router_kind = noc.router_kind;
  c.vcs = c.router_kind == noc::RouterKind::kLookahead ? 1 : noc.vcs;
  c.buffer_flits = noc.buffer_flits;
  c.router_delay_cycles = noc.router_delay_cycles;
  c.max_packet_flits = noc.max_packet_flits;
  c.ni_queues = noc.ni_queues;
  c.ni_ports = noc.ni_ports;
  c.replay_sessions = noc.replay_sessions;
  c.clock_ghz = noc.clock_ghz;
  c.flit_bytes = flit_bytes();
  auto latency_cycles = [&](const mapping::LinkParams& p) {
    return static_cast<uint32_t>(std::max(1.0, std::round(p.latency_ns * noc.clock_ghz)));
  };
  c.link_delay_cycles = static_cast<int>(latency_cycles(topology.links[0]));
  const noc::MeshGeometry geo{c.width, c.height};
  int auto_buffer = 8;
  for (int n = 0; n < topology.nodes(); ++n) {
    for (int dir = 0; dir < noc::kNumMeshDirs; ++dir) {
      const int m = geo.neighbour(n, dir);
      if (m < 0) continue;
      const mapping::LinkParams& p = topology.link(n, m);
      const double bw = std::min(1.0, p.gbytes_per_s / noc.clock_ghz / c.flit_bytes);
      const uint32_t lat = latency_cycles(p);
      if (bw < 1.0 || lat != static_cast<uint32_t>(c.link_delay_cycles)) c.set_link(n, dir, noc::LinkSpec{lat, bw});
      // Credit round trip 2L + k + R - 1 cycles (docs/MODEL.md), during which the link sends bw flits per cycle.
      const double k = std::ceil(1.0 / bw - 1e-9);
      const double round_trip = 2.0 * lat + k + c.router_delay_cycles - 1;
      auto_buffer = std::max(auto_buffer, static_cast<int>(std::ceil(round_trip * bw - 1e-9)));
    }
  }
  c.buffer_flits = noc.buffer_flits > 0 ? noc.buffer_flits : std::min(auto_buffer, 1024);
  return c;
}

double HardwareSpec::flops_per_link_byte() const {
  const auto used = link_levels_present(topology);
  int l = 0;
  while (l + 1 < topology.num_levels() && !used[static_cast<size_t>(l)]) ++l;  // the finest present level
  return compute.peak_flops / (topology.links[l].gbytes_per_s * 1e9);
}

double HardwareSpec::flops_per_memory_byte() const { return compute.peak_flops / memory.streaming_bytes_per_s(); }

namespace {

/// The groups line: "256 dies of 1x1 nodes, 4 wafers of 8x8 nodes" (classic), or each level of a general
/// hierarchy, finest first.
std::string describe_groups(const mapping::Topology& t) {
  std::ostringstream os;
  if (t.classic) {
    os << t.dies() << (t.dies() == 1 ? " die" : " dies") << " of " << t.die().width << "x" << t.die().height
       << " nodes, " << t.wafers() << (t.wafers() == 1 ? " wafer" : " wafers") << " of " << t.wafer().width << "x"
       << t.wafer().height << " nodes";
    return os.str();
  }
  os << "levels (finest first)";
  for (int l = 0; l < t.num_levels(); ++l)
    os << (l ? ", " : ": ") << t.groups(l) << " x " << t.levels[static_cast<size_t>(l)].name << " of "
       << t.level_width(l) << "x" << t.level_height(l);
  return os.str();
}

/// One line per link level present: its count of directed links and its parameters.
void describe_links(std::ostream& os, const mapping::Topology& t) {
  const auto used = link_levels_present(t);
  std::array<int, mapping::kMaxLevels> count{};
  const noc::MeshGeometry geo{t.width, t.height};
  for (int n = 0; n < t.nodes(); ++n)
    for (int dir = 0; dir < noc::kNumMeshDirs; ++dir)
      if (const int m = geo.neighbour(n, dir); m >= 0) ++count[static_cast<size_t>(t.level_of_link(n, m))];
  for (int l = 0; l < t.num_levels(); ++l) {
    if (!used[static_cast<size_t>(l)]) continue;
    const auto& p = t.links[static_cast<size_t>(l)];
    os << "  links " << t.link_name(l) << ": " << count[static_cast<size_t>(l)] << " directed, "
       << fmt("%.5g", p.gbytes_per_s) << " GB/s each way, " << fmt("%g", p.latency_ns) << " ns, "
       << fmt("%g", p.pj_per_bit) << " pJ/bit per hop\n";
  }
}

}  // namespace

std::vector<std::string> HardwareSpec::warnings() const {
  std::vector<std::string> out;
  const auto used = link_levels_present(topology);
  for (int hi = 1; hi < topology.num_levels(); ++hi)
    for (int lo = 0; lo < hi; ++lo) {
      const double fast = topology.links[static_cast<size_t>(hi)].gbytes_per_s,
                   slow = topology.links[static_cast<size_t>(lo)].gbytes_per_s;
      if (!used[static_cast<size_t>(hi)] || !used[static_cast<size_t>(lo)] || fast <= slow) continue;
      out.push_back(name + ": " + topology.link_field(hi) + ".gbytes_per_s: the " + topology.link_name(hi) +
                    " links (" + fmt("%g", fast) + " GB/s) are faster than the finer " + topology.link_name(lo) +
                    " links (" + fmt("%g", slow) + " GB/s); allowed, but a coarser level is usually slower");
      break;
    }
  return out;
}

namespace {
/// Area and static power per node and in all (docs/MODEL.md "Area and power").
void describe_cost(std::ostream& os, const HardwareSpec& s) {
  const CostReport c = cost_report(s);
  os << "  area per node: " << fmt("%.4g", c.node_mm2()) << " mm^2 (logic " << fmt("%.4g", c.logic_mm2) << ", SRAM "
     << fmt("%.4g", c.sram_mm2) << ", NoC buffers " << fmt("%.3g", c.buffer_mm2) << ", PHYs " << fmt("%.3g", c.phy_mm2)
     << ", DRAM " << fmt("%.4g", c.dram_mm2) << "); system " << fmt("%.5g", c.total_mm2()) << " mm^2\n";
  os << "  static power per node (" << static_power_name(s.cost.static_power) << "): " << fmt("%.4g", c.node_static_w())
     << " W (compute " << fmt("%.4g", c.compute_static_w) << ", SRAM " << fmt("%.3g", c.sram_static_w) << ", NoC "
     << fmt("%.3g", c.noc_static_w) << ", memory " << fmt("%.4g", c.dram_background_w) << "); system "
     << fmt("%.5g", c.total_static_w()) << " W\n";
}
}  // namespace

std::string HardwareSpec::describe() const {
  std::ostringstream os;
  const auto& t = topology;
  os << name << (description.empty() ? "" : ": " + description) << "\n";
  os << "  nodes: " << t.nodes() << " x " << node_kind_name(node_kind) << " on a " << t.width << "x" << t.height
     << " mesh; " << describe_groups(t) << "; attention TP default: "
     << (attn_tp_default > 0 ? std::to_string(attn_tp_default) + (attn_tp_default == 1 ? " node" : " nodes")
                             : std::string("all nodes"))
     << "\n";
  os << "  compute per node: " << fmt("%.4g", compute.peak_flops / 1e12) << " TFLOP/s peak (system "
     << fmt("%.4g", compute.peak_flops * t.nodes() / 1e12) << " TFLOP/s), start-up " << fmt("%g", compute.startup_ns)
     << " ns, " << fmt("%g", compute.pj_per_flop) << " pJ/FLOP\n";
  os << "  memory per node: " << dram::dram_kind_name(memory.kind) << ", "
     << fmt("%.4g", memory.capacity_bytes / double(1ULL << 30)) << " GiB, " << fmt("%.5g", memory.peak_gbytes_per_s)
     << " GB/s peak, " << fmt("%.5g", memory.streaming_bytes_per_s() / 1e9) << " GB/s streaming, "
     << fmt("%g", memory.array_pj_per_bit + memory.interface_pj_per_bit) << " pJ/bit (interface "
     << fmt("%g", memory.interface_pj_per_bit) << ")\n";
  describe_links(os, t);
  const noc::NocConfig nc = noc_config();
  os << "  noc: " << fmt("%g", noc.clock_ghz) << " GHz, " << nc.flit_bytes << "-byte flits, " << nc.vcs << " VCs x "
     << nc.buffer_flits << " flits, router " << nc.router_delay_cycles << " cycles, packets of up to "
     << nc.max_packet_flits << " flits, " << nc.ni_ports << (nc.ni_ports == 1 ? " NI port, " : " NI ports, ")
     << nc.ni_queue_count() << " injection queues per NI\n";
  os << "  collectives: " << mapping::ring_algorithm_name(collectives.algorithm) << ", adds "
     << mapping::reduce_mode_name(collectives.reduce) << ", expert pieces "
     << (compute.grouped_experts ? "in one grouped kernel" : "one command each") << ", pipeline chunks "
     << collectives.pipeline_chunks << "\n";
  describe_cost(os, *this);
  os << "  compute/bandwidth per node: " << fmt("%.4g", flops_per_link_byte()) << " FLOP per byte of one link, "
     << fmt("%.4g", flops_per_memory_byte()) << " FLOP per byte of local memory\n";
  return os.str();
}

nlohmann::json to_json(const HardwareSpec& s) { return write_hardware_fields(s); }

HardwareSpec hardware_from_json(const nlohmann::json& j, const std::string& where) {
  HardwareSpec s;
  read_hardware_fields(j, where, s);
  s.validate(where);
  return s;
}

HardwareSpec load_hardware_file(const std::string& path) {
  return hardware_from_json(base::read_json_file(path), path);
}

HardwareSpec load_hardware(const std::string& preset_or_file) {
  const auto names = preset_names();
  if (std::find(names.begin(), names.end(), preset_or_file) != names.end()) return preset(preset_or_file);
  const bool looks_like_file = preset_or_file.find('/') != std::string::npos ||
                               preset_or_file.find(".json") != std::string::npos || base::names_a_file(preset_or_file);
  if (!looks_like_file)
    throw SpecError("unknown hardware preset '" + preset_or_file + "' (nmpsim hw --list-presets lists them)");
  return load_hardware_file(preset_or_file);
}

}  // namespace nmpsim::hw
