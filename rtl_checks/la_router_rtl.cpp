#include "nmpsim/rtl_checks/la_router_rtl.h"

#include <string>

#include "nmpsim/noc/valid_stop_adapter.h"
#include "nmpsim/rtl_checks/described_router.h"

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

void check_la_rtl_fits(int depth) { check_fits(la(), depth); }

std::unique_ptr<noc::LaCore> make_la_rtl(int node, const noc::MeshGeometry& geo, int depth) {
  return std::make_unique<DescribedCore>(la(), node, geo, depth);  // checks the depth
}

noc::RouterFactory la_mixed_factory(std::function<bool(int node)> rtl_at) {
  return described_factory("la", std::move(rtl_at), noc::la_model_factory());
}

noc::RouterFactory la_rtl_factory() {
  return la_mixed_factory([](int) { return true; });
}

}  // namespace nmpsim::rtl
