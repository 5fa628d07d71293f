#include "rtl_checks/la_router_rtl.h"

#include <string>

#include "noc/valid_stop_adapter.h"
#include "rtl_checks/described_router.h"

namespace nmpsim::rtl {

namespace {
/// The look-ahead router as registered by rtl_checks/routers.cmake (its description, its glue).
const DescribedRouter& la() {
  const DescribedRouter* r = find_described_router("la");
  if (!r) throw std::logic_error("rtl: the look-ahead router 'la' is not registered (rtl_checks/routers.cmake)");
  return *r;
}
}  // namespace

int la_rtl_max_depth() { return la().description.max_buffer_flits; }

void check_la_rtl_fits(int depth) {
  if (depth < 1 || depth > la_rtl_max_depth())
    throw noc::ConfigError("noc: the look-ahead RTL router holds 1.." + std::to_string(la_rtl_max_depth()) +
                           " flits per input, not " + std::to_string(depth) +
                           " (noc.buffer_flits; max_buffer_flits in rtl_checks/rtl/la_router.json)");
}

std::unique_ptr<noc::LaCore> make_la_rtl(int node, const noc::MeshGeometry& geo, int depth) {
  check_la_rtl_fits(depth);
  return std::make_unique<DescribedCore>(la(), node, geo, depth);
}

noc::RouterFactory la_mixed_factory(std::function<bool(int node)> rtl_at) {
  return described_factory("la", std::move(rtl_at), noc::la_model_factory());
}

noc::RouterFactory la_rtl_factory() {
  return la_mixed_factory([](int) { return true; });
}

}  // namespace nmpsim::rtl
