// The folder's entry point: methods::register_all() calls it once the folder sits under methods/.
#pragma once

#include "nmpsim/mapping/registry.h"

namespace nmpsim::methods::extending_example {

void register_methods(mapping::Registry& r);

}  // namespace nmpsim::methods::extending_example
