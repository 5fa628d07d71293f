#include "nmpsim/mapping/registry.h"

#include <sstream>
#include <stdexcept>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::mapping {

nlohmann::json PlacementStrategy::resolve_options(const nlohmann::json& given, const std::string& where,
                                                  const StrategyContext&) const {
  const JsonFields f(given, where, "");
  f.no_unknown_keys();  // a strategy without options accepts none
  return nlohmann::json::object();
}

void Registry::add(std::unique_ptr<PlacementStrategy> s) {
  const std::string name = s->name();
  if (!is_valid_name(name) || name == "all") throw std::logic_error("registry: bad strategy name '" + name + "'");
  if (strategy(name)) throw std::logic_error("registry: strategy '" + name + "' registered twice");
  strategies_.push_back(std::move(s));
}

void Registry::add(PolicyFactory p) {
  if (!is_valid_name(p.name)) throw std::logic_error("registry: bad policy name '" + p.name + "'");
  if (policy(p.name)) throw std::logic_error("registry: policy '" + p.name + "' registered twice");
  if (!p.create || !p.resolve) throw std::logic_error("registry: policy '" + p.name + "' needs create and resolve");
  policies_.push_back(std::move(p));
}

void Registry::add(AccountingFactory a) {
  if (!is_valid_name(a.name)) throw std::logic_error("registry: bad accounting name '" + a.name + "'");
  if (accounting(a.name)) throw std::logic_error("registry: accounting '" + a.name + "' registered twice");
  if (!a.account || !a.resolve)
    throw std::logic_error("registry: accounting '" + a.name + "' needs account and resolve");
  accountings_.push_back(std::move(a));
}

void Registry::add(PlannerFactory p) {
  if (!is_valid_name(p.name)) throw std::logic_error("registry: bad planner name '" + p.name + "'");
  if (planner(p.name)) throw std::logic_error("registry: planner '" + p.name + "' registered twice");
  if (!p.create) throw std::logic_error("registry: planner '" + p.name + "' needs create");
  planners_.push_back(std::move(p));
}

void Registry::add(HardwareReport r) {
  if (!is_valid_name(r.name)) throw std::logic_error("registry: bad report name '" + r.name + "'");
  if (hardware_report(r.name)) throw std::logic_error("registry: report '" + r.name + "' registered twice");
  if (!r.report) throw std::logic_error("registry: report '" + r.name + "' needs report");
  hardware_reports_.push_back(std::move(r));
}

void Registry::add(PlacementTool t) {
  if (!is_valid_name(t.name)) throw std::logic_error("registry: bad tool name '" + t.name + "'");
  for (const auto& u : placement_tools_)
    if (u.name == t.name) throw std::logic_error("registry: tool '" + t.name + "' registered twice");
  if (!t.run) throw std::logic_error("registry: tool '" + t.name + "' needs run");
  placement_tools_.push_back(std::move(t));
}

void Registry::add_default_strategy(const std::string& name) {
  if (!strategy(name)) throw std::logic_error("registry: default strategy '" + name + "' is not registered");
  default_strategies_.push_back(name);
}

std::string Registry::default_strategies() const {
  std::string out;
  for (const std::string& n : default_strategies_) out += (out.empty() ? "" : ",") + n;
  return out;
}

const PlannerFactory* Registry::planner(const std::string& name) const {
  for (const auto& p : planners_)
    if (p.name == name) return &p;
  return nullptr;
}

std::unique_ptr<DispatchPlanner> Registry::make_planner(const Placement& p, const Topology& topology,
                                                        const Groups& groups) const {
  if (p.dispatch.empty()) return nullptr;
  const std::string name = p.dispatch.at("name").get<std::string>();
  const std::string where = "placement '" + p.strategy + "': dispatch";
  const PlannerFactory* f = planner(name);
  if (!f)
    throw InputError(where + ": unknown planner '" + name + "' (known: " + [&] {
      std::string known;
      for (const auto& q : planners_) known += (known.empty() ? "" : ", ") + q.name;
      return known.empty() ? std::string("none") : known;
    }() + ")");
  return f->create(p.dispatch.at("options"), topology, groups, where + " '" + name + "'");
}

const HardwareReport* Registry::hardware_report(const std::string& name) const {
  for (const auto& r : hardware_reports_)
    if (r.name == name) return &r;
  return nullptr;
}

const AccountingFactory* Registry::accounting(const std::string& name) const {
  for (const auto& a : accountings_)
    if (a.name == name) return &a;
  return nullptr;
}

std::vector<std::string> Registry::accounting_names() const {
  std::vector<std::string> out;
  for (const auto& a : accountings_) out.push_back(a.name);
  return out;
}

const PlacementStrategy* Registry::strategy(const std::string& name) const {
  for (const auto& s : strategies_)
    if (s->name() == name) return s.get();
  return nullptr;
}

const PolicyFactory* Registry::policy(const std::string& name) const {
  for (const auto& p : policies_)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> Registry::strategy_names() const {
  std::vector<std::string> out;
  for (const auto& s : strategies_) out.push_back(s->name());
  return out;
}

std::vector<std::string> Registry::policy_names() const {
  std::vector<std::string> out;
  for (const auto& p : policies_) out.push_back(p.name);
  return out;
}

namespace {
void describe_options(std::ostringstream& os, const std::vector<OptionDoc>& options) {
  for (const OptionDoc& o : options)
    os << "      " << o.name << " (default " << o.default_value << "): " << o.meaning << "\n";
}
/// Help text of registered entries with a name, a one-line description and documented options.
template <class Entry>
std::string describe_entries(const std::vector<Entry>& entries) {
  std::ostringstream os;
  for (const Entry& e : entries) {
    os << "  " << e.name << ": " << e.description << "\n";
    describe_options(os, e.options);
  }
  return os.str();
}
}  // namespace

std::string Registry::describe_strategies() const {
  std::ostringstream os;
  for (const auto& s : strategies_) {
    os << "  " << s->name() << ": " << s->description() << "\n";
    describe_options(os, s->options());
  }
  return os.str();
}

std::string Registry::describe_accountings() const { return describe_entries(accountings_); }

std::string Registry::describe_planners() const { return describe_entries(planners_); }

std::string Registry::describe_hardware_reports() const { return describe_entries(hardware_reports_); }

std::string Registry::describe_policies() const {
  std::ostringstream os;
  for (const auto& p : policies_) {
    os << "  " << p.name << ": " << p.description << (p.cycle_only ? " (cycle fidelity)" : "") << "\n";
    describe_options(os, p.options);
  }
  return os.str();
}

namespace {

class TpStrategy : public PlacementStrategy {
 public:
  std::string name() const override { return "tp"; }
  std::string description() const override { return "tensor parallel: every expert split evenly over all nodes"; }
  Placement build(const StrategyContext& ctx) const override { return make_tp(ctx.model, ctx.hw.topology.nodes()); }
};

class EpStrategy : public PlacementStrategy {
 public:
  std::string name() const override { return "ep"; }
  std::string description() const override {
    return "expert parallel: whole experts round-robin (with more nodes than experts, each expert split over its "
           "group)";
  }
  Placement build(const StrategyContext& ctx) const override { return make_ep(ctx.model, ctx.hw.topology.nodes()); }
};

class CbStrategy : public PlacementStrategy {
 public:
  std::string name() const override { return "cb"; }
  std::string description() const override {
    return "hybrid compute-balanced (HD-MoE's baseline): experts to mesh regions by greedy LPT on the profile, TP "
           "inside a region";
  }
  std::vector<OptionDoc> options() const override {
    return {{"regions", "0", "mesh regions (0: 2 for models with <= 8 experts, else 8, reduced until they tile)"}};
  }
  std::vector<FlagAlias> flag_aliases() const override {
    return {{"cb-regions", "regions", "same as --strategy-opt cb.regions=N (0 = 2 for <= 8 experts, else 8)"}};
  }
  nlohmann::json resolve_options(const nlohmann::json& given, const std::string& where,
                                 const StrategyContext& ctx) const override {
    const JsonFields f(given, where, "");
    long long regions = f.integer("regions", 0, ctx.hw.topology.nodes(), 0);
    f.no_unknown_keys();
    if (regions == 0) regions = default_cb_regions(ctx.model, ctx.hw.topology);
    return {{"regions", regions}};
  }
  Placement build(const StrategyContext& ctx) const override {
    return make_cb(ctx.model, ctx.hw.topology, ctx.profile, ctx.options.at("regions").get<int>());
  }
};

}  // namespace

void register_baselines(Registry& r) {
  r.add(std::make_unique<TpStrategy>());
  r.add(std::make_unique<EpStrategy>());
  r.add(std::make_unique<CbStrategy>());
  for (const char* n : {"tp", "ep", "cb"}) r.add_default_strategy(n);
}

}  // namespace nmpsim::mapping
