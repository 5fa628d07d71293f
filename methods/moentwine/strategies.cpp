// MoEntwine's placement strategies as registered: "moentwine-baseline", "moentwine-er" and
// "moentwine-her" (several wafers). All place the experts as EP does and lay out the attention TP
// groups and full token domains (ftd_layout.h); the run then sends each token to an expert from its
// token ring's member in the expert's domain.
#include <cstdio>
#include <memory>

#include "nmpsim/mapping/registry.h"
#include "nmpsim/methods/moentwine/ftd_layout.h"
#include "nmpsim/methods/moentwine/ni_balancer.h"
#include "nmpsim/methods/moentwine/token_domain_dispatch.h"

namespace nmpsim::methods::moentwine {

using namespace nmpsim::mapping;  // the base layer this method builds on

namespace {

nlohmann::json to_json(const FtdStats& s) {
  return {{"area", s.area},
          {"avg_hops", s.avg_hops},
          {"overlap", s.overlap},
          {"max_link_pair_loads", s.max_link_pair_loads},
          {"ring_step_hops", s.ring_step_hops},
          {"pair_hops_through_other_ftds", s.pair_hops_through_other_ftds}};
}

class MappingStrategy : public PlacementStrategy {
 public:
  explicit MappingStrategy(Mapping m) : m_(m) {}
  std::string name() const override {
    if (m_ == Mapping::kBaseline) return "moentwine-baseline";
    return m_ == Mapping::kEntwined ? "moentwine-er" : "moentwine-her";
  }
  std::string description() const override {
    if (m_ == Mapping::kBaseline)
      return "MoEntwine's baseline: EP experts, compact attention TP groups, all-to-all inside the (large, "
             "overlapping) full token domains";
    if (m_ == Mapping::kEntwined)
      return "MoEntwine ER-mapping: EP experts, compact full token domains, TP groups entwined across them "
             "(multi-hop ring steps)";
    return "MoEntwine HER-mapping (several wafers): ER inside each wafer, every wafer one token domain fed by an "
           "all-gather across wafers";
  }
  Placement build(const StrategyContext& ctx) const override {
    const Topology& t = ctx.hw.topology;
    const TokenDomains d = token_domains(t, ctx.attn_tp > 0 ? ctx.attn_tp : t.nodes(), m_);
    Placement p = make_ep(ctx.model, t.nodes());
    p.strategy = name();
    p.tp_rings = d.tp.ring;
    p.dispatch = token_domain_dispatch_json(d.ftd_of, d.token_rings);
    p.stats = {{"ftd", to_json(ftd_stats(t, d))}, {"mapping", mapping_name(m_)}};
    return p;
  }
  std::vector<std::string> summary(const Placement& p) const override {
    if (!p.stats.contains("ftd")) return {};
    const nlohmann::json& f = p.stats.at("ftd");
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s: %zu TP groups of %zu, full token domains of %d-node area, %.3f hops on average, %s, busiest "
                  "link %d pair messages, TP ring steps up to %d hops",
                  name().c_str(), p.tp_rings.size(), p.tp_rings.empty() ? 0 : p.tp_rings[0].size(),
                  f.at("area").get<int>(), f.at("avg_hops").get<double>(),
                  f.at("overlap").get<bool>() ? "overlapping" : "disjoint", f.at("max_link_pair_loads").get<int>(),
                  f.at("ring_step_hops").get<int>());
    return {line};
  }

 private:
  Mapping m_;
};

}  // namespace

void register_methods(Registry& r) {
  r.add(std::make_unique<MappingStrategy>(Mapping::kBaseline));
  r.add(std::make_unique<MappingStrategy>(Mapping::kEntwined));
  r.add(std::make_unique<MappingStrategy>(Mapping::kHierarchical));
  register_balancer(r);
  r.add(token_domain_planner());
}

}  // namespace nmpsim::methods::moentwine
