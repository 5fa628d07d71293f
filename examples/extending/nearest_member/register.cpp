// The folder's registration: what methods::register_all() calls once the folder sits under methods/.
#include "nearest_member.h"
#include "nmpsim/mapping/registry.h"

namespace nmpsim::methods::nearest_member {

void register_methods(mapping::Registry& r) { r.add(nearest_member_planner()); }

}  // namespace nmpsim::methods::nearest_member
