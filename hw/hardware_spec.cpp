#include "nmpsim/hw/hardware_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "nmpsim/base/input_file.h"

namespace nmpsim::hw {

using base::JsonFields;
using mapping::LinkLevel;

namespace {

const char* const kLevelKeys[mapping::kNumLinkLevels] = {"on_die", "die_to_die", "wafer_to_wafer"};

/// Which link levels occur in this topology.
std::array<bool, mapping::kNumLinkLevels> levels_present(const mapping::Topology& t) {
  std::array<bool, mapping::kNumLinkLevels> used{};
  for (int n = 0; n < t.nodes(); ++n) {
    if (t.x(n) + 1 < t.width) used[static_cast<int>(t.link_level(n, n + 1))] = true;
    if (t.y(n) + 1 < t.height) used[static_cast<int>(t.link_level(n, n + t.width))] = true;
  }
  return used;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

void HardwareSpec::validate(const std::string& where) const {
  try {
    topology.validate(where);
    memory.validate(where + ": memory");
  } catch (const std::invalid_argument& e) {
    throw SpecError(e.what());
  }
  auto fail = [&](const std::string& msg) { throw SpecError(where + ": " + msg); };
  auto in = [&](double v, const base::NumberRange& r, const std::string& field) {
    if (!r.contains(v)) fail(field + ": " + r.violation(v));
  };
  if (attn_tp_default < 0 || (attn_tp_default > 0 && topology.nodes() % attn_tp_default != 0))
    fail("attn_tp_default: " + std::to_string(attn_tp_default) + " does not divide the " +
         std::to_string(topology.nodes()) + " nodes (0 = all nodes)");
  if (node_kind != "nmp-pe" && node_kind != "die")
    fail("node_kind: must be \"nmp-pe\" or \"die\", got \"" + node_kind + "\"");
  in(compute.peak_flops / 1e12, ranges::kPeakTflops, "compute.peak_tflops");
  in(compute.startup_ns, ranges::kStartupNs, "compute.startup_ns");
  in(compute.pj_per_flop, ranges::kPjPerFlop, "compute.pj_per_flop");
  in(compute.static_w, ranges::kStaticW, "compute.static_w");
  in(memory.background_w, ranges::kStaticW, "memory.background_w");
  if (compute.dma_chunk_bytes < 64 || compute.dma_chunk_bytes > (1u << 30))
    fail("compute.dma_chunk_bytes: must be in [64, 1073741824]");
  if (compute.copy_chunk_bytes < 64 || compute.copy_chunk_bytes > (1u << 30))
    fail("compute.copy_chunk_bytes: must be in [64, 1073741824]");
  if (compute.broadcast_window_chunks > (1u << 20)) fail("compute.broadcast_window_chunks: must be in [0, 1048576]");
  if (compute.element_bytes < 1 || compute.element_bytes > 16) fail("compute.element_bytes: must be in [1, 16]");
  in(noc.clock_ghz, ranges::kClockGhz, "noc.clock_ghz");
  in(noc.flow_link_efficiency, ranges::kFlowLinkEfficiency, "noc.flow_link_efficiency");
  in(noc.flow_resolve_fraction, ranges::kFlowResolveFraction, "noc.flow_resolve_fraction");
  const auto used = levels_present(topology);
  for (int l = 0; l < mapping::kNumLinkLevels; ++l) {
    if (!used[l]) continue;
    const std::string key = std::string("links.") + kLevelKeys[l];
    in(topology.links[l].gbytes_per_s, ranges::kLinkGbps, key + ".gbytes_per_s");
    in(topology.links[l].latency_ns, ranges::kLinkLatencyNs, key + ".latency_ns");
    in(topology.links[l].pj_per_bit, ranges::kLinkPjPerBit, key + ".pj_per_bit");
  }
  validate_derived(where);
  try {
    noc_config().validate();
  } catch (const noc::ConfigError& e) {
    fail(e.what());
  }
}

void HardwareSpec::validate_derived(const std::string& where) const {
  auto fail = [&](const std::string& msg) { throw SpecError(where + ": " + msg); };
  const auto used = levels_present(topology);
  // The flit is derived from the fastest link and the clock (unless given): it must stay a flit.
  const double widest = std::ceil(max_link_gbytes_per_s() / noc.clock_ghz - 1e-9);
  if (noc.flit_bytes == 0 && widest > ranges::kMaxFlitBytes)
    fail("noc.clock_ghz: " + fmt("%g", noc.clock_ghz) + " GHz with " + fmt("%g", max_link_gbytes_per_s()) +
         " GB/s links needs " + fmt("%.0f", widest) + "-byte flits (at most " + std::to_string(ranges::kMaxFlitBytes) +
         "): raise noc.clock_ghz");
  if (noc.flit_bytes > ranges::kMaxFlitBytes)
    fail("noc.flit_bytes: must be at most " + std::to_string(ranges::kMaxFlitBytes));
  const uint32_t fb = flit_bytes();
  for (int l = 0; l < mapping::kNumLinkLevels; ++l) {
    if (!used[l]) continue;
    const std::string key = std::string("links.") + kLevelKeys[l];
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
  const auto used = levels_present(topology);
  double fastest = 0;
  for (int l = 0; l < mapping::kNumLinkLevels; ++l)
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
  c.router_kind = noc::parse_router_kind(noc.router_kind, "noc.router_kind");
  c.vcs = c.router_kind == noc::RouterKind::kLookahead ? 1 : noc.vcs;
  c.buffer_flits = noc.buffer_flits;
  c.router_delay_cycles = noc.router_delay_cycles;
  c.max_packet_flits = noc.max_packet_flits;
  c.ni_queues = noc.ni_queues;
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
  const auto used = levels_present(topology);
  const int l = used[0] ? 0 : used[1] ? 1 : 2;
  return compute.peak_flops / (topology.links[l].gbytes_per_s * 1e9);
}

double HardwareSpec::flops_per_memory_byte() const { return compute.peak_flops / memory.streaming_bytes_per_s(); }

std::string HardwareSpec::describe() const {
  std::ostringstream os;
  const auto& t = topology;
  os << name << (description.empty() ? "" : ": " + description) << "\n";
  os << "  nodes: " << t.nodes() << " x " << node_kind << " on a " << t.width << "x" << t.height << " mesh; "
     << t.dies() << (t.dies() == 1 ? " die" : " dies") << " of " << t.die_width << "x" << t.die_height << " nodes, "
     << t.wafers() << (t.wafers() == 1 ? " wafer" : " wafers") << " of " << t.wafer_width << "x" << t.wafer_height
     << " nodes; attention TP default: "
     << (attn_tp_default > 0 ? std::to_string(attn_tp_default) + " nodes" : std::string("all nodes")) << "\n";
  os << "  compute per node: " << fmt("%.4g", compute.peak_flops / 1e12) << " TFLOP/s peak (system "
     << fmt("%.4g", compute.peak_flops * t.nodes() / 1e12) << " TFLOP/s), start-up " << fmt("%g", compute.startup_ns)
     << " ns, " << fmt("%g", compute.pj_per_flop) << " pJ/FLOP, static " << fmt("%g", compute.static_w) << " W\n";
  os << "  memory per node: " << memory.kind << ", " << fmt("%.4g", memory.capacity_bytes / double(1ULL << 30))
     << " GiB, " << fmt("%.5g", memory.peak_gbytes_per_s) << " GB/s peak, "
     << fmt("%.5g", memory.streaming_bytes_per_s() / 1e9) << " GB/s streaming, "
     << fmt("%g", memory.array_pj_per_bit + memory.interface_pj_per_bit) << " pJ/bit (interface "
     << fmt("%g", memory.interface_pj_per_bit) << "), background " << fmt("%g", memory.background_w) << " W\n";
  const auto used = levels_present(t);
  const noc::NocConfig nc = noc_config();
  for (int l = 0; l < mapping::kNumLinkLevels; ++l) {
    if (!used[l]) continue;
    int count = 0;
    for (int n = 0; n < t.nodes(); ++n)
      for (int dir = 0; dir < noc::kNumMeshDirs; ++dir) {
        const int m = noc::MeshGeometry{t.width, t.height}.neighbour(n, dir);
        if (m >= 0 && static_cast<int>(t.link_level(n, m)) == l) ++count;
      }
    const auto& p = t.links[l];
    os << "  links " << mapping::link_level_name(static_cast<LinkLevel>(l)) << ": " << count << " directed, "
       << fmt("%.5g", p.gbytes_per_s) << " GB/s each way, " << fmt("%g", p.latency_ns) << " ns, "
       << fmt("%g", p.pj_per_bit) << " pJ/bit per hop\n";
  }
  os << "  noc: " << fmt("%g", noc.clock_ghz) << " GHz, " << nc.flit_bytes << "-byte flits, " << nc.vcs << " VCs x "
     << nc.buffer_flits << " flits, router " << nc.router_delay_cycles << " cycles, packets of up to "
     << nc.max_packet_flits << " flits, " << nc.ni_queue_count() << " injection queues per NI\n";
  os << "  compute/bandwidth per node: " << fmt("%.4g", flops_per_link_byte()) << " FLOP per byte of one link, "
     << fmt("%.4g", flops_per_memory_byte()) << " FLOP per byte of local memory\n";
  return os.str();
}

nlohmann::json to_json(const HardwareSpec& s) {
  nlohmann::json links;
  for (int l = 0; l < mapping::kNumLinkLevels; ++l)
    links[kLevelKeys[l]] = {{"gbytes_per_s", s.topology.links[l].gbytes_per_s},
                            {"latency_ns", s.topology.links[l].latency_ns},
                            {"pj_per_bit", s.topology.links[l].pj_per_bit}};
  const auto& m = s.memory;
  return {
      {"name", s.name},
      {"description", s.description},
      {"node_kind", s.node_kind},
      {"attn_tp_default", s.attn_tp_default},
      {"mesh", {{"width", s.topology.width}, {"height", s.topology.height}}},
      {"die", {{"width", s.topology.die_width}, {"height", s.topology.die_height}}},
      {"wafer", {{"width", s.topology.wafer_width}, {"height", s.topology.wafer_height}}},
      {"compute",
       {{"peak_tflops", s.compute.peak_flops / 1e12},
        {"startup_ns", s.compute.startup_ns},
        {"pj_per_flop", s.compute.pj_per_flop},
        {"static_w", s.compute.static_w},
        {"dma_chunk_bytes", s.compute.dma_chunk_bytes},
        {"copy_chunk_bytes", s.compute.copy_chunk_bytes},
        {"broadcast_window_chunks", s.compute.broadcast_window_chunks},
        {"element_bytes", s.compute.element_bytes}}},
      {"memory",
       {{"kind", m.kind},
        {"capacity_bytes", m.capacity_bytes},
        {"peak_gbytes_per_s", m.peak_gbytes_per_s},
        {"banks", m.banks},
        {"row_bytes", m.row_bytes},
        {"t_rcd_ns", m.t_rcd_ns},
        {"t_rp_ns", m.t_rp_ns},
        {"t_cl_ns", m.t_cl_ns},
        {"t_rc_ns", m.t_rc_ns},
        {"refresh_overhead", m.refresh_overhead},
        {"array_pj_per_bit", m.array_pj_per_bit},
        {"interface_pj_per_bit", m.interface_pj_per_bit},
        {"activate_pj", m.activate_pj},
        {"background_w", m.background_w},
        {"queue_depth", m.queue_depth}}},
      {"noc",
       {{"clock_ghz", s.noc.clock_ghz},
        {"router_kind", s.noc.router_kind},
        {"vcs", s.noc.vcs},
        {"buffer_flits", s.noc.buffer_flits},
        {"router_delay_cycles", s.noc.router_delay_cycles},
        {"max_packet_flits", s.noc.max_packet_flits},
        {"ni_queues", s.noc.ni_queues},
        {"flow_link_efficiency", s.noc.flow_link_efficiency},
        {"flow_resolve_fraction", s.noc.flow_resolve_fraction},
        {"replay_sessions", s.noc.replay_sessions},
        {"flit_bytes", s.noc.flit_bytes}}},
      {"links", links},
  };
}

namespace {

/// The "compute" object.
void read_compute(const JsonFields& c, pe::PeSpec& out) {
  out.peak_flops = c.number_in("peak_tflops", ranges::kPeakTflops) * 1e12;
  out.startup_ns = c.number_in("startup_ns", ranges::kStartupNs, out.startup_ns);
  out.pj_per_flop = c.number_in("pj_per_flop", ranges::kPjPerFlop, out.pj_per_flop);
  out.static_w = c.number_in("static_w", ranges::kStaticW, out.static_w);
  out.dma_chunk_bytes = static_cast<uint32_t>(c.integer("dma_chunk_bytes", 64, 1 << 30, out.dma_chunk_bytes));
  out.copy_chunk_bytes = static_cast<uint32_t>(c.integer("copy_chunk_bytes", 64, 1 << 30, out.copy_chunk_bytes));
  out.broadcast_window_chunks =
      static_cast<uint32_t>(c.integer("broadcast_window_chunks", 0, 1 << 20, out.broadcast_window_chunks));
  out.element_bytes = static_cast<uint32_t>(c.integer("element_bytes", 1, 16, out.element_bytes));
  c.no_unknown_keys();
}

/// The "memory" object.
void read_memory(const JsonFields& m, dram::DramSpec& d) {
  d.kind = m.string("kind", d.kind);
  namespace dr = dram::dram_ranges;
  d.capacity_bytes = static_cast<uint64_t>(m.integer("capacity_bytes", 1 << 20, 1LL << 50));
  d.peak_gbytes_per_s = m.number_in("peak_gbytes_per_s", dr::kPeakGbps);
  d.banks = static_cast<int>(m.integer("banks", 1, 4096, d.banks));
  d.row_bytes = static_cast<uint32_t>(m.integer("row_bytes", 64, 1 << 20, d.row_bytes));
  d.t_rcd_ns = m.number_in("t_rcd_ns", dr::kTimingNs, d.t_rcd_ns);
  d.t_rp_ns = m.number_in("t_rp_ns", dr::kTimingNs, d.t_rp_ns);
  d.t_cl_ns = m.number_in("t_cl_ns", dr::kTimingNs, d.t_cl_ns);
  d.t_rc_ns = m.number_in("t_rc_ns", dr::kRowCycleNs, d.t_rc_ns);
  d.refresh_overhead = m.number_in("refresh_overhead", dr::kRefresh, d.refresh_overhead);
  d.array_pj_per_bit = m.number_in("array_pj_per_bit", dr::kPjPerBit, d.array_pj_per_bit);
  d.interface_pj_per_bit = m.number_in("interface_pj_per_bit", dr::kPjPerBit, d.interface_pj_per_bit);
  d.activate_pj = m.number_in("activate_pj", dr::kActivatePj, d.activate_pj);
  d.background_w = m.number_in("background_w", ranges::kStaticW, d.background_w);
  d.queue_depth = static_cast<int>(m.integer("queue_depth", 1, 1024, d.queue_depth));
  m.no_unknown_keys();
}

/// The "noc" object.
void read_noc(const JsonFields& n, NocParams& out) {
  out.clock_ghz = n.number_in("clock_ghz", ranges::kClockGhz, out.clock_ghz);
  out.router_kind = n.string("router_kind", out.router_kind);
  if (out.router_kind != "vc" && out.router_kind != "lookahead")
    n.fail("router_kind", "unknown router kind '" + out.router_kind + "' (expected vc or lookahead)");
  out.vcs = static_cast<int>(n.integer("vcs", 1, 8, out.vcs));
  out.buffer_flits = static_cast<int>(n.integer("buffer_flits", 0, 1024, out.buffer_flits));
  out.router_delay_cycles = static_cast<int>(n.integer("router_delay_cycles", 1, 64, out.router_delay_cycles));
  out.max_packet_flits = static_cast<int>(n.integer("max_packet_flits", 1, 65535, out.max_packet_flits));
  out.flit_bytes = static_cast<uint32_t>(n.integer("flit_bytes", 0, ranges::kMaxFlitBytes, out.flit_bytes));
  out.ni_queues = static_cast<int>(n.integer("ni_queues", 0, noc::kMaxNiQueues, out.ni_queues));
  out.flow_link_efficiency = n.number_in("flow_link_efficiency", ranges::kFlowLinkEfficiency, out.flow_link_efficiency);
  out.flow_resolve_fraction =
      n.number_in("flow_resolve_fraction", ranges::kFlowResolveFraction, out.flow_resolve_fraction);
  out.replay_sessions = n.boolean("replay_sessions", out.replay_sessions);
  n.no_unknown_keys();
}

/// The "links" object: one entry per link level the topology has.
void read_links(const JsonFields& links, mapping::Topology& t) {
  const auto used = levels_present(t);
  for (int l = 0; l < mapping::kNumLinkLevels; ++l) {
    auto& p = t.links[l];
    if (!links.has(kLevelKeys[l])) {
      if (used[l])
        links.fail(kLevelKeys[l], "missing (this topology has " +
                                      std::string(mapping::link_level_name(static_cast<LinkLevel>(l))) + " links)");
      continue;
    }
    const JsonFields lf = links.object(kLevelKeys[l]);
    p.gbytes_per_s = lf.number_in("gbytes_per_s", ranges::kLinkGbps);
    p.latency_ns = lf.number_in("latency_ns", ranges::kLinkLatencyNs, p.latency_ns);
    p.pj_per_bit = lf.number_in("pj_per_bit", ranges::kLinkPjPerBit, p.pj_per_bit);
    lf.no_unknown_keys();
  }
  links.no_unknown_keys();
}

}  // namespace

HardwareSpec hardware_from_json(const nlohmann::json& j, const std::string& where) {
  HardwareSpec s;
  const JsonFields root(j, where, "");
  s.name = root.string("name", "custom");
  s.description = root.string("description", "");
  // Names and descriptions reach plot titles, tables and error messages: printable text, bounded.
  auto printable = [&](const char* key, const std::string& text) {
    if (text.size() > 4096 || mapping::one_line(text) != text)
      root.fail(key, "must be printable text of at most 4096 bytes (no control characters)");
  };
  printable("name", s.name);
  printable("description", s.description);
  if (s.name.empty()) root.fail("name", "must not be empty");
  s.node_kind = root.string("node_kind", "nmp-pe");
  s.attn_tp_default = static_cast<int>(root.integer("attn_tp_default", 0, 1 << 16, 0));
  const JsonFields mesh = root.object("mesh");
  s.topology.width = static_cast<int>(mesh.integer("width", 1, 256));
  s.topology.height = static_cast<int>(mesh.integer("height", 1, 256));
  mesh.no_unknown_keys();
  auto tile = [&](const char* key, int& w, int& h) {
    w = s.topology.width;
    h = s.topology.height;
    if (!root.has(key)) return;
    const JsonFields t = root.object(key);
    w = static_cast<int>(t.integer("width", 1, 256));
    h = static_cast<int>(t.integer("height", 1, 256));
    t.no_unknown_keys();
  };
  tile("wafer", s.topology.wafer_width, s.topology.wafer_height);
  tile("die", s.topology.die_width, s.topology.die_height);
  if (!root.has("die") && root.has("wafer")) {
    s.topology.die_width = s.topology.wafer_width;
    s.topology.die_height = s.topology.wafer_height;
  }

  read_compute(root.object("compute"), s.compute);
  read_memory(root.object("memory"), s.memory);
  if (root.has("noc")) read_noc(root.object("noc"), s.noc);
  read_links(root.object("links"), s.topology);
  root.no_unknown_keys();
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
