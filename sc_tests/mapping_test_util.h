// Helpers shared by the mapping-layer tests.
#pragma once

#include <vector>

#include "nmpsim/mapping/analytical_hardware.h"
#include "nmpsim/mapping/moe_model.h"
#include "nmpsim/mapping/trace.h"

namespace nmpsim::mapping::testing {

/// A synthetic trace shaped like the model (its MoE layers, experts and top-k).
inline RoutingTrace trace_for(const ModelSpec& m, double skew, size_t tokens) {
  SyntheticTraceConfig c;
  c.layers = m.moe_layers;
  c.experts = m.experts;
  c.top_k = m.top_k;
  c.tokens = tokens;
  c.zipf_s = skew;
  return synthetic_trace(c);
}

/// hidden 8, 2 heads of 4, 1 KV head, 2 experts of intermediate 4 (top-1), FP16 everywhere: small
/// enough for FLOPs and bytes by hand.
inline ModelSpec hand_model() {
  ModelSpec m;
  m.name = "hand";
  m.experts = 2;
  m.top_k = 1;
  m.moe_layers = 1;
  m.hidden = 8;
  m.intermediate = 4;
  m.attention.kind = "gqa";
  m.attention.heads = 2;
  m.attention.kv_heads = 1;
  m.attention.head_dim = 4;
  return m;
}

/// A w x h mesh of one die and one wafer (links at their defaults).
inline Topology mesh(int w, int h) {
  Topology t;
  t.width = t.die().width = t.wafer().width = w;
  t.height = t.die().height = t.wafer().height = h;
  return t;
}

/// The hardware the hand-computed expectations of these tests assume (AnalyticalHardware has no
/// defaults of its own): a 1x1 mesh of one 5 TFLOP/s node with 50 ns start-up, 593.75 GB/s streaming
/// memory (first access 28 ns), a 1 GHz NoC of 50-byte flits, 2 VCs of 8 flits, 2 injection queues, a
/// 2-cycle router, 256 KiB weight chunks with a window of 2, FP16 reductions, flow links at 90% when
/// contended, re-solved after 5% of the flows changed, session replay on.
inline AnalyticalHardware reference_hardware() {
  AnalyticalHardware hw;
  hw.peak_flops = 5e12;
  hw.startup_s = 50e-9;
  hw.memory_bytes_per_s = 593.75e9;
  hw.memory_first_access_s = 28e-9;
  hw.element_bytes = 2;
  hw.clock_hz = 1e9;
  hw.flit_bytes = 50;
  hw.router_delay_cycles = 2;
  hw.ni_queues = 2;
  hw.buffer_flits = 8;
  hw.vcs = 2;
  hw.copy_chunk_bytes = 262144;
  hw.broadcast_window_chunks = 2;
  hw.flow_link_efficiency = 0.9;
  hw.flow_resolve_fraction = 0.05;
  hw.replay_sessions = true;
  return hw;
}

/// A 1 GHz line of `nodes` routers with 50 GB/s links of 1 ns and 50-byte flits: one flit per cycle
/// on every link and NI channel.
inline AnalyticalHardware line_hardware(int nodes) {
  AnalyticalHardware hw = reference_hardware();
  hw.topology.width = hw.topology.die().width = hw.topology.wafer().width = nodes;
  hw.topology.links[0].gbytes_per_s = 50;
  hw.topology.links[0].latency_ns = 1;
  hw.flit_bytes = 50;
  hw.clock_hz = 1e9;
  return hw;
}

/// A w x h NMP mesh of one die: `tflops` per node, `gbps` links of 1 ns, one flit per cycle at 1 GHz.
inline AnalyticalHardware nmp_hardware(int w, int h, double tflops, double gbps) {
  AnalyticalHardware hw = reference_hardware();
  hw.topology.width = hw.topology.die().width = hw.topology.wafer().width = w;
  hw.topology.height = hw.topology.die().height = hw.topology.wafer().height = h;
  hw.topology.links[0].gbytes_per_s = gbps;
  hw.topology.links[0].latency_ns = 1;
  hw.peak_flops = tflops * 1e12;
  hw.flit_bytes = gbps;
  return hw;
}

/// The sum of a vector (per-link or per-node figures).
inline double total(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

/// A w x h mesh of single-node dies on wafers of ww x wh nodes.
inline Topology wafers(int w, int h, int ww, int wh) {
  Topology t = mesh(w, h);
  t.die().width = t.die().height = 1;
  t.wafer().width = ww;
  t.wafer().height = wh;
  return t;
}

}  // namespace nmpsim::mapping::testing
