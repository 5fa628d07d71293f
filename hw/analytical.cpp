#include "nmpsim/hw/analytical.h"

namespace nmpsim::hw {

mapping::AnalyticalHardware to_analytical(const HardwareSpec& spec) {
  mapping::AnalyticalHardware a;
  a.topology = spec.topology;
  a.peak_flops = spec.compute.peak_flops;
  a.startup_s = spec.compute.startup_ns * 1e-9;
  a.memory_bytes_per_s = spec.memory.streaming_bytes_per_s();
  a.memory_first_access_s = (spec.memory.t_rcd_ns + spec.memory.t_cl_ns) * 1e-9;
  a.element_bytes = spec.compute.element_bytes;
  a.clock_hz = spec.noc.clock_ghz * 1e9;
  a.flit_bytes = spec.flit_bytes();
  a.router_delay_cycles = spec.noc.router_delay_cycles;
  const noc::NocConfig nc = spec.noc_config();
  a.ni_queues = nc.ni_queue_count();
  a.ni_ports = nc.ni_ports;
  a.buffer_flits = nc.buffer_flits;
  a.vcs = spec.noc.vcs;
  a.copy_chunk_bytes = spec.compute.copy_chunk_bytes;
  a.broadcast_window_chunks = static_cast<int>(spec.compute.broadcast_window_chunks);
  a.flow_link_efficiency = spec.noc.flow_link_efficiency;
  a.flow_resolve_fraction = spec.noc.flow_resolve_fraction;
  a.replay_sessions = spec.noc.replay_sessions;
  a.grouped_experts = spec.compute.grouped_experts;
  a.reduce = spec.collectives.reduce;
  a.rings = spec.collectives.algorithm;
  a.gradient_rings = spec.collectives.gradients;
  a.pipeline_chunks = spec.collectives.pipeline_chunks;
  return a;
}

}  // namespace nmpsim::hw
