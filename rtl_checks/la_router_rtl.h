// The Verilated look-ahead router (rtl/la_router.sv, Verilated to plain C++) behind the
// noc::LaCore interface, so the same adapter (noc::ValidStopAdapter) and the same lock-step checks
// drive it and its cycle model (noc::LaRouterModel).
#pragma once

#include <functional>
#include <memory>

#include "nmpsim/noc/la_router.h"
#include "nmpsim/noc/pin_mesh.h"

namespace nmpsim::rtl {

/// The FIFO depth the RTL was Verilated with (CMake NMPSIM_RTL_LA_MAX_DEPTH).
int la_rtl_max_depth();
/// Throws noc::ConfigError (one line) when `depth` flits per input exceed that capacity.
void check_la_rtl_fits(int depth);
/// The RTL at `node` with `depth` flits per input FIFO.
std::unique_ptr<noc::LaCore> make_la_rtl(int node, const noc::MeshGeometry& geo, int depth);

/// Look-ahead RTL routers (behind noc::ValidStopAdapter) at every node.
noc::RouterFactory la_rtl_factory();
/// Look-ahead RTL routers where rtl_at(node), the look-ahead cycle model elsewhere.
noc::RouterFactory la_mixed_factory(std::function<bool(int node)> rtl_at);

}  // namespace nmpsim::rtl
