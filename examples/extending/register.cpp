// The folder's registration: what methods::register_all() calls once the folder sits under methods/.
#include "register.h"

#include "lpt_strategy.h"
#include "telemetry_policy.h"

namespace nmpsim::methods::extending_example {

void register_methods(mapping::Registry& r) {
  r.add(std::make_unique<LptStrategy>());
  r.add(telemetry_factory());
}

}  // namespace nmpsim::methods::extending_example
