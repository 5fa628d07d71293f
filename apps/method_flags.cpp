#include "nmpsim/apps/method_flags.h"

#include <algorithm>

#include "nmpsim/apps/cli_common.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

namespace {

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// "--F applies to the S strategy only" / "... to the strategies A, B only".
UsageError not_for(const std::string& flag, const std::vector<std::string>& who) {
  return UsageError("--" + flag + " applies to " +
                    (who.size() == 1 ? "the " + who[0] + " strategy" : "the strategies " + join(who)) + " only");
}

/// VALUE as JSON when it parses, else as a string (as --strategy-opt reads it).
nlohmann::json value_of(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? nlohmann::json(text) : j;
}

}  // namespace

MethodFlags::MethodFlags(const mapping::Registry& r, po::options_description& desc, bool outputs, bool policies) {
  auto add = [&](const std::string& flag, const std::string& help) {
    if (!values_.count(flag)) desc.add_options()(flag.c_str(), po::value(&values_[flag]), help.c_str());
  };
  for (const std::string& name : r.strategy_names()) {
    const mapping::PlacementStrategy* s = r.strategy(name);
    for (const mapping::FlagAlias& a : s->flag_aliases()) {
      add(a.flag, a.meaning);
      flags_[a.flag].owners.push_back(name);
      flags_[a.flag].option[name] = a.option;
    }
    if (!outputs) continue;
    for (const auto& o : s->extra_outputs()) {
      add(o.flag, o.meaning);
      outputs_[o.flag].push_back(name);
    }
  }
  for (const std::string& name : policies ? r.policy_names() : std::vector<std::string>{}) {
    const mapping::PolicyFactory* p = r.policy(name);
    for (const mapping::FlagAlias& a : p->flags) {
      add(a.flag, a.meaning);
      Flag& f = flags_[a.flag];
      f.policy = true;
      f.owners.push_back(name);
      f.option[name] = a.option;
    }
    if (!p->enable_flag.empty()) enable_[name] = p->enable_flag;
  }
}

void MethodFlags::strategy_options(const po::variables_map& vm, const std::vector<std::string>& names,
                                   SpecOptions& so) const {
  for (const auto& [flag, f] : flags_) {
    if (f.policy || !given(vm, flag.c_str())) continue;
    bool used = false;
    for (const std::string& owner : f.owners)
      if (std::find(names.begin(), names.end(), owner) != names.end()) {
        so.add_strategy_option(owner + "." + f.option.at(owner) + "=" + values_.at(flag));
        used = true;
      }
    if (!used) throw not_for(flag, f.owners);
  }
  for (const auto& [flag, who] : outputs_) {
    if (!given(vm, flag.c_str())) continue;
    bool used = false;
    for (const std::string& owner : who) used = used || std::find(names.begin(), names.end(), owner) != names.end();
    if (!used) throw not_for(flag, who);
  }
}

void MethodFlags::policies(const po::variables_map& vm, RunSpec& spec) const {
  for (const auto& [policy, enable] : enable_) {
    const bool on = given(vm, enable.c_str()) && value_of(values_.at(enable)) != nlohmann::json(0);
    PolicySpec p = PolicySpec::named(policy);
    for (const auto& [flag, f] : flags_) {
      if (!f.policy || !given(vm, flag.c_str()) || !f.option.count(policy)) continue;
      if (!on && flag != enable) throw UsageError("--" + flag + " needs --" + enable + " N");
      p.options[f.option.at(policy)] = value_of(values_.at(flag));
    }
    if (on) spec.policies.push_back(p);
  }
}

std::string MethodFlags::first_given(const po::variables_map& vm) const {
  for (const auto& [flag, f] : flags_)
    if (given(vm, flag.c_str())) return flag;
  return "";
}

std::vector<std::pair<std::string, std::string>> MethodFlags::given_outputs(const po::variables_map& vm) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [flag, who] : outputs_)
    if (given(vm, flag.c_str())) out.emplace_back(flag, values_.at(flag));
  return out;
}

std::vector<std::string> strategy_names(const po::variables_map& vm, const RunSpec& spec, const mapping::Registry& r) {
  std::vector<std::string> names;
  if (vm.count("strategy") && (given(vm, "strategy") || !vm.count("spec"))) {
    names = split_list(vm["strategy"].as<std::string>(), "--strategy");
    if (std::find(names.begin(), names.end(), "all") != names.end()) return r.strategy_names();
    return names;
  }
  if (spec.all_strategies) return r.strategy_names();
  for (const StrategySpec& s : spec.strategies) names.push_back(s.name);
  return names;
}

}  // namespace nmpsim::apps
