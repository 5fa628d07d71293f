#include "apps/run_report.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "apps/cli_common.h"

namespace nmpsim::apps {

namespace {
constexpr double kUs = 1e6;
const int kDx[4] = {0, 1, 0, -1}, kDy[4] = {-1, 0, 1, 0};  // N, E, S, W

nlohmann::json layer_json(int l, const mapping::LayerRecord& r) {
  const auto& t = r.t;
  return {{"layer", l},
          {"allgather_us", t.allgather_s * kUs},
          {"attention_us", t.attention_s * kUs},
          {"reduce_scatter_us", t.reduce_scatter_s * kUs},
          {"allreduce_us", t.allreduce_s() * kUs},
          {"gate_us", t.gate_s * kUs},
          {"dispatch_us", t.dispatch_s * kUs},
          {"experts_us", t.experts_s * kUs},
          {"combine_us", t.combine_s * kUs},
          {"shared_allgather_us", t.shared_allgather_s * kUs},
          {"shared_experts_us", t.shared_s * kUs},
          {"shared_reduce_scatter_us", t.shared_reduce_scatter_s * kUs},
          {"moe_compute_us", t.moe_compute_s() * kUs},
          {"moe_comm_us", t.moe_comm_s() * kUs},
          {"expert_imbalance_us", r.expert_imbalance_s * kUs},
          {"total_us", t.total_s() * kUs}};
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
}  // namespace

nlohmann::json strategy_json(const mapping::StrategyResult& r, double tp_tbt_s) {
  nlohmann::json layers = nlohmann::json::array();
  double att = 0, ar = 0, mc = 0, mm = 0, disp = 0, comb = 0, gate = 0, imb = 0;
  const auto mean = r.mean_layers();
  for (size_t l = 0; l < mean.size(); ++l) {
    layers.push_back(layer_json(static_cast<int>(l), mean[l]));
    att += mean[l].t.attention_s;
    ar += mean[l].t.allreduce_s();
    mc += mean[l].t.moe_compute_s();
    mm += mean[l].t.moe_comm_s();
    disp += mean[l].t.dispatch_s;
    comb += mean[l].t.combine_s;
    gate += mean[l].t.gate_s;
    imb += mean[l].expert_imbalance_s;
  }
  std::vector<double> tbt;
  for (size_t s = 0; s < r.steps.size(); ++s) tbt.push_back(r.tbt_s(static_cast<int>(s)) * kUs);
  std::vector<double> expert_us;
  for (double v : r.node_expert_s) expert_us.push_back(v * kUs / std::max<size_t>(1, r.steps.size()));
  return {{"fidelity", r.fidelity},
          {"mean_tbt_us", r.mean_tbt_s() * kUs},
          {"tbt_us", tbt},
          {"speedup_vs_tp", tp_tbt_s > 0 ? nlohmann::json(tp_tbt_s / r.mean_tbt_s()) : nlohmann::json()},
          {"attention_us", att * kUs},
          {"allreduce_us", ar * kUs},
          {"moe_compute_us", mc * kUs},
          {"moe_comm_us", mm * kUs},
          {"gate_us", gate * kUs},
          {"dispatch_us", disp * kUs},
          {"combine_us", comb * kUs},
          {"expert_imbalance_us", imb * kUs},
          {"dispatch_bytes", r.dispatch_bytes},
          {"combine_bytes", r.combine_bytes},
          {"node_flops", r.node_flops},
          {"node_token_work", r.node_token_work},
          {"node_expert_us_per_step", expert_us},
          {"wall_seconds", r.wall_s},
          {"layers", layers}};
}

std::string summary_csv(const std::vector<mapping::StrategyResult>& results) {
  std::ostringstream os;
  os << "strategy,fidelity,mean_tbt_us,attention_us,allreduce_us,moe_compute_us,moe_comm_us,expert_imbalance_us,"
        "dispatch_bytes\n";
  for (const auto& r : results) {
    double att = 0, ar = 0, mc = 0, mm = 0, imb = 0;
    for (const auto& l : r.mean_layers()) {
      att += l.t.attention_s;
      ar += l.t.allreduce_s();
      mc += l.t.moe_compute_s();
      mm += l.t.moe_comm_s();
      imb += l.expert_imbalance_s;
    }
    char buf[320];
    std::snprintf(buf, sizeof buf, "%s,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.0f\n", r.strategy.c_str(), r.fidelity.c_str(),
                  r.mean_tbt_s() * kUs, att * kUs, ar * kUs, mc * kUs, mm * kUs, imb * kUs, r.dispatch_bytes);
    os << buf;
  }
  return os.str();
}

std::string layers_csv(const std::vector<mapping::StrategyResult>& results) {
  std::ostringstream os;
  os << "strategy,layer,allgather_us,attention_us,reduce_scatter_us,shared_allgather_us,shared_experts_us,"
        "shared_reduce_scatter_us,allreduce_us,gate_us,dispatch_us,experts_us,combine_us,moe_compute_us,moe_comm_us,"
        "expert_imbalance_us,total_us\n";
  for (const auto& r : results) {
    const auto mean = r.mean_layers();
    for (size_t l = 0; l < mean.size(); ++l) {
      const auto& t = mean[l].t;
      char buf[512];
      std::snprintf(buf, sizeof buf, "%s,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n",
                    r.strategy.c_str(), l, t.allgather_s * kUs, t.attention_s * kUs, t.reduce_scatter_s * kUs,
                    t.shared_allgather_s * kUs, t.shared_s * kUs, t.shared_reduce_scatter_s * kUs,
                    t.allreduce_s() * kUs, t.gate_s * kUs, t.dispatch_s * kUs, t.experts_s * kUs, t.combine_s * kUs,
                    t.moe_compute_s() * kUs, t.moe_comm_s() * kUs, mean[l].expert_imbalance_s * kUs,
                    t.total_s() * kUs);
      os << buf;
    }
  }
  return os.str();
}

std::string links_csv(const std::vector<mapping::StrategyResult>& results, const hw::HardwareSpec& hw) {
  const auto& t = hw.topology;
  std::ostringstream os;
  os << "strategy,from,to,from_x,from_y,to_x,to_y,level,bytes,utilisation\n";
  for (const auto& r : results) {
    const double time_s = r.mean_tbt_s() * r.steps.size();
    for (int v = 0; v < t.nodes(); ++v)
      for (int d = 0; d < 4; ++d) {
        if (!link_exists(t, v, d)) continue;
        const int to = t.id(t.x(v) + kDx[d], t.y(v) + kDy[d]);
        const double bytes = r.link_bytes[static_cast<size_t>(v) * 4 + d];
        const double util = time_s > 0 ? bytes / (link_bandwidth(hw, v, d) * time_s) : 0.0;
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s,%d,%d,%d,%d,%d,%d,%s,%.0f,%.6f\n", r.strategy.c_str(), v, to, t.x(v),
                      t.y(v), t.x(to), t.y(to), mapping::link_level_name(t.link_level(v, to)), bytes, util);
        os << buf;
      }
  }
  return os.str();
}

std::string write_plots(const std::string& dir, const std::vector<mapping::StrategyResult>& results,
                        const hw::HardwareSpec& hw) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    return "plots skipped: gnuplot is not installed (bash .ci/install-deps.sh installs it)";
  const auto& t = hw.topology;
  std::ostringstream gp;
  gp << "set terminal pngcairo size 900,760 font 'sans,10'\n"
     << "set palette defined (0 '#f7f7f7', 0.3 '#fdd49e', 0.6 '#fc8d59', 1 '#b30000')\n"
     << "set size ratio -1\nset yrange [] reverse\nunset key\nset xtics 1\nset ytics 1\n"
     << "set xrange [-0.6:" << t.width - 0.4 << "]\nset yrange [" << t.height - 0.4 << ":-0.6]\n";
  for (const auto& r : results) {
    const std::string dat = dir + "/links_" + r.strategy + ".dat";
    std::ofstream out(dat);
    double max_util = 0;
    const double time_s = r.mean_tbt_s() * r.steps.size();
    for (int v = 0; v < t.nodes(); ++v)
      for (int d = 0; d < 4; ++d) {
        if (!link_exists(t, v, d)) continue;
        const double u = time_s > 0 ? r.link_bytes[static_cast<size_t>(v) * 4 + d] / (link_bandwidth(hw, v, d) * time_s) : 0;
        max_util = std::max(max_util, u);
        // The two directions of a link are drawn side by side.
        const double off = (d == 1 || d == 2) ? 0.09 : -0.09;
        const double x = t.x(v) + 0.15 * kDx[d] + (kDy[d] ? off : 0), y = t.y(v) + 0.15 * kDy[d] + (kDx[d] ? off : 0);
        out << x << " " << y << " " << 0.7 * kDx[d] << " " << 0.7 * kDy[d] << " " << u << "\n";
      }
    gp << "set output '" << dir << "/links_" << r.strategy << ".png'\n"
       << "set title 'link utilisation, strategy " << r.strategy << " (" << r.fidelity
       << " fidelity; arrows point along the direction of traffic)'\n"
       << "set cbrange [0:" << std::max(max_util, 1e-9) << "]\nset cblabel 'utilisation'\n"
       << "plot '" << dat << "' using 1:2:3:4:5 with vectors head filled size 0.08,20 lw 4 lc palette, "
       << "'" << dat << "' using (0):(0) with points pt 7 ps 0 notitle\n";
  }
  // Node load: expert compute time per node per step, one bar per strategy.
  const std::string load = dir + "/node_load.dat";
  {
    std::ofstream out(load);
    out << "node";
    for (const auto& r : results) out << " " << r.strategy;
    out << "\n";
    for (int v = 0; v < t.nodes(); ++v) {
      out << v;
      for (const auto& r : results) out << " " << r.node_expert_s[v] * kUs / std::max<size_t>(1, r.steps.size());
      out << "\n";
    }
  }
  gp << "set output '" << dir << "/node_load.png'\nreset\nset terminal pngcairo size 1100,500 font 'sans,10'\n"
     << "set title 'expert compute time per node per decode step'\nset ylabel 'us'\nset xlabel 'node'\n"
     << "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
     << "set key outside top right\nset yrange [0:*]\nset xtics 1 font 'sans,7'\n"
     << "plot for [i=2:" << results.size() + 1 << "] '" << load << "' using i:xtic(1) title columnheader(i)\n";
  const std::string script = dir + "/plots.gp";
  std::ofstream(script) << gp.str();
  const std::string cmd = "gnuplot '" + script + "' 2>'" + dir + "/plots.log'";
  if (std::system(cmd.c_str()) != 0) return "plots failed: see " + dir + "/plots.log";
  return "";
}

}  // namespace nmpsim::apps
