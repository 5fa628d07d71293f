// HD-MoE's entry in the registry (called by the generated methods::register_all).
#include "nmpsim/methods/hdmoe/authors_accounting.h"
#include "nmpsim/methods/hdmoe/prebroadcast_policy.h"
#include "nmpsim/methods/hdmoe/strategies.h"

namespace nmpsim::methods::hdmoe {

void register_methods(mapping::Registry& r) {
  register_strategies(r);
  register_prebroadcast(r);
  register_authors_accounting(r);
}

}  // namespace nmpsim::methods::hdmoe
