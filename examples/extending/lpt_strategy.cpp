#include "lpt_strategy.h"

#include <algorithm>
#include <numeric>

namespace nmpsim::methods::extending_example {

std::vector<int> lpt_assign(const std::vector<double>& w, int bins) {
  std::vector<int> order(w.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return w[a] > w[b]; });
  std::vector<double> load(static_cast<size_t>(bins), 0.0);
  std::vector<int> bin(w.size(), 0);
  for (int i : order) {
    const int b = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    bin[i] = b;
    load[b] += w[i];
  }
  return bin;
}

mapping::Placement LptStrategy::build(const mapping::StrategyContext& ctx) const {
  const mapping::ModelSpec& m = ctx.model;
  const int nodes = ctx.hw.topology.nodes();
  if (nodes > m.experts) return mapping::make_ep(m, nodes);  // every expert gets nodes of its own anyway
  mapping::Placement p(name(), m.experts, nodes, m.moe_layers);
  for (int l = 0; l < m.moe_layers; ++l) {
    const std::vector<int> node = lpt_assign(ctx.profile.frequencies(l % ctx.profile.layers()), nodes);
    for (int e = 0; e < m.experts; ++e) p.at(l, e, node[e]) = 1.0;
  }
  p.validate(name());
  return p;
}

}  // namespace nmpsim::methods::extending_example
