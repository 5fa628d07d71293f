// HierMoE's entry in the registry (called by the generated methods::register_all).
#include "methods/hiermoe/alltoall_policy.h"

namespace nmpsim::methods::hiermoe {

void register_methods(mapping::Registry& r) { register_alltoall(r); }

}  // namespace nmpsim::methods::hiermoe
