#include "rtl_checks/la_router_rtl.h"

#include <string>

#include "Vla_router.h"
#include "noc/valid_stop_adapter.h"
#include "rtl_checks/la_core_verilated.h"

#ifndef NMPSIM_RTL_LA_MAX_DEPTH
#error "NMPSIM_RTL_LA_MAX_DEPTH must be defined by the build (rtl_checks/CMakeLists.txt)"
#endif

namespace nmpsim::rtl {

int la_rtl_max_depth() { return NMPSIM_RTL_LA_MAX_DEPTH; }

void check_la_rtl_fits(int depth) {
  if (depth < 1 || depth > la_rtl_max_depth())
    throw noc::ConfigError("noc: the look-ahead RTL router holds 1.." + std::to_string(la_rtl_max_depth()) +
                           " flits per input, not " + std::to_string(depth) +
                           " (noc.buffer_flits; raise it with cmake -DNMPSIM_RTL_LA_MAX_DEPTH=N)");
}

std::unique_ptr<noc::LaCore> make_la_rtl(int node, const noc::MeshGeometry& geo, int depth) {
  check_la_rtl_fits(depth);
  return std::make_unique<VerilatedLaCore<Vla_router>>(node, geo, depth);
}

noc::RouterFactory la_mixed_factory(std::function<bool(int node)> rtl_at) {
  return [rtl_at = std::move(rtl_at)](const std::string& name,
                                      const noc::RouterParams& p) -> std::unique_ptr<noc::RouterPins> {
    if (!rtl_at(p.node)) return noc::la_model_factory()(name, p);
    return std::make_unique<noc::ValidStopAdapter>(name.c_str(), p, make_la_rtl(p.node, p.geo, p.buffer_flits),
                                                   "la-rtl");
  };
}

noc::RouterFactory la_rtl_factory() {
  return la_mixed_factory([](int) { return true; });
}

}  // namespace nmpsim::rtl
