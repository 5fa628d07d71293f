#include "nmpsim/mapping/analytical_hardware.h"

#include <algorithm>

namespace nmpsim::mapping {

nlohmann::json analytical_to_json(const AnalyticalHardware& hw) {
  const Topology& t = hw.topology;
  nlohmann::json links = nlohmann::json::array(), levels = nlohmann::json::array();
  for (int l = 0; l < t.num_levels(); ++l) {
    const LinkParams& p = t.links[static_cast<size_t>(l)];
    links.push_back({p.gbytes_per_s, p.latency_ns, p.pj_per_bit});
    levels.push_back({t.levels[static_cast<size_t>(l)].name, t.level_width(l), t.level_height(l)});
  }
  nlohmann::json j = {{"mesh", {t.width, t.height}}};
  if (t.classic) {  // the classic form's key as before this form had a name (cached solves stay valid)
    j["die"] = {t.die().width, t.die().height};
    j["wafer"] = {t.wafer().width, t.wafer().height};
  } else {
    j["levels"] = levels;
  }
  j["links"] = links;
  j.update(nlohmann::json{{"peak_flops", hw.peak_flops},
                          {"startup_s", hw.startup_s},
                          {"memory_bytes_per_s", hw.memory_bytes_per_s},
                          {"memory_first_access_s", hw.memory_first_access_s},
                          {"element_bytes", hw.element_bytes},
                          {"clock_hz", hw.clock_hz},
                          {"flit_bytes", hw.flit_bytes},
                          {"router_delay_cycles", hw.router_delay_cycles},
                          {"ni_queues", hw.ni_queues},
                          {"ni_ports", hw.ni_ports},
                          {"buffer_flits", hw.buffer_flits},
                          {"vcs", hw.vcs},
                          {"copy_chunk_bytes", hw.copy_chunk_bytes},
                          {"broadcast_window_chunks", hw.broadcast_window_chunks},
                          {"flow_link_efficiency", hw.flow_link_efficiency},
                          {"flow_resolve_fraction", hw.flow_resolve_fraction},
                          {"grouped_experts", hw.grouped_experts},
                          {"reduce", reduce_mode_name(hw.reduce)},
                          {"rings", ring_algorithm_name(hw.rings)},
                          {"gradient_rings", ring_algorithm_name(hw.gradient_rings)},
                          {"pipeline_chunks", hw.pipeline_chunks}});
  return j;
}

double compute_seconds(const AnalyticalHardware& hw, double flops, double bytes) {
  if (flops <= 0 && bytes <= 0) return 0.0;
  const double mem = bytes > 0 ? hw.memory_first_access_s + bytes / hw.memory_bytes_per_s : 0.0;
  return hw.startup_s + std::max(flops / hw.peak_flops, mem);
}

}  // namespace nmpsim::mapping
