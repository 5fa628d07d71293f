#include "nmpsim/apps/run_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "nmpsim/apps/run_shape.h"
#include "nmpsim/apps/subprocess.h"

namespace nmpsim::apps {

std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "''";
    else
      out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return out + "'";
}

namespace {
constexpr double kUs = 1e6;
constexpr mapping::PhaseFamily kFamilies[] = {mapping::PhaseFamily::kAttention, mapping::PhaseFamily::kAllReduce,
                                              mapping::PhaseFamily::kMoeCompute, mapping::PhaseFamily::kMoeComm,
                                              mapping::PhaseFamily::kOther};

std::string us_key(const std::string& name) { return name + "_us"; }

nlohmann::json layer_json(const mapping::StrategyResult& r, int l, const mapping::LayerRecord& rec) {
  nlohmann::json j = {
      {"layer", l}, {"total_us", rec.total_s() * kUs}, {"expert_imbalance_us", rec.expert_imbalance_s * kUs}};
  for (mapping::PhaseFamily f : kFamilies) j[us_key(mapping::family_name(f))] = r.family_s(rec, f) * kUs;
  nlohmann::json phases = nlohmann::json::object();
  for (size_t p = 0; p < r.phases.size(); ++p) phases[r.phases[p].name] = rec.phase(p) * kUs;
  j["phases_us"] = phases;
  return j;
}

/// Phase names over all strategies, in order of first appearance.
std::vector<std::string> all_phases(const std::vector<StrategyReport>& reports) {
  std::vector<std::string> names;
  for (const auto& s : reports)
    for (const auto& p : s.result.phases)
      if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  return names;
}

double phase_us(const mapping::StrategyResult& r, const mapping::LayerRecord& rec, const std::string& name) {
  const int i = r.find_phase(name);
  return i < 0 ? 0.0 : rec.phase(static_cast<size_t>(i)) * kUs;
}

}  // namespace

bool link_exists(const mapping::Topology& t, int from, int dir) { return mapping::neighbour(t, from, dir) >= 0; }

double link_utilisation(const mapping::StrategyResult& r, const hw::HardwareSpec& hw, int v, int dir, int family) {
  const auto& t = hw.topology;
  const double bw = t.link(v, mapping::neighbour(t, v, dir)).gbytes_per_s * 1e9;
  const double time_s = r.mean_tbt_s() * static_cast<double>(r.steps.size());
  const size_t link = static_cast<size_t>(v) * 4 + static_cast<size_t>(dir);
  double bytes = r.link_bytes[link];
  if (family >= 0) bytes = r.family_link_bytes.empty() ? 0.0 : r.family_link_bytes[static_cast<size_t>(family)][link];
  return time_s > 0 ? bytes / (bw * time_s) : 0.0;
}

std::vector<std::string> link_names(const mapping::Topology& t) {
  std::vector<std::string> names;
  for (int l = 0; l < t.num_levels(); ++l) names.push_back(t.link_name(l));
  return names;
}

nlohmann::json energy_to_json(const EnergyPj& e) {
  nlohmann::json j = {{"dram", e.dram},
                      {"dram_array", e.dram_array},
                      {"dram_interface", e.dram_interface},
                      {"dram_activate", e.dram_activate},
                      {"noc", e.noc},
                      {"compute", e.compute},
                      {"static", e.static_pj},
                      {"total", e.total()}};
  for (size_t l = 0; l < e.level_links.size(); ++l) j["noc_" + e.level_links[l]] = e.noc_level[l];
  if (e.level_links != link_names(mapping::Topology{})) j["level_links"] = e.level_links;  // their order
  return j;
}

EnergyPj energy_from_json(const nlohmann::json& j) {
  EnergyPj e;
  e.dram = j.at("dram").get<double>();
  e.dram_array = j.at("dram_array").get<double>();
  e.dram_interface = j.at("dram_interface").get<double>();
  e.dram_activate = j.at("dram_activate").get<double>();
  e.noc = j.at("noc").get<double>();
  e.compute = j.at("compute").get<double>();
  e.static_pj = j.at("static").get<double>();
  if (j.contains("level_links")) e.level_links = j.at("level_links").get<std::vector<std::string>>();
  if (e.level_links.size() > static_cast<size_t>(mapping::kMaxLevels))
    throw std::runtime_error("energy: more than " + std::to_string(mapping::kMaxLevels) + " level_links");
  for (size_t l = 0; l < e.level_links.size(); ++l) e.noc_level[l] = j.at("noc_" + e.level_links[l]).get<double>();
  return e;
}

double RunSteps::tokens() const { return total_tokens(shape, steps); }

mapping::TrainTimes RunSteps::train_times(const mapping::StrategyResult& r) const {
  return shape.kind == mapping::StepKind::kTrain ? mapping::train_times(r, layers) : mapping::TrainTimes{};
}

double RunSteps::mfu(const mapping::StrategyResult& r) const {
  const double t = r.mean_tbt_s();
  return shape.kind == mapping::StepKind::kTrain && t > 0 && peak_flops > 0 ? model_flops_per_step / (t * peak_flops)
                                                                            : 0.0;
}

double RunSteps::tokens_per_s(const mapping::StrategyResult& r) const {
  const double t = r.mean_tbt_s();
  return shape.kind == mapping::StepKind::kTrain && t > 0 ? shape.batch * double(shape.prompt_tokens) / t : 0.0;
}

double RunSteps::ttft_s(const mapping::StrategyResult& r) const {
  if (shape.kind == mapping::StepKind::kDecode || shape.kind == mapping::StepKind::kTrain || r.steps.empty()) return -1;
  if (shape.kind == mapping::StepKind::kPrefill) return r.mean_tbt_s();
  double t = 0;
  const int carrying = std::min(shape.prompt_steps(), static_cast<int>(r.steps.size()));
  for (int s = 0; s < carrying; ++s) t += r.tbt_s(s);
  return t;
}

double RunSteps::prefill_tokens_per_s(const mapping::StrategyResult& r) const {
  const double t = ttft_s(r);
  if (t <= 0) return 0;
  const double prompts = shape.kind == mapping::StepKind::kPrefill ? shape.batch : 1;
  return prompts * shape.prompt_tokens / t;
}

namespace {

/// A training step's parts in summary.json (docs/FORMATS.md "summary.json").
void add_train_fields(nlohmann::json& j, const mapping::StrategyResult& r, const RunSteps& steps) {
  const mapping::TrainTimes t = steps.train_times(r);
  j["step_us"] = r.mean_tbt_s() * kUs;
  j["tokens_per_s"] = steps.tokens_per_s(r);
  j["forward_us"] = t.forward_s * kUs;
  j["backward_us"] = t.backward_s * kUs;
  j["recompute_us"] = t.recompute_s * kUs;
  j["grad_sync_us"] = t.grad_sync_s * kUs;
  j["optimizer_us"] = t.optimizer_s * kUs;
  j["model_flops_per_step"] = steps.model_flops_per_step;
  j["mfu"] = steps.mfu(r);
}

}  // namespace

nlohmann::json strategy_json(const StrategyReport& s, double baseline_tbt_s, const RunSteps& steps,
                             const std::vector<std::string>& top) {
  const double tokens = steps.tokens();
  const mapping::StrategyResult& r = s.result;
  nlohmann::json layers = nlohmann::json::array();
  const auto mean = r.mean_layers();
  for (size_t l = 0; l < mean.size(); ++l) layers.push_back(layer_json(r, static_cast<int>(l), mean[l]));
  std::vector<double> tbt, expert_us;
  for (size_t st = 0; st < r.steps.size(); ++st) tbt.push_back(r.tbt_s(static_cast<int>(st)) * kUs);
  for (double v : r.node_expert_s) expert_us.push_back(v * kUs / std::max<size_t>(1, r.steps.size()));
  nlohmann::json phases = nlohmann::json::array();
  const auto per_phase = r.mean_phase_s();
  for (size_t p = 0; p < r.phases.size(); ++p)
    phases.push_back({{"name", r.phases[p].name},
                      {"family", mapping::family_name(r.phases[p].family)},
                      {"stream", r.phases[p].stream},
                      {"us", per_phase[p] * kUs},
                      {"bytes", r.phase_bytes[p]}});
  nlohmann::json j = {
      {"fidelity", mapping::fidelity_name(r.fidelity)},
      {"mean_tbt_us", r.mean_tbt_s() * kUs},
      {"tbt_us", tbt},
      {"speedup_vs_tp", baseline_tbt_s > 0 ? nlohmann::json(baseline_tbt_s / r.mean_tbt_s()) : nlohmann::json()}};
  if (steps.ttft_s(r) >= 0) {
    j["ttft_us"] = steps.ttft_s(r) * kUs;
    j["prefill_tokens_per_s"] = steps.prefill_tokens_per_s(r);
  }
  if (steps.shape.kind == mapping::StepKind::kTrain) add_train_fields(j, r, steps);
  for (mapping::PhaseFamily f : kFamilies) j[us_key(mapping::family_name(f))] = r.mean_family_s(f) * kUs;
  j["expert_imbalance_us"] = r.mean_expert_imbalance_s() * kUs;
  j["exposed_comm_us"] = r.mean_exposed_comm_s() * kUs;
  j["hidden_comm_us"] = r.mean_hidden_comm_s() * kUs;
  j["phases"] = phases;
  j["node_flops"] = r.node_flops;
  j["node_token_work"] = r.node_token_work;
  j["node_expert_us_per_step"] = expert_us;
  j["policies"] = r.policies;
  for (const std::string& name : top)  // policies registered with stats_at_top
    if (r.policies.contains(name)) j[name] = r.policies.at(name);
  j["wall_seconds"] = r.wall_s;
  if (!r.simulator.empty()) j["simulator"] = r.simulator;
  if (s.energy) {
    j["energy_pj"] = energy_to_json(*s.energy);
    j["energy_per_token_uj"] = s.energy->total() / tokens / 1e6;
  }
  j["layers"] = layers;
  return j;
}

std::string summary_csv(const std::vector<StrategyReport>& reports, const RunSteps& steps) {
  const double tokens = steps.tokens();
  const bool train = steps.shape.kind == mapping::StepKind::kTrain;
  const bool prompts = steps.shape.kind != mapping::StepKind::kDecode && !train;
  std::ostringstream os;
  os << "strategy,fidelity,mean_tbt_us";
  for (mapping::PhaseFamily f : kFamilies) os << "," << us_key(mapping::family_name(f));
  os << ",expert_imbalance_us,noc_payload_bytes,energy_per_token_uj,wall_seconds";
  os << (prompts ? ",ttft_us,prefill_tokens_per_s"
         : train ? ",forward_us,backward_us,recompute_us,grad_sync_us,optimizer_us,tokens_per_s,mfu"
                 : "");
  os << "\n";
  for (const auto& s : reports) {
    const mapping::StrategyResult& r = s.result;
    double bytes = 0;
    for (double b : r.phase_bytes) bytes += b;
    char buf[96];
    os << r.strategy << "," << mapping::fidelity_name(r.fidelity);
    std::snprintf(buf, sizeof buf, ",%.4f", r.mean_tbt_s() * kUs);
    os << buf;
    for (mapping::PhaseFamily f : kFamilies) {
      std::snprintf(buf, sizeof buf, ",%.4f", r.mean_family_s(f) * kUs);
      os << buf;
    }
    std::snprintf(buf, sizeof buf, ",%.4f,%.0f,", r.mean_expert_imbalance_s() * kUs, bytes);
    os << buf;
    if (s.energy && tokens > 0) {
      std::snprintf(buf, sizeof buf, "%.6g", s.energy->total() / tokens / 1e6);
      os << buf;
    }
    std::snprintf(buf, sizeof buf, ",%.4f", r.wall_s);
    os << buf;
    if (prompts) {
      std::snprintf(buf, sizeof buf, ",%.4f,%.1f", steps.ttft_s(r) * kUs, steps.prefill_tokens_per_s(r));
      os << buf;
    }
    if (train) {
      const mapping::TrainTimes t = steps.train_times(r);
      std::snprintf(buf, sizeof buf, ",%.4f,%.4f,%.4f,%.4f,%.4f", t.forward_s * kUs, t.backward_s * kUs,
                    t.recompute_s * kUs, t.grad_sync_s * kUs, t.optimizer_s * kUs);
      os << buf;
      std::snprintf(buf, sizeof buf, ",%.1f,%.4f", steps.tokens_per_s(r), steps.mfu(r));
      os << buf;
    }
    os << "\n";
  }
  return os.str();
}

std::string layers_csv(const std::vector<StrategyReport>& reports) {
  const std::vector<std::string> names = all_phases(reports);
  std::ostringstream os;
  os << "strategy,layer";
  for (const std::string& n : names) os << "," << us_key(n);
  os << ",expert_imbalance_us,total_us\n";
  char buf[64];
  for (const auto& s : reports) {
    const auto mean = s.result.mean_layers();
    for (size_t l = 0; l < mean.size(); ++l) {
      os << s.result.strategy << "," << l;
      for (const std::string& n : names) {
        std::snprintf(buf, sizeof buf, ",%.4f", phase_us(s.result, mean[l], n));
        os << buf;
      }
      std::snprintf(buf, sizeof buf, ",%.4f,%.4f\n", mean[l].expert_imbalance_s * kUs, mean[l].total_s() * kUs);
      os << buf;
    }
  }
  return os.str();
}

std::string links_csv(const std::vector<StrategyReport>& reports, const hw::HardwareSpec& hw) {
  const auto& t = hw.topology;
  std::ostringstream os;
  os << "strategy,from,to,from_x,from_y,to_x,to_y,level,bytes,utilisation";
  for (int f = 0; f < mapping::kNumPhaseFamilies; ++f)
    os << "," << mapping::family_name(static_cast<mapping::PhaseFamily>(f)) << "_payload_bytes";
  os << "\n";
  for (const auto& s : reports)
    for (int v = 0; v < t.nodes(); ++v)
      for (int d = 0; d < 4; ++d) {
        if (!link_exists(t, v, d)) continue;
        const int to = mapping::neighbour(t, v, d);
        const size_t link = static_cast<size_t>(v) * 4 + d;
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s,%d,%d,%d,%d,%d,%d,%s,%.0f,%.6f", s.result.strategy.c_str(), v, to, t.x(v),
                      t.y(v), t.x(to), t.y(to), t.link_name(t.level_of_link(v, to)).c_str(), s.result.link_bytes[link],
                      link_utilisation(s.result, hw, v, d));
        os << buf;
        for (int f = 0; f < mapping::kNumPhaseFamilies; ++f) {
          const auto& fam = s.result.family_link_bytes;
          std::snprintf(buf, sizeof buf, ",%.0f", fam.empty() ? 0.0 : fam[static_cast<size_t>(f)][link]);
          os << buf;
        }
        os << "\n";
      }
  return os.str();
}

}  // namespace nmpsim::apps
