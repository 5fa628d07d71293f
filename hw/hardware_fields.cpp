// The table of hardware parameters (hardware_fields.h). Sources of the presets' values: docs/MODEL.md
// "Hardware presets"; the defaults are the struct initialisers of HardwareSpec, pe::PeSpec,
// dram::DramSpec, NocParams (from noc::NocConfig) and mapping::LinkParams.
#include "nmpsim/hw/hardware_fields.h"

#include <algorithm>
#include <stdexcept>

#include "nmpsim/hw/hardware_spec.h"

namespace nmpsim::hw {

namespace {

using json = nlohmann::json;
using Spec = HardwareSpec;

/// A field under construction: the builders below fill the common parts, these add the rest.
struct Builder {
  HardwareField f;
  Builder&& required() && {
    f.presence = Presence::kRequired;
    return std::move(*this);
  }
  Builder&& from(std::string path) && {
    f.default_from = std::move(path);
    return std::move(*this);
  }
  Builder&& range_note(std::string note) && {
    f.range_note = std::move(note);
    return std::move(*this);
  }
  Builder&& default_note(std::string note) && {
    f.default_note = std::move(note);
    return std::move(*this);
  }
  Builder&& classic_only() && {
    f.classic_only = true;
    return std::move(*this);
  }
  /// Applies only with fixed static power: refused where it does not apply, and not written there.
  Builder&& fixed_static_only() && {
    f.applies = [](const Spec& s) { return s.cost.static_power == StaticPower::kFixed; };
    f.applies_note = "with `cost.static_power` `fixed`";
    f.strict_applies = true;
    return std::move(*this);
  }
  Builder&& power_of_two() && {
    f.power_of_two = true;
    return std::move(*this);
  }
  Builder&& applies(std::function<bool(const Spec&)> when, std::string note) && {
    f.applies = std::move(when);
    f.applies_note = std::move(note);
    return std::move(*this);
  }
};

Builder base(std::string path, FieldType type, std::string unit, double lo, double hi, std::string doc) {
  Builder b;
  b.f.path = std::move(path);
  b.f.type = type;
  b.f.unit = std::move(unit);
  b.f.min = lo;
  b.f.max = hi;
  b.f.doc = std::move(doc);
  return b;
}

/// `at(spec)` is the member: a generic lambda, so that it serves const and non-const specs. A number
/// is held in the spec as `scale` times its JSON value (peak_tflops: FLOP/s).
template <class At>
Builder number(std::string path, std::string unit, double lo, double hi, At at, std::string doc, double scale = 1) {
  Builder b = base(std::move(path), FieldType::kNumber, std::move(unit), lo, hi, std::move(doc));
  b.f.get = [at, scale](const Spec& s) { return json(scale == 1 ? at(s) : at(s) / scale); };
  b.f.set = [at, scale](Spec& s, const json& v) { at(s) = scale == 1 ? v.get<double>() : v.get<double>() * scale; };
  return b;
}

template <class At>
Builder integer(std::string path, std::string unit, double lo, double hi, At at, std::string doc) {
  Builder b = base(std::move(path), FieldType::kInteger, std::move(unit), lo, hi, std::move(doc));
  b.f.get = [at](const Spec& s) { return json(at(s)); };
  b.f.set = [at](Spec& s, const json& v) {
    using T = std::decay_t<decltype(at(s))>;
    at(s) = static_cast<T>(v.get<long long>());
  };
  return b;
}

template <class At>
Builder boolean(std::string path, At at, std::string doc) {
  Builder b = base(std::move(path), FieldType::kBoolean, "-", 0, 1, std::move(doc));
  b.f.get = [at](const Spec& s) { return json(at(s)); };
  b.f.set = [at](Spec& s, const json& v) { at(s) = v.get<bool>(); };
  return b;
}

/// Text of `lo` to `hi` bytes, printable (names reach plot titles, tables and error messages).
template <class At>
Builder text(std::string path, double lo, double hi, At at, std::string doc) {
  Builder b = base(std::move(path), FieldType::kText, "-", lo, hi, std::move(doc));
  b.f.get = [at](const Spec& s) { return json(at(s)); };
  b.f.set = [at](Spec& s, const json& v) { at(s) = v.get<std::string>(); };
  return b;
}

/// An enum whose values are 0, 1, ... `count` - 1, named by `name_of`.
template <class E, class At>
Builder choice(std::string path, int count, const char* (*name_of)(E), At at, std::string doc) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back(name_of(static_cast<E>(i)));
  Builder b = base(std::move(path), FieldType::kChoice, "-", 0, 0, std::move(doc));
  b.f.choices = names;
  b.f.get = [at, names](const Spec& s) {
    const auto i = static_cast<size_t>(at(s));
    return json(i < names.size() ? names[i] : std::string("?"));
  };
  b.f.set = [at, names](Spec& s, const json& v) {
    const auto it = std::find(names.begin(), names.end(), v.get<std::string>());
    if (it == names.end()) throw std::logic_error("choice field set to an unchecked name");  // violation() first
    at(s) = static_cast<E>(it - names.begin());
  };
  return b;
}

#define AT(member) \
  [](auto& s) -> auto& { return s.member; }

/// Whether this topology has links of this level (a 1x1 mesh has none: its flit width comes from the
/// on-die level's bandwidth, given or not).
std::function<bool(const Spec&)> level_applies(int level) {
  return [level](const Spec& s) {
    return s.topology.classic && link_levels_present(s.topology)[static_cast<size_t>(level)];
  };
}

void add_labels_and_topology(std::vector<HardwareField>& t) {
  t.push_back(text("name", 1, 4096, AT(name), "label (plot titles, tables, output names)").f);
  t.push_back(text("description", 0, 4096, AT(description), "label").f);
  t.push_back(
      choice("node_kind", 2, node_kind_name, AT(node_kind), "PE on a hybrid-bonded DRAM bank, or compute die with HBM")
          .f);
  t.push_back(integer("attn_tp_default", "nodes", 0, 1 << 16, AT(attn_tp_default),
                      "attention TP group size when a run does not set `--attn-tp` (0: all nodes); the wafer "
                      "presets use 4")
                  .range_note("0 or a divisor of the nodes")
                  .f);
  const char* size_doc = "mesh size (MoE runs and `hw --exercise`: at most 4096 nodes)";
  t.push_back(integer("mesh.width", "nodes", 1, 256, AT(topology.width), size_doc).required().f);
  t.push_back(integer("mesh.height", "nodes", 1, 256, AT(topology.height), size_doc).required().f);
  t.push_back(integer("wafer.width", "nodes", 1, 256, AT(topology.wafer().width), "nodes per wafer")
                  .from("mesh.width")
                  .range_note("tile the mesh")
                  .classic_only()
                  .f);
  t.push_back(integer("wafer.height", "nodes", 1, 256, AT(topology.wafer().height), "nodes per wafer")
                  .from("mesh.height")
                  .range_note("tile the mesh")
                  .classic_only()
                  .f);
  t.push_back(integer("die.width", "nodes", 1, 256, AT(topology.die().width), "nodes per die")
                  .from("wafer.width")
                  .range_note("tile the wafer")
                  .classic_only()
                  .f);
  t.push_back(integer("die.height", "nodes", 1, 256, AT(topology.die().height), "nodes per die")
                  .from("wafer.height")
                  .range_note("tile the wafer")
                  .classic_only()
                  .f);
}

void add_compute(std::vector<HardwareField>& t) {
  t.push_back(
      number("compute.peak_tflops", "TFLOP/s", 1e-3, 1e6, AT(compute.peak_flops), "peak per node", 1e12).required().f);
  t.push_back(
      number("compute.startup_ns", "ns", 0, 1e6, AT(compute.startup_ns), "fixed start-up of each compute command").f);
  t.push_back(number("compute.pj_per_flop", "pJ", 0, 1e3, AT(compute.pj_per_flop), "compute energy").f);
  t.push_back(number("compute.static_w", "W", 0, 1e5, AT(compute.static_w),
                     "`cost.static_power` `fixed` only: leakage and idle power of one node's compute, charged for "
                     "the whole run (`scaled` derives it from `cost.*`)")
                  .fixed_static_only()
                  .f);
  t.push_back(
      integer("compute.dma_chunk_bytes", "bytes", 64, 1 << 30, AT(compute.dma_chunk_bytes), "largest DRAM transaction")
          .f);
  t.push_back(integer("compute.copy_chunk_bytes", "bytes", 64, 1 << 30, AT(compute.copy_chunk_bytes),
                      "weight-copy chunk on the NoC")
                  .f);
  t.push_back(integer("compute.broadcast_window_chunks", "chunks", 0, 1 << 20, AT(compute.broadcast_window_chunks),
                      "a broadcast reads its next chunk only while fewer of its chunks are on the way to the first "
                      "node of its chain")
                  .default_note("0: no limit")
                  .f);
  t.push_back(
      integer("compute.element_bytes", "bytes", 1, 16, AT(compute.element_bytes), "element size for reductions").f);
  t.push_back(integer("compute.attention_tile_tokens", "tokens", 1, 1 << 16, AT(compute.attention_tile_tokens),
                      "query rows per attention tile: a prompt's attention reads the KV cache once per tile "
                      "(FlashAttention-2; docs/MODEL.md \"Steps: decode, prefill, mixed\")")
                  .f);
  t.push_back(boolean("compute.grouped_experts", AT(compute.grouped_experts),
                      "a node's expert pieces of one layer run as one grouped kernel (one command, one start-up) "
                      "instead of one command each (docs/MODEL.md \"Reductions and grouped experts\")")
                  .f);
}

void add_collectives(std::vector<HardwareField>& t) {
  t.push_back(choice("collectives.algorithm", 4, mapping::ring_algorithm_name, AT(collectives.algorithm),
                     "`ring`: every ring collective one way round its ring; `bidirectional`: half of every chunk "
                     "each way at once (rings of 3 or more); `2d`: on the mesh rectangle a group fills, half "
                     "along rows then columns and half along columns then rows; `auto`: per group, the one of "
                     "the three whose idle-mesh closed form is smallest (docs/MODEL.md \"2D collectives and "
                     "auto\")")
                  .f);
  t.push_back(choice("collectives.gradients", 4, mapping::ring_algorithm_name, AT(collectives.gradients),
                     "a training step's gradient synchronisation (all-reduces over the copies of a weight, "
                     "reduce-scatters to owners): the same four choices as `collectives.algorithm`; "
                     "`bidirectional` (rings of 3 or more) by default; `auto` as NCCL, which picks its algorithm "
                     "per call (docs/MODEL.md \"Data centres on the mesh\")")
                  .f);
  t.push_back(choice("collectives.reduce", 2, mapping::reduce_mode_name, AT(collectives.reduce),
                     "`kernel`: every add of a ring reduce-scatter step and every combine sum is a compute "
                     "command with the start-up; `fused`: the receiver adds as the data arrives, at its FLOP "
                     "rate, without a start-up (docs/MODEL.md \"Reductions and grouped experts\")")
                  .f);
  t.push_back(integer("collectives.pipeline_chunks", "chunks", 1, 64, AT(collectives.pipeline_chunks),
                      "the attention's and shared experts' compute in this many pieces along its output, "
                      "one kernel (one start-up), each piece reduce-scattered as soon as it is done; 1 = "
                      "not pipelined (docs/MODEL.md \"Pipelined collectives\")")
                  .f);
}

void add_memory(std::vector<HardwareField>& t) {
  t.push_back(choice("memory.kind", 2, dram::dram_kind_name, AT(memory.kind),
                     "hybrid-bonded bank under a PE, or an HBM stack beside a die (a label: the timing fields "
                     "make the difference)")
                  .f);
  t.push_back(
      integer("memory.capacity_bytes", "bytes", 1 << 20, double(1ULL << 50), AT(memory.capacity_bytes), "per node")
          .required()
          .f);
  t.push_back(number("memory.peak_gbytes_per_s", "GB/s", 1e-3, 1e6, AT(memory.peak_gbytes_per_s),
                     "peak data bandwidth per node (1 GB = 1e9 bytes)")
                  .required()
                  .f);
  t.push_back(integer("memory.banks", "-", 1, 4096, AT(memory.banks), "row buffers (banks across all channels)").f);
  t.push_back(integer("memory.row_bytes", "bytes", 64, 1 << 20, AT(memory.row_bytes), "row (page) size per bank")
                  .power_of_two()
                  .f);
  t.push_back(number("memory.t_rcd_ns", "ns", 0, 1e4, AT(memory.t_rcd_ns), "activate to column command").f);
  t.push_back(number("memory.t_rp_ns", "ns", 0, 1e4, AT(memory.t_rp_ns), "precharge").f);
  t.push_back(number("memory.t_cl_ns", "ns", 0, 1e4, AT(memory.t_cl_ns), "column command to first data").f);
  t.push_back(
      number("memory.t_rc_ns", "ns", 1e-3, 1e4, AT(memory.t_rc_ns), "row cycle (activate to activate, one bank)").f);
  t.push_back(number("memory.refresh_overhead", "fraction", 0, 0.9, AT(memory.refresh_overhead),
                     "bandwidth lost to refresh (tRFC / tREFI)")
                  .f);
  t.push_back(
      number("memory.array_pj_per_bit", "pJ/bit", 0, 1e3, AT(memory.array_pj_per_bit), "DRAM array access energy").f);
  t.push_back(number("memory.interface_pj_per_bit", "pJ/bit", 0, 1e3, AT(memory.interface_pj_per_bit),
                     "logic-to-DRAM interface energy")
                  .f);
  t.push_back(number("memory.activate_pj", "pJ", 0, 1e7, AT(memory.activate_pj), "per row activation and precharge").f);
  t.push_back(number("memory.background_w", "W", 0, 1e5, AT(memory.background_w),
                     "`cost.static_power` `fixed` only: background and refresh power of one node's memory, "
                     "charged for the whole run (`scaled` derives it from `cost.*`)")
                  .fixed_static_only()
                  .f);
  t.push_back(integer("memory.queue_depth", "requests", 1, 1024, AT(memory.queue_depth),
                      "requests in service before END_REQ is withheld")
                  .f);
}

void add_noc(std::vector<HardwareField>& t) {
  t.push_back(number("noc.clock_ghz", "GHz", 1e-3, 100, AT(noc.clock_ghz), "NoC clock").f);
  t.push_back(choice("noc.router_kind", 2, noc::router_kind_name, AT(noc.router_kind),
                     "router micro-architecture: `vc` the input-buffered VC router, `lookahead` the look-ahead "
                     "router (no VCs, so `vcs` is taken as 1; no engine fast path: its SystemC model runs at pin "
                     "level; the flow model ignores the kind). docs/RTL.md")
                  .f);
  t.push_back(integer("noc.vcs", "-", 1, 8, AT(noc.vcs), "virtual channels per input port").f);
  t.push_back(integer("noc.buffer_flits", "flits", 0, 1024, AT(noc.buffer_flits), "buffer per VC")
                  .default_note("0: sized to the credit round trip")
                  .f);
  t.push_back(integer("noc.router_delay_cycles", "cycles", 1, 64, AT(noc.router_delay_cycles),
                      "router pipeline (buffer write to switch traversal at zero load)")
                  .f);
  t.push_back(integer("noc.max_packet_flits", "flits", 1, 65535, AT(noc.max_packet_flits),
                      "messages are cut into packets of at most this many flits")
                  .f);
  t.push_back(integer("noc.flit_bytes", "bytes", 0, ranges::kMaxFlitBytes, AT(noc.flit_bytes), "flit width")
                  .default_note("0: the fastest link's bytes per cycle")
                  .f);
  t.push_back(integer("noc.ni_queues", "queues", 0, noc::kMaxNiQueues, AT(noc.ni_queues),
                      "injection (DMA) queues per network interface; 1 = one FIFO (docs/MODEL.md \"Network "
                      "interfaces and messages\")")
                  .default_note("0: one per VC of every local port")
                  .f);
  t.push_back(integer("noc.ni_ports", "ports", 1, noc::kMaxNiPorts, AT(noc.ni_ports),
                      "ports between a router and its network interface, each one flit per cycle each way "
                      "(docs/MODEL.md \"Network interfaces and messages\")")
                  .f);
  t.push_back(number("noc.flow_link_efficiency", "fraction", 0.1, 1, AT(noc.flow_link_efficiency),
                     "flow fidelity only: share of a contended mesh link's bandwidth (docs/MODEL.md \"Flow-level "
                     "model\")")
                  .f);
  t.push_back(number("noc.flow_resolve_fraction", "fraction", 0, 1, AT(noc.flow_resolve_fraction),
                     "flow fidelity only: rates are re-solved once this share of the flows in flight started or "
                     "finished; 0 = at every change (docs/MODEL.md \"Flow-level model\")")
                  .f);
  t.push_back(boolean("noc.replay_sessions", AT(noc.replay_sessions),
                      "both fidelities: replay repeated network sessions from a recording instead of simulating "
                      "them again, with the same results to the bit; `false` only to check that or to time the "
                      "engines (docs/MODEL.md \"Session replay\")")
                  .f);
}

void add_links(std::vector<HardwareField>& t) {
  const mapping::Topology classic;  // the field table's links are the classic form's
  for (int l = 0; l < mapping::kNumLinkLevels; ++l) {
    const std::string at = classic.link_field(l) + ".";
    const std::string level = classic.link_name(l);
    const std::string where = "where the topology has " + level + " links";
    auto link = [l](auto& s) -> auto& { return s.topology.links[l]; };
    t.push_back(number(
                    at + "gbytes_per_s", "GB/s", 1e-3, 1e6, [link](auto& s) -> auto& { return link(s).gbytes_per_s; },
                    "bandwidth of one " + level + " link, per direction")
                    .required()
                    .applies(level_applies(l), where)
                    .classic_only()
                    .range_note("at least 1/4096 of the fastest link")
                    .f);
    t.push_back(number(
                    at + "latency_ns", "ns", 0, 1e6, [link](auto& s) -> auto& { return link(s).latency_ns; },
                    "latency of one " + level + " hop")
                    .applies(level_applies(l), where)
                    .classic_only()
                    .range_note("at most 4096 NoC cycles")
                    .f);
    t.push_back(number(
                    at + "pj_per_bit", "pJ/bit", 0, 1e3, [link](auto& s) -> auto& { return link(s).pj_per_bit; },
                    "energy of one " + level + " hop")
                    .applies(level_applies(l), where)
                    .classic_only()
                    .f);
  }
}

void add_cost(std::vector<HardwareField>& t) {
  t.push_back(choice("cost.static_power", 2, static_power_name, AT(cost.static_power),
                     "static power: `scaled` from the area and capacity coefficients below, so that it follows "
                     "the design point; `fixed`: `compute.static_w` and `memory.background_w` per node "
                     "(docs/MODEL.md \"Area and power\")")
                  .default_note("`fixed` when the description gives `compute.static_w` or `memory.background_w`, or "
                                "has no `cost` object; the presets but the GPU ones are `scaled`")
                  .f);
  auto coef = [&t](const std::string& key, const std::string& unit, double hi, auto at, const std::string& doc) {
    t.push_back(number("cost." + key, unit, 0, hi, at, doc).f);
  };
  coef("logic_mm2_per_tflops", "mm^2/(TFLOP/s)", 1e4, AT(cost.logic_mm2_per_tflops),
       "compute logic area per peak TFLOP/s (whole dies: their caches and I/O included)");
  coef("logic_static_w_per_mm2", "W/mm^2", 100, AT(cost.logic_static_w_per_mm2),
       "`scaled`: leakage and idle power of logic (compute, router buffers) per mm^2");
  coef("sram_mib", "MiB", 1e6, AT(cost.sram_mib),
       "on-chip SRAM per node beyond the logic's own (area and leakage only: the timing model streams from DRAM)");
  coef("sram_mm2_per_mib", "mm^2/MiB", 100, AT(cost.sram_mm2_per_mib), "SRAM macro area");
  coef("sram_static_w_per_mib", "W/MiB", 10, AT(cost.sram_static_w_per_mib), "`scaled`: SRAM leakage");
  coef("dram_mm2_per_gib", "mm^2/GiB", 1e4, AT(cost.dram_mm2_per_gib),
       "DRAM die area per GiB of memory.capacity_bytes");
  coef("dram_background_w_per_gib", "W/GiB", 100, AT(cost.dram_background_w_per_gib),
       "`scaled`: DRAM background and refresh power per GiB");
  coef("buffer_mm2_per_mib", "mm^2/MiB", 100, AT(cost.buffer_mm2_per_mib),
       "router and network-interface flit buffers (every VC of every port, as the NoC sizes them)");
  coef("phy_mm2_per_gbytes_per_s", "mm^2/(GB/s)", 1, AT(cost.phy_mm2_per_gbytes_per_s),
       "PHY area of a link that leaves a die (every level but the finest), per GB/s sent or received: a node's "
       "PHY per such neighbour sends the link's bandwidth and receives it");
  coef("phy_static_fraction", "fraction", 1, AT(cost.phy_static_fraction),
       "`scaled`: idle power of such a link as a share of its full-rate power (bandwidth x pJ/bit)");
}

#undef AT

/// The order is the reading order, and validation's: a field's default_from and the topology sizes that
/// `applies` reads come before it, so that an invalid size is reported before any link field's
/// `applies` computes with it (Topology::die_of divides by the die's size).
std::vector<HardwareField> build_table() {
  std::vector<HardwareField> t;
  add_labels_and_topology(t);
  add_compute(t);
  add_memory(t);
  add_noc(t);
  add_collectives(t);
  add_links(t);
  add_cost(t);
  return t;
}

}  // namespace

const std::vector<HardwareField>& hardware_fields() {
  static const std::vector<HardwareField> table = build_table();
  return table;
}

const HardwareField* find_hardware_field(const std::string& path) {
  for (const HardwareField& f : hardware_fields())
    if (f.path == path) return &f;
  return nullptr;
}

}  // namespace nmpsim::hw
