#include "nmpsim/mapping/run_result.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace nmpsim::mapping {

double LayerRecord::total_s() const { return std::accumulate(phase_s.begin(), phase_s.end(), 0.0); }

StrategyResult::StrategyResult(std::string strategy_name, Fidelity f, int nodes)
    : strategy(std::move(strategy_name)),
      fidelity(f),
      node_flops(static_cast<size_t>(nodes), 0.0),
      node_expert_s(static_cast<size_t>(nodes), 0.0),
      node_token_work(static_cast<size_t>(nodes), 0.0),
      link_bytes(static_cast<size_t>(nodes) * 4, 0.0) {}

int StrategyResult::phase_index(const Phase& p) {
  const int found = find_phase(p.name);
  if (found >= 0) {
    const PhaseInfo& q = phases[static_cast<size_t>(found)];
    if (q.family != p.family || q.stream != p.stream)
      throw std::logic_error("phase '" + p.name + "' appears with two families or streams");
    return found;
  }
  phases.push_back(PhaseInfo{p.name, p.family, p.stream});
  phase_bytes.push_back(0.0);
  return static_cast<int>(phases.size()) - 1;
}

int StrategyResult::find_phase(const std::string& name) const {
  for (size_t i = 0; i < phases.size(); ++i)
    if (phases[i].name == name) return static_cast<int>(i);
  return -1;
}

double StrategyResult::bytes_of(const std::string& phase) const {
  const int i = find_phase(phase);
  return i < 0 ? 0.0 : phase_bytes[static_cast<size_t>(i)];
}

double StrategyResult::phase_s(const LayerRecord& r, const std::string& name) const {
  const int i = find_phase(name);
  return i < 0 ? 0.0 : r.phase(static_cast<size_t>(i));
}

double StrategyResult::tbt_s(int step) const {
  double s = 0;
  for (const LayerRecord& r : steps[static_cast<size_t>(step)]) s += r.total_s();
  return s;
}

double StrategyResult::mean_tbt_s() const {
  if (steps.empty()) return 0;
  double s = 0;
  for (size_t i = 0; i < steps.size(); ++i) s += tbt_s(static_cast<int>(i));
  return s / static_cast<double>(steps.size());
}

std::vector<LayerRecord> StrategyResult::mean_layers() const {
  std::vector<LayerRecord> out(steps.empty() ? 0 : steps[0].size());
  const double n = static_cast<double>(steps.size());
  for (LayerRecord& r : out) r.phase_s.assign(phases.size(), 0.0);
  for (const auto& step : steps)
    for (size_t l = 0; l < step.size() && l < out.size(); ++l) {
      for (size_t p = 0; p < phases.size(); ++p) out[l].phase_s[p] += step[l].phase(p) / n;
      out[l].expert_imbalance_s += step[l].expert_imbalance_s / n;
      out[l].comm_busy_s += step[l].comm_busy_s / n;
    }
  return out;
}

double StrategyResult::family_s(const LayerRecord& r, PhaseFamily f) const {
  double s = 0;
  for (size_t p = 0; p < phases.size(); ++p)
    if (phases[p].family == f) s += r.phase(p);
  return s;
}

std::vector<double> StrategyResult::mean_phase_s() const {
  std::vector<double> out(phases.size(), 0.0);
  for (const LayerRecord& l : mean_layers())
    for (size_t p = 0; p < phases.size(); ++p) out[p] += l.phase(p);
  return out;
}

double StrategyResult::mean_family_s(PhaseFamily f) const {
  const std::vector<double> per_phase = mean_phase_s();
  double s = 0;
  for (size_t p = 0; p < phases.size(); ++p)
    if (phases[p].family == f) s += per_phase[p];
  return s;
}

double StrategyResult::mean_exposed_comm_s() const {
  return mean_family_s(PhaseFamily::kAllReduce) + mean_family_s(PhaseFamily::kMoeComm);
}

double StrategyResult::mean_hidden_comm_s() const {
  double s = 0;
  for (const LayerRecord& l : mean_layers())
    s += std::max(0.0, l.comm_busy_s - family_s(l, PhaseFamily::kAllReduce) - family_s(l, PhaseFamily::kMoeComm));
  return s;
}

double StrategyResult::mean_expert_imbalance_s() const {
  double s = 0;
  for (const LayerRecord& l : mean_layers()) s += l.expert_imbalance_s;
  return s;
}

}  // namespace nmpsim::mapping

namespace nmpsim::mapping {

nlohmann::json result_to_json(const StrategyResult& r) {
  nlohmann::json phases = nlohmann::json::array(), steps = nlohmann::json::array();
  for (const PhaseInfo& p : r.phases) phases.push_back({p.name, static_cast<int>(p.family), p.stream});
  for (const auto& step : r.steps) {
    nlohmann::json layers = nlohmann::json::array();
    for (const LayerRecord& l : step) layers.push_back({l.phase_s, l.expert_imbalance_s, l.comm_busy_s});
    steps.push_back(std::move(layers));
  }
  return {{"strategy", r.strategy},
          {"fidelity", static_cast<int>(r.fidelity)},
          {"phases", phases},
          {"steps", steps},
          {"phase_bytes", r.phase_bytes},
          {"node_flops", r.node_flops},
          {"node_dram_bytes", r.node_dram_bytes},
          {"node_expert_s", r.node_expert_s},
          {"node_token_work", r.node_token_work},
          {"link_bytes", r.link_bytes},
          {"family_link_bytes", r.family_link_bytes},
          {"wall_s", r.wall_s},
          {"policies", r.policies},
          {"simulator", r.simulator},
          {"timeline", r.timeline}};
}

StrategyResult result_from_json(const nlohmann::json& j) {
  StrategyResult r;
  r.strategy = j.at("strategy").get<std::string>();
  r.fidelity = static_cast<Fidelity>(j.at("fidelity").get<int>());
  for (const auto& p : j.at("phases"))
    r.phases.push_back(
        PhaseInfo{p.at(0).get<std::string>(), static_cast<PhaseFamily>(p.at(1).get<int>()), p.at(2).get<int>()});
  for (const auto& step : j.at("steps")) {
    std::vector<LayerRecord> layers;
    for (const auto& l : step)
      layers.push_back(LayerRecord{l.at(0).get<std::vector<double>>(), l.at(1).get<double>(), l.at(2).get<double>()});
    r.steps.push_back(std::move(layers));
  }
  r.phase_bytes = j.at("phase_bytes").get<std::vector<double>>();
  r.node_flops = j.at("node_flops").get<std::vector<double>>();
  r.node_dram_bytes = j.value("node_dram_bytes", std::vector<double>{});
  r.node_expert_s = j.at("node_expert_s").get<std::vector<double>>();
  r.node_token_work = j.at("node_token_work").get<std::vector<double>>();
  r.link_bytes = j.at("link_bytes").get<std::vector<double>>();
  r.family_link_bytes = j.at("family_link_bytes").get<std::vector<std::vector<double>>>();
  r.wall_s = j.at("wall_s").get<double>();
  r.policies = j.at("policies");
  r.simulator = j.value("simulator", nlohmann::json::object());
  r.timeline = j.value("timeline", nlohmann::json::array());
  return r;
}

}  // namespace nmpsim::mapping
