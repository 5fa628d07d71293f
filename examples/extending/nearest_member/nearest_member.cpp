#include "nearest_member.h"

#include <cstdlib>

#include "nmpsim/base/json_fields.h"

namespace nmpsim::methods::nearest_member {

NearestMemberDispatch::NearestMemberDispatch(const mapping::Topology& t, const mapping::Groups& groups)
    : groups_(groups), nodes_(groups.group_of.size()) {
  nearest_.assign(groups_.ring.size() * nodes_, -1);
  for (size_t g = 0; g < groups_.ring.size(); ++g)
    for (size_t v = 0; v < nodes_; ++v) {
      int best = -1, best_hops = 0;
      for (int m : groups_.ring[g]) {  // fewest hops, then the lower id
        const int hops = std::abs(t.x(m) - t.x(static_cast<int>(v))) + std::abs(t.y(m) - t.y(static_cast<int>(v)));
        if (best < 0 || hops < best_hops || (hops == best_hops && m < best)) {
          best = m;
          best_hops = hops;
        }
      }
      nearest_[g * nodes_ + v] = best;
    }
}

mapping::PlannerFactory nearest_member_planner() {
  mapping::PlannerFactory f;
  f.name = "nearest-member";
  f.description = "tokens gathered in their attention group, each sent from the group's member nearest its expert";
  f.create = [](const nlohmann::json& options, const mapping::Topology& t, const mapping::Groups& groups,
                const std::string& where) -> std::unique_ptr<mapping::DispatchPlanner> {
    base::JsonFields(options, where, "").no_unknown_keys();  // no options
    return std::make_unique<NearestMemberDispatch>(t, groups);
  };
  return f;
}

}  // namespace nmpsim::methods::nearest_member
