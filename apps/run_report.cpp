#include "apps/run_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "apps/subprocess.h"

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
const int kDx[4] = {0, 1, 0, -1}, kDy[4] = {-1, 0, 1, 0};  // N, E, S, W
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

double link_bandwidth(const hw::HardwareSpec& hw, int from, int dir) {
  const auto& t = hw.topology;
  const int to = t.id(t.x(from) + kDx[dir], t.y(from) + kDy[dir]);
  return t.link(from, to).gbytes_per_s * 1e9;
}

bool link_exists(const mapping::Topology& t, int from, int dir) {
  const int x = t.x(from) + kDx[dir], y = t.y(from) + kDy[dir];
  return x >= 0 && y >= 0 && x < t.width && y < t.height;
}

double utilisation(const mapping::StrategyResult& r, const hw::HardwareSpec& hw, int v, int d) {
  const double time_s = r.mean_tbt_s() * static_cast<double>(r.steps.size());
  return time_s > 0 ? r.link_bytes[static_cast<size_t>(v) * 4 + d] / (link_bandwidth(hw, v, d) * time_s) : 0.0;
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

void write_link_plots(std::ostream& gp, const std::string& dir, const std::vector<StrategyReport>& reports,
                      const hw::HardwareSpec& hw) {
  const auto& t = hw.topology;
  double max_util = 1e-9;  // one colour scale for every strategy of the run, so the maps compare
  for (const auto& s : reports)
    for (int v = 0; v < t.nodes(); ++v)
      for (int d = 0; d < 4; ++d)
        if (link_exists(t, v, d)) max_util = std::max(max_util, utilisation(s.result, hw, v, d));
  gp << "set terminal pngcairo size 900,760 font 'sans,10' noenhanced\n"
     << "set palette defined (0 '#f7f7f7', 0.3 '#fdd49e', 0.6 '#fc8d59', 1 '#b30000')\n"
     << "set size ratio -1\nunset key\nset xtics 1\nset ytics 1\nset xlabel 'x'\nset ylabel 'y'\n"
     << "set xrange [-0.6:" << t.width - 0.4 << "]\nset yrange [" << t.height - 0.4 << ":-0.6]\n"
     << "set cbrange [0:" << max_util << "]\nset cblabel 'utilisation'\n";
  for (const auto& s : reports) {
    const mapping::StrategyResult& r = s.result;
    const std::string dat = "links_" + r.strategy + ".dat";
    std::ofstream out(dir + "/" + dat);
    for (int v = 0; v < t.nodes(); ++v)
      for (int d = 0; d < 4; ++d) {
        if (!link_exists(t, v, d)) continue;
        // The two directions of a link are drawn side by side.
        const double off = (d == 1 || d == 2) ? 0.09 : -0.09;
        const double x = t.x(v) + 0.15 * kDx[d] + (kDy[d] ? off : 0), y = t.y(v) + 0.15 * kDy[d] + (kDx[d] ? off : 0);
        out << x << " " << y << " " << 0.7 * kDx[d] << " " << 0.7 * kDy[d] << " " << utilisation(r, hw, v, d) << "\n";
      }
    gp << "set output " << gp_quote("links_" + r.strategy + ".png") << "\n"
       << "set title "
       << gp_quote("link utilisation: " + r.strategy + " on " + hw.name + " (" + mapping::fidelity_name(r.fidelity) +
                   " fidelity; arrows along the traffic)")
       << "\nplot " << gp_quote(dat) << " using 1:2:3:4:5 with vectors head filled size 0.08,20 lw 4 lc palette\n";
  }
}

void write_load_and_phase_plots(std::ostream& gp, const std::string& dir, const std::vector<StrategyReport>& reports,
                                const hw::HardwareSpec& hw) {
  const int nodes = hw.topology.nodes();
  const std::string context =
      " on " + hw.name +
      (reports.empty() ? "" : std::string(", ") + mapping::fidelity_name(reports[0].result.fidelity) + " fidelity");
  {
    std::ofstream out(dir + "/node_load.dat");
    out << "node";
    for (const auto& s : reports) out << " " << s.result.strategy;
    out << "\n";
    for (int v = 0; v < nodes; ++v) {
      out << v;
      for (const auto& s : reports)
        out << " " << s.result.node_expert_s[static_cast<size_t>(v)] * kUs / std::max<size_t>(1, s.result.steps.size());
      out << "\n";
    }
  }
  gp << "reset\nset terminal pngcairo size 1100,500 font 'sans,10' noenhanced\nset output 'node_load.png'\n"
     << "set title " << gp_quote("expert compute time per node per decode step" + context)
     << "\nset ylabel 'us'\nset xlabel 'node'\n"
     << "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
     << "set key outside top right\nset yrange [0:*]\nset xtics 1 font 'sans,7'\n"
     << "plot for [i=2:" << reports.size() + 1 << "] 'node_load.dat' using i:xtic(1) title columnheader(i)\n";
  const std::vector<std::string> names = all_phases(reports);
  {
    std::ofstream out(dir + "/phases.dat");
    out << "strategy";
    for (const std::string& n : names) out << " " << n;
    out << "\n";
    for (const auto& s : reports) {
      const auto per_phase = s.result.mean_phase_s();
      out << s.result.strategy;
      for (const std::string& n : names) {
        const int i = s.result.find_phase(n);
        out << " " << (i < 0 ? 0.0 : per_phase[static_cast<size_t>(i)] * kUs);
      }
      out << "\n";
    }
  }
  gp << "reset\nset terminal pngcairo size 1000,560 font 'sans,10' noenhanced\nset output 'phases.png'\n"
     << "set title " << gp_quote("time between tokens by phase, per decode step" + context) << "\nset ylabel 'us'\n"
     << "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\n"
     << "set boxwidth 0.6\nset key outside right\nset yrange [0:*]\n"
     << "plot for [i=2:" << names.size() + 1 << "] 'phases.dat' using i:xtic(1) title columnheader(i)\n";
}

}  // namespace

nlohmann::json strategy_json(const StrategyReport& s, double baseline_tbt_s, double tokens) {
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
  for (mapping::PhaseFamily f : kFamilies) j[us_key(mapping::family_name(f))] = r.mean_family_s(f) * kUs;
  j["expert_imbalance_us"] = r.mean_expert_imbalance_s() * kUs;
  j["phases"] = phases;
  j["node_flops"] = r.node_flops;
  j["node_token_work"] = r.node_token_work;
  j["node_expert_us_per_step"] = expert_us;
  j["policies"] = r.policies;
  // HierMoE's levels, duplication rates and d* are also at the top, where issue 15 asks for them.
  if (r.policies.contains("hiermoe")) j["hiermoe"] = r.policies.at("hiermoe");
  j["wall_seconds"] = r.wall_s;
  if (s.energy) {
    j["energy_pj"] = {{"dram", s.energy->dram},
                      {"noc", s.energy->noc},
                      {"compute", s.energy->compute},
                      {"static", s.energy->static_pj},
                      {"total", s.energy->total()}};
    j["energy_per_token_uj"] = s.energy->total() / tokens / 1e6;
  }
  j["layers"] = layers;
  return j;
}

std::string summary_csv(const std::vector<StrategyReport>& reports, double tokens) {
  std::ostringstream os;
  os << "strategy,fidelity,mean_tbt_us";
  for (mapping::PhaseFamily f : kFamilies) os << "," << us_key(mapping::family_name(f));
  os << ",expert_imbalance_us,noc_payload_bytes,energy_per_token_uj,wall_seconds\n";
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
    std::snprintf(buf, sizeof buf, ",%.4f\n", r.wall_s);
    os << buf;
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
        const int to = t.id(t.x(v) + kDx[d], t.y(v) + kDy[d]);
        const size_t link = static_cast<size_t>(v) * 4 + d;
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s,%d,%d,%d,%d,%d,%d,%s,%.0f,%.6f", s.result.strategy.c_str(), v, to, t.x(v),
                      t.y(v), t.x(to), t.y(to), mapping::link_level_name(t.link_level(v, to)),
                      s.result.link_bytes[link], utilisation(s.result, hw, v, d));
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

std::string write_plots(const std::string& dir, const std::vector<StrategyReport>& reports,
                        const hw::HardwareSpec& hw) {
  std::ostringstream gp;
  write_link_plots(gp, dir, reports, hw);
  write_load_and_phase_plots(gp, dir, reports, hw);
  {
    std::ofstream script(dir + "/plots.gp");
    script << gp.str();
    if (!script) return "plots skipped: cannot write the plot script in " + dir;
  }
  // gnuplot runs in the output directory and reads the script by name: no path or label reaches a shell.
  const ProcessResult r = run_program({"gnuplot", "plots.gp"}, dir, dir + "/plots.log");
  if (!r.started) return "plots skipped: gnuplot is not installed (bash .ci/install-deps.sh installs it)";
  if (r.exit_code != 0) return "plots failed: gnuplot's messages are in plots.log";
  return "";
}

}  // namespace nmpsim::apps
