// The plots of one run (gnuplot PNGs; run_report.h): link utilisation per strategy, in total and per
// traffic kind, with die and wafer borders and one colour scale per kind across the strategies;
// expert time per node and the max / mean expert time per layer; TBT stacked by phase family.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "nmpsim/apps/run_report.h"
#include "nmpsim/apps/subprocess.h"
#include "nmpsim/mapping/moe_layer.h"

namespace nmpsim::apps {

namespace {

constexpr double kUs = 1e6;
using mapping::kDirDx;
using mapping::kDirDy;

/// A kind of link map: file names are PREFIX_STRATEGY.png (the prefix has no '_' and a strategy's name
/// follows the first '_', so distinct strategies and kinds never share a file).
struct MapKind {
  std::string prefix, what;
  int family;  ///< -1: all traffic
};

/// Die borders (thin) when dies hold several nodes, wafer borders (thick) when there are several wafers;
/// in a general hierarchy each level's.
void draw_borders(std::ostream& gp, const mapping::Topology& t) {
  auto lines = [&](int step_x, int step_y, double lw, const char* colour) {
    for (int x = step_x; x < t.width; x += step_x)
      gp << "set arrow from " << x - 0.5 << "," << -0.5 << " to " << x - 0.5 << "," << t.height - 0.5
         << " nohead front lw " << lw << " lc rgb '" << colour << "' dt 2\n";
    for (int y = step_y; y < t.height; y += step_y)
      gp << "set arrow from " << -0.5 << "," << y - 0.5 << " to " << t.width - 0.5 << "," << y - 0.5
         << " nohead front lw " << lw << " lc rgb '" << colour << "' dt 2\n";
  };
  if (t.classic) {
    if ((t.die().width > 1 || t.die().height > 1) && t.dies() > 1) lines(t.die().width, t.die().height, 1.5, "#555555");
    if (t.wafers() > 1) lines(t.wafer().width, t.wafer().height, 4, "#000000");
    return;
  }
  // A general hierarchy: every level's borders, thicker and darker for coarser levels (coarse drawn last).
  static const char* const kColours[] = {"#aaaaaa", "#888888", "#555555", "#000000"};
  for (int l = 0, drawn = 0; l + 1 < t.num_levels(); ++l) {
    if (t.level_width(l) * t.level_height(l) == 1 || t.groups(l) == 1) continue;
    lines(t.level_width(l), t.level_height(l), 1.0 + 1.0 * drawn, kColours[std::min(drawn, 3)]);
    ++drawn;
  }
}

void write_link_plots(std::ostream& gp, const std::string& dir, const std::vector<StrategyReport>& reports,
                      const hw::HardwareSpec& hw, const std::string& context) {
  const auto& t = hw.topology;
  std::vector<MapKind> kinds = {{"links", "all traffic", -1}};
  const bool by_family = std::any_of(reports.begin(), reports.end(),
                                     [](const StrategyReport& s) { return !s.result.family_link_bytes.empty(); });
  if (by_family) {
    kinds.push_back(
        {"links-collectives", "attention all-reduce collectives", static_cast<int>(mapping::PhaseFamily::kAllReduce)});
    kinds.push_back({"links-dispatch", "MoE dispatch and combine", static_cast<int>(mapping::PhaseFamily::kMoeComm)});
  }
  const int step = std::max(1, std::max(t.width, t.height) / 16);  // readable tics on large meshes
  for (const MapKind& k : kinds) {
    double max_util = 1e-9;  // one colour scale for every strategy of the run, so the maps compare
    for (const auto& s : reports)
      for (int v = 0; v < t.nodes(); ++v)
        for (int d = 0; d < 4; ++d)
          if (link_exists(t, v, d)) max_util = std::max(max_util, link_utilisation(s.result, hw, v, d, k.family));
    gp << "reset\nset terminal pngcairo size 900,800 font 'sans,10' noenhanced\n"
       << "set palette defined (0 '#f7f7f7', 0.3 '#fdd49e', 0.6 '#fc8d59', 1 '#b30000')\n"
       << "set size ratio -1\nunset key\nset xtics " << step << "\nset ytics " << step
       << "\nset xlabel 'x (node column); arrows along the traffic; dashed lines: die (thin) and wafer (thick) "
          "borders'\n"
       << "set ylabel 'y (node row)'\n"
       << "set xrange [-0.6:" << t.width - 0.4 << "]\nset yrange [" << t.height - 0.4 << ":-0.6]\n"
       << "set cbrange [0:" << max_util << "]\nset cblabel 'utilisation (bytes / bandwidth x time)'\n";
    draw_borders(gp, t);
    for (const auto& s : reports) {
      const mapping::StrategyResult& r = s.result;
      const std::string dat = k.prefix + "_" + r.strategy + ".dat";
      std::ofstream out(dir + "/" + dat);
      for (int v = 0; v < t.nodes(); ++v)
        for (int d = 0; d < 4; ++d) {
          if (!link_exists(t, v, d)) continue;
          // The two directions of a link are drawn side by side.
          const double off = (d == 1 || d == 2) ? 0.09 : -0.09;
          const double x = t.x(v) + 0.15 * kDirDx[d] + (kDirDy[d] ? off : 0),
                       y = t.y(v) + 0.15 * kDirDy[d] + (kDirDx[d] ? off : 0);
          out << x << " " << y << " " << 0.7 * kDirDx[d] << " " << 0.7 * kDirDy[d] << " "
              << link_utilisation(r, hw, v, d, k.family) << "\n";
        }
      gp << "set output " << gp_quote(k.prefix + "_" + r.strategy + ".png") << "\nset title "
         << gp_quote(k.what + ": " + r.strategy + ", " + context + ", " + mapping::fidelity_name(r.fidelity) +
                     " fidelity")
         << "\nplot " << gp_quote(dat) << " using 1:2:3:4:5 with vectors head filled size 0.08,20 lw "
         << (t.nodes() > 64 ? 2 : 4) << " lc palette\n";
    }
  }
}

void write_load_plot(std::ostream& gp, const std::string& dir, const std::vector<StrategyReport>& reports,
                     const hw::HardwareSpec& hw, const std::string& context) {
  const int nodes = hw.topology.nodes();
  {
    std::ofstream out(dir + "/node_load.dat");
    for (const auto& s : reports) {
      out << "# " << s.result.strategy << "\n";
      for (int v = 0; v < nodes; ++v)
        out << v << " "
            << s.result.node_expert_s[static_cast<size_t>(v)] * kUs / std::max<size_t>(1, s.result.steps.size())
            << "\n";
      out << "\n\n";
    }
  }
  {
    // Per MoE layer: the slowest node's expert phase against the mean over busy nodes (1 = balanced).
    std::ofstream out(dir + "/layer_imbalance.dat");
    for (const auto& s : reports) {
      out << "# " << s.result.strategy << "\n";
      const int experts = s.result.find_phase(mapping::phase_names::kExperts);
      const auto layers = s.result.mean_layers();
      for (size_t l = 0; l < layers.size(); ++l) {
        const double mx = experts < 0 ? 0.0 : layers[l].phase(static_cast<size_t>(experts));
        const double mean = mx - layers[l].expert_imbalance_s;
        if (mx > 0 && mean > 0) out << l << " " << mx / mean << "\n";
      }
      out << "\n\n";
    }
  }
  gp << "reset\nset terminal pngcairo size 1100,800 font 'sans,10' noenhanced\nset output 'node_load.png'\n"
     << "set multiplot layout 2,1 title " << gp_quote("expert load, " + context) << "\n"
     << "set title 'expert compute time per node per decode step'\nset ylabel 'us'\nset xlabel 'node'\n"
     << "set key outside top right\nset yrange [0:*]\nset grid\n"
     << "set xtics " << std::max(1, nodes / 16) << "\nplot ";
  for (size_t k = 0; k < reports.size(); ++k)
    gp << (k ? ", " : "") << "'node_load.dat' index " << k << " using 1:2 with linespoints pt 7 ps 0.4 title "
       << gp_quote(reports[k].result.strategy);
  gp << "\nset title 'per MoE layer: slowest node / mean busy node in the expert phase (1 = balanced)'\n"
     << "set ylabel 'max / mean'\nset xlabel 'layer'\nset yrange [0.98:*]\nset xtics auto\nplot ";
  for (size_t k = 0; k < reports.size(); ++k)
    gp << (k ? ", " : "") << "'layer_imbalance.dat' index " << k << " using 1:2 with linespoints pt 7 ps 0.5 title "
       << gp_quote(reports[k].result.strategy);
  gp << "\nunset multiplot\n";
}

void write_phase_plot(std::ostream& gp, const std::string& dir, const std::vector<StrategyReport>& reports,
                      const std::string& context) {
  using F = mapping::PhaseFamily;
  const F families[] = {F::kAttention, F::kAllReduce, F::kMoeCompute, F::kMoeComm, F::kOther};
  {
    std::ofstream out(dir + "/phases.dat");
    out << "strategy attention all-reduce MoE_compute MoE_communication other\n";
    for (const auto& s : reports) {
      out << s.result.strategy;
      for (F f : families) out << " " << s.result.mean_family_s(f) * kUs;
      out << "\n";
    }
  }
  gp << "reset\nset terminal pngcairo size 1000,560 font 'sans,10' noenhanced\nset output 'phases.png'\n"
     << "set title " << gp_quote("time between tokens by kind of work, per decode step: " + context)
     << "\nset ylabel 'us'\nset style data histograms\nset style histogram rowstacked\n"
     << "set style fill solid 0.85 border -1\nset boxwidth 0.6\nset key outside right\nset yrange [0:*]\n"
     << "plot for [i=2:6] 'phases.dat' using i:xtic(1) title columnheader(i)\n";
}

}  // namespace

std::string write_plots(const std::string& dir, const std::vector<StrategyReport>& reports, const hw::HardwareSpec& hw,
                        const std::string& context) {
  std::ostringstream gp;
  write_link_plots(gp, dir, reports, hw, context);
  write_load_plot(gp, dir, reports, hw, context);
  write_phase_plot(gp, dir, reports, context);
  return run_gnuplot(dir, "plots", gp.str());
}

}  // namespace nmpsim::apps
