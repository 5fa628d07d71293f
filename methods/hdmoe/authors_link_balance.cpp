#include "nmpsim/methods/hdmoe/authors_link_balance.h"

#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "nmpsim/methods/hdmoe/authors_accounting.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

namespace {
/// Shares `P` moved by `map`: P'[i, map[d]] = P[i, d].
std::vector<double> moved(const std::vector<double>& P, const std::vector<int>& map) {
  const size_t D = map.size();
  std::vector<double> out(P.size());
  for (size_t i = 0; i < P.size() / D; ++i)
    for (size_t d = 0; d < D; ++d) out[i * D + static_cast<size_t>(map[d])] = P[i * D + d];
  return out;
}

double layer_comm_s(const std::vector<double>& P, const std::vector<int>& map, const AuthorsGroups& groups,
                    const ModelSpec& m, const AnalyticalHardware& hw, int l, const HdmoeOptions& opt) {
  const int D = hw.topology.nodes();
  const std::vector<double> Pm = moved(P, map);
  std::vector<int> cell(static_cast<size_t>(D));
  std::iota(cell.begin(), cell.end(), 0);  // P is on cells already
  const double W = hw.topology.links[0].gbytes_per_s * 1e9;
  double sum = 0;
  for (int draw = 0; draw < kAuthorsLinkDraws; ++draw) {
    Rng rng(opt.seed * 1000003ULL + static_cast<uint64_t>(l) * kAuthorsLinkDraws + static_cast<uint64_t>(draw));
    sum += store_and_forward_makespan(hw.topology, authors_messages(Pm, D, groups, opt.batch, m.hidden, cell, rng), W);
  }
  return sum / kAuthorsLinkDraws;
}
}  // namespace

double authors_layer_comm_s(const std::vector<double>& P, const std::vector<int>& map, const ModelSpec& m,
                            const AnalyticalHardware& hw, const RoutingTrace& profile, int l, const HdmoeOptions& opt) {
  return layer_comm_s(P, map, authors_groups(profile, l % profile.layers()), m, hw, l, opt);
}

Placement with_authors_link_balance(Placement p, const ModelSpec& m, const AnalyticalHardware& hw,
                                    const RoutingTrace& profile, const HdmoeOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const int D = hw.topology.nodes();
  for (int n = 0; n < D; ++n)
    if (p.node_map[static_cast<size_t>(n)].value() != n)
      throw std::logic_error("authors link balance: the node-balance placement must have the identity node map");
  p.strategy = "hdmoe";
  nlohmann::json layers = nlohmann::json::array();
  double before = 0, after = 0;
  int searched = 0;
  for (int l = 0; l < m.moe_layers; ++l) {
    const std::vector<double> P = p.share[static_cast<size_t>(l)];
    if (authors_tp_shaped(P, D)) {
      layers.push_back({{"layer", l}, {"tp", true}});
      continue;
    }
    const AuthorsGroups groups = authors_groups(profile, l % profile.layers());
    const MappingCost cost(D, [&](const std::vector<int>& map) { return layer_comm_s(P, map, groups, m, hw, l, opt); });
    MappingResult r;
    switch (opt.mapper) {
      case Mapper::kAnnealing:
        r = map_annealing(cost, opt.evaluations, opt.seed + static_cast<uint64_t>(l));
        break;
      case Mapper::kRandom:
        r = map_random(cost, opt.evaluations, opt.seed + static_cast<uint64_t>(l));
        break;
      case Mapper::kBayesian:
        r = map_bayesian(cost, opt.evaluations, opt.seed + static_cast<uint64_t>(l), hw.topology);
        break;
    }
    p.share[static_cast<size_t>(l)] = moved(P, r.node_map);
    before += r.identity_cost;
    after += r.cost;
    ++searched;
    layers.push_back({{"layer", l}, {"identity_cost_us", r.identity_cost * 1e6}, {"best_cost_us", r.cost * 1e6}});
  }
  p.solver["link_balance"] = {
      {"method", std::string(mapper_name(opt.mapper)) + ", per layer, the authors' store-and-forward cost"},
      {"cost", "authors"},
      {"evaluations", opt.evaluations},
      {"layers_searched", searched},
      {"identity_cost_us", before * 1e6},
      {"best_cost_us", after * 1e6},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
      {"layers", layers}};
  p.validate("hdmoe");
  return p;
}

}  // namespace nmpsim::methods::hdmoe
