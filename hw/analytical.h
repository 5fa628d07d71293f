// The analytical view of a hardware description, for the flow back end, the cost models and the
// optimisers: plain C++, no SystemC (library nmpsim_hw_spec), so that what only needs analytic numbers
// does not link the simulator.
#pragma once

#include "nmpsim/hw/hardware_spec.h"
#include "nmpsim/mapping/analytical_hardware.h"

namespace nmpsim::hw {

/// The numbers of `spec` the analytical models use (docs/MODEL.md "Flow-level model").
mapping::AnalyticalHardware to_analytical(const HardwareSpec& spec);

}  // namespace nmpsim::hw
