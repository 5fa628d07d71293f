#include "nmpsim/methods/hiermoe/hier_alltoall.h"

#include <algorithm>
#include <map>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::methods::hiermoe {

using mapping::InputError;

std::vector<ExchangeStage> hierarchical_stages(const Hierarchy& h, int d, bool dedup, const std::vector<int>& home,
                                               const std::vector<std::vector<std::pair<int, int>>>& dest,
                                               double token_bytes, double hidden) {
  const int n = h.nodes();
  if (d < 2 || d > h.dimensions())
    throw InputError("hierarchical all-to-all: dimension " + std::to_string(d) + " outside 2.." +
                     std::to_string(h.dimensions()));
  std::vector<ExchangeStage> stages(static_cast<size_t>(d));
  for (int s = 0; s < d; ++s) {
    ExchangeStage& st = stages[static_cast<size_t>(s)];
    st.name = s + 1 < d ? "inter_" + h.levels[static_cast<size_t>(s)].name : "intra";
    st.dispatch.assign(static_cast<size_t>(n) * n, 0.0);
    st.combine.assign(static_cast<size_t>(n) * n, 0.0);
    st.reduce_flops.assign(static_cast<size_t>(n), 0.0);
  }
  auto send = [&](ExchangeStage& st, int from, int to, double copies) {
    if (from == to || copies <= 0) return;
    st.dispatch[static_cast<size_t>(from) * n + to] += copies * token_bytes;
    st.combine[static_cast<size_t>(to) * n + from] += copies * token_bytes;
    st.reduce_flops[static_cast<size_t>(from)] += copies * hidden;  // `from` sums what comes back
  };
  for (size_t t = 0; t < dest.size(); ++t) {
    std::map<int, int> relay{{0, home[t]}};  // group at the previous level -> the token's copy there
    for (int i = 1; i < d; ++i) {
      std::map<int, int> next;
      ExchangeStage& st = stages[static_cast<size_t>(i - 1)];
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

void HierarchicalDispatch::plan(const mapping::DispatchInputs& in, mapping::LayerPlan& p) const {
  mapping::DirectDispatch().plan(in, p);
  if (d_ <= 1 && dedup_) return;
  const int N = p.nodes;
  std::vector<std::vector<std::pair<int, int>>> dest(p.home.size());
  std::vector<int> experts_on(static_cast<size_t>(N), 0);
  for (size_t i = 0; i < p.home.size(); ++i) {
    const uint16_t* ex = in.experts_of(static_cast<int>(i));
    for (int k = 0; k < in.top_k(); ++k)
      for (int v = 0; v < N; ++v)
        if (in.rows[ex[k]][static_cast<size_t>(v)] > 0 && experts_on[static_cast<size_t>(v)]++ == 0)
          dest[i].push_back({v, 0});
    for (auto& [v, count] : dest[i]) {
      count = experts_on[static_cast<size_t>(v)];
      experts_on[static_cast<size_t>(v)] = 0;
    }
  }
  if (d_ <= 1) {  // flat, one copy per expert: the direct dispatch's traffic plus each extra expert's copy
    const double tb = in.model.token_bytes(), hidden = static_cast<double>(in.model.hidden);
    for (size_t i = 0; i < p.home.size(); ++i)
      for (const auto& [v, experts] : dest[i]) {
        const int h = p.home[i];
        if (experts < 2) continue;
        p.reduce_flops[static_cast<size_t>(h)] += (experts - 1) * hidden;  // the home sums every copy's partial
        if (v == h) continue;
        p.dispatch[static_cast<size_t>(h) * N + v] += (experts - 1) * tb;
        p.combine[static_cast<size_t>(v) * N + h] += (experts - 1) * tb;
      }
    return;
  }
  p.stages =
      hierarchical_stages(*h_, d_, dedup_, p.home, dest, in.model.token_bytes(), static_cast<double>(in.model.hidden));
  std::fill(p.dispatch.begin(), p.dispatch.end(), 0.0);
  std::fill(p.combine.begin(), p.combine.end(), 0.0);
  std::fill(p.reduce_flops.begin(), p.reduce_flops.end(), 0.0);
}

}  // namespace nmpsim::methods::hiermoe
