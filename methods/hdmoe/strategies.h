// Registration of HD-MoE's placement strategies ("hdmoe-node", "hdmoe").
#pragma once

#include "nmpsim/mapping/registry.h"

namespace nmpsim::methods::hdmoe {

void register_strategies(mapping::Registry& r);

}  // namespace nmpsim::methods::hdmoe
