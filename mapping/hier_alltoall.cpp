#include "mapping/hier_alltoall.h"

#include <map>

#include "mapping/json_fields.h"

namespace nmpsim::mapping {

std::vector<HierStage> hierarchical_stages(const Hierarchy& h, int d, bool dedup, const std::vector<int>& home,
                                           const std::vector<std::vector<std::pair<int, int>>>& dest,
                                           double token_bytes, double hidden) {
  const int n = h.nodes();
  if (d < 2 || d > h.dimensions())
    throw InputError("hierarchical all-to-all: dimension " + std::to_string(d) + " outside 2.." +
                     std::to_string(h.dimensions()));
  std::vector<HierStage> stages(static_cast<size_t>(d));
  for (int s = 0; s < d; ++s) {
    HierStage& st = stages[static_cast<size_t>(s)];
    st.name = s + 1 < d ? "inter_" + h.levels[static_cast<size_t>(s)].name : "intra";
    st.dispatch.assign(static_cast<size_t>(n) * n, 0.0);
    st.combine.assign(static_cast<size_t>(n) * n, 0.0);
    st.reduce_flops.assign(static_cast<size_t>(n), 0.0);
  }
  auto send = [&](HierStage& st, int from, int to, double copies) {
    if (from == to || copies <= 0) return;
    st.dispatch[static_cast<size_t>(from) * n + to] += copies * token_bytes;
    st.combine[static_cast<size_t>(to) * n + from] += copies * token_bytes;
    st.reduce_flops[static_cast<size_t>(from)] += copies * hidden;  // `from` sums what comes back
  };
  for (size_t t = 0; t < dest.size(); ++t) {
    std::map<int, int> relay{{0, home[t]}};  // group at the previous level -> the token's copy there
    for (int i = 1; i < d; ++i) {
      std::map<int, int> next;
      HierStage& st = stages[static_cast<size_t>(i - 1)];
      for (const auto& [v, experts] : dest[t]) {
        const int parent = relay.at(h.group_of(v, i - 1)), g = h.group_of(v, i);
        const int target = h.member(i, g, h.rank_of[static_cast<size_t>(parent)] % h.group_size(i));
        const bool first = next.emplace(g, target).second;
        send(st, parent, target, dedup ? (first ? 1.0 : 0.0) : double(experts));
      }
      relay = std::move(next);
    }
    for (const auto& [v, experts] : dest[t])
      send(stages.back(), relay.at(h.group_of(v, d - 1)), v, dedup ? 1.0 : double(experts));
  }
  return stages;
}

}  // namespace nmpsim::mapping
