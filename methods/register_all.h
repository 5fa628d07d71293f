// Every placement strategy and runtime policy nmpsim has: the baselines of mapping/ and every method
// folder under methods/ (generated, methods/CMakeLists.txt).
#pragma once

#include "nmpsim/mapping/registry.h"

namespace nmpsim::methods {

/// Registers the baselines (tp, ep, cb), then each method folder's strategies and policies.
void register_all(mapping::Registry& r);

}  // namespace nmpsim::methods
