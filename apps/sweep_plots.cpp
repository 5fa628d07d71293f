// The plots of a sweep (apps/sweep.h sweep_plots), drawn by gnuplot from results.csv: for run sweeps
// TBT along the first axis, speedup heatmaps and the TBT-energy front; for serving sweeps goodput
// along the first axis, its heatmap and the goodput-per-watt / goodput-per-mm^2 front.
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "nmpsim/apps/run_report.h"
#include "nmpsim/apps/subprocess.h"
#include "nmpsim/apps/sweep.h"

namespace nmpsim::apps {

namespace {

struct Row {
  std::map<std::string, std::string> cell;
};

std::vector<Row> parse_csv(const std::string& csv, std::vector<std::string>& header) {
  std::vector<Row> rows;
  std::stringstream ss(csv);
  std::string line;
  auto split = [](const std::string& l) {
    std::vector<std::string> out(1);
    bool q = false;
    for (size_t i = 0; i < l.size(); ++i) {
      const char c = l[i];
      if (c == '"') {
        if (q && i + 1 < l.size() && l[i + 1] == '"') {
          out.back() += '"';
          ++i;
        } else {
          q = !q;
        }
      } else if (c == ',' && !q) {
        out.emplace_back();
      } else {
        out.back() += c;
      }
    }
    return out;
  };
  if (!std::getline(ss, line)) return rows;
  header = split(line);
  while (std::getline(ss, line)) {
    const std::vector<std::string> cells = split(line);
    Row r;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) r.cell[header[i]] = cells[i];
    if (r.cell["status"] == "ok") rows.push_back(r);
  }
  return rows;
}

/// An axis the plots can run along: two or more values (numbers, or names such as models, placed
/// in the order given).
bool varying_axis(const SweepAxis& a) { return a.values.size() > 1; }

std::string text_of(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

/// The base spec's model, hardware, batch and fidelity for plot titles, without the fields that are
/// axes (the axes label them); then the other axes held at their first value, if any.
std::string context_of(const SweepSpec& s, const std::vector<const SweepAxis*>& free = {}) {
  const auto is_axis = [&](const char* path) {
    return std::any_of(s.axes.begin(), s.axes.end(), [&](const SweepAxis& a) { return a.path == path; });
  };
  const nlohmann::json& b = s.base;
  std::vector<std::string> parts;
  const nlohmann::json m = b.value("model", nlohmann::json());
  if (!is_axis("model") && (m.is_string() || m.is_object()))
    parts.push_back(m.is_string() ? m.get<std::string>() : m.value("preset", m.value("name", "model")));
  const nlohmann::json h = b.value("hardware", nlohmann::json());
  if (!is_axis("hardware") && (h.is_string() || h.is_object()))
    parts.push_back(h.is_string() ? h.get<std::string>() : h.value("name", "hardware"));
  if (b.contains("batch") && !is_axis("batch") && !s.serving()) parts.push_back("batch " + b["batch"].dump());
  if (b.contains("fidelity") && !is_axis("fidelity")) parts.push_back(text_of(b["fidelity"]) + " fidelity");
  for (const SweepAxis& a : s.axes)
    if (a.values.size() > 1 && std::find(free.begin(), free.end(), &a) == free.end())
      parts.push_back(a.path + " = " + text_of(a.values.front()));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::vector<const SweepAxis*> all_axes(const SweepSpec& s) {
  std::vector<const SweepAxis*> out;
  for (const SweepAxis& a : s.axes) out.push_back(&a);
  return out;
}

/// One series of points per strategy and the front no point beats on both coordinates (lower is
/// better on both, or higher with `maximise`), drawn with its points so that a front of one point shows.
void front_plot(const std::string& dir, const std::string& name, const std::string& title, const std::string& xlabel,
                const std::string& ylabel,
                const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>& series,
                bool maximise, std::ostringstream& gp, const std::vector<std::string>* labels = nullptr) {
  std::vector<std::pair<double, double>> all;
  std::ofstream dat(dir + "/" + name + ".dat");
  for (const auto& [st, pts] : series) {
    dat << "# " << st << "\n";
    for (const auto& p : pts) dat << p.first << " " << p.second << "\n";
    all.insert(all.end(), pts.begin(), pts.end());
    dat << "\n\n";
  }
  if (all.empty()) return;
  const double sign = maximise ? -1 : 1;
  std::sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    return sign * a.first != sign * b.first ? sign * a.first < sign * b.first : sign * a.second < sign * b.second;
  });
  dat << "# front\n";
  double best = 1e300;
  for (const auto& [x, y] : all)
    if (sign * y < best) {
      dat << x << " " << y << "\n";
      best = sign * y;
    }
  gp << "reset\nset terminal pngcairo size 900,600 font 'sans,10' noenhanced\nset output " << gp_quote(name + ".png")
     << "\nset title " << gp_quote(title) << "\nset xlabel " << gp_quote(xlabel) << "\nset ylabel " << gp_quote(ylabel)
     << "\nset grid\nset key outside right\n"
     << (labels != nullptr ? "set offsets 0, graph 0.35, graph 0.05, graph 0.05\n" : "") << "plot ";
  for (size_t k = 0; k < series.size(); ++k)
    gp << gp_quote(name + ".dat") << " index " << k << " using 1:2 with points pt 7 title " << gp_quote(series[k].first)
       << ", ";
  gp << gp_quote(name + ".dat") << " index " << series.size()
     << " using 1:2 with linespoints lw 2 pt 6 ps 2 lc 'black' title 'Pareto front'";
  if (labels != nullptr) {  // one per point, in the series' order: which design each point is
    std::ofstream lab(dir + "/" + name + "_labels.dat");
    size_t i = 0;
    for (const auto& [st, pts] : series)
      for (const auto& p : pts) {
        std::string text = i < labels->size() ? (*labels)[i] : "";
        text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == '"' || c == '\\' || c < 0x20; }),
                   text.end());
        lab << p.first << " " << p.second << " \"" << text << "\"\n";
        ++i;
      }
    gp << ", " << gp_quote(name + "_labels.dat") << " using 1:2:3 with labels left offset 0.8,0.5 font ',8' notitle";
  }
  gp << "\n";
}

double number_of(const Row& r, const std::string& col) {
  const auto it = r.cell.find(col);
  return it == r.cell.end() || it->second.empty() ? 0 : std::stod(it->second);
}

}  // namespace

namespace {

/// Whether row `r` holds every axis but those in `free` at its first value.
bool held_fixed(const SweepSpec& s, const Row& r, const std::vector<const SweepAxis*>& free) {
  for (const SweepAxis& a : s.axes) {
    if (std::find(free.begin(), free.end(), &a) != free.end()) continue;
    if (r.cell.at(a.path) != text_of(a.values.front())) return false;
  }
  return true;
}

void value_tics(std::ostringstream& gp, const char* axis, const SweepAxis& a) {
  gp << "set " << axis << " (";
  for (size_t i = 0; i < a.values.size(); ++i) gp << (i ? ", " : "") << gp_quote(text_of(a.values[i])) << " " << i;
  gp << ")\n";
}

/// A heatmap of `value(row)` across axes x and y (the other axes at their first value, or, with
/// `reduce`, every row of the cell reduced to its largest value): data file and gnuplot commands.
struct Heatmap {
  std::string name, title, cblabel, palette, cbrange;
  std::function<std::string(const Row&)> value;  ///< "" for no value
  const SweepAxis* reduce = nullptr;             ///< an axis whose values are folded into the maximum
};
void heatmap(const std::string& dir, const SweepSpec& s, const std::vector<Row>& rows, const std::string& st,
             const SweepAxis& x, const SweepAxis& y, const Heatmap& h, std::ostringstream& gp) {
  std::ofstream dat(dir + "/" + h.name + ".dat");
  for (size_t j = 0; j < y.values.size(); ++j) {
    for (size_t i = 0; i < x.values.size(); ++i) {
      std::string best;
      for (const Row& r : rows) {
        if (r.cell.at("strategy") != st || r.cell.at(x.path) != text_of(x.values[i]) ||
            r.cell.at(y.path) != text_of(y.values[j]) || !held_fixed(s, r, {&x, &y, h.reduce}))
          continue;
        const std::string v = h.value(r);
        if (!v.empty() && (best.empty() || std::stod(v) > std::stod(best))) best = v;
      }
      if (!best.empty()) dat << i << " " << j << " " << best << "\n";
    }
    dat << "\n";
  }
  gp << "reset\nset terminal pngcairo size 800,640 font 'sans,10' noenhanced\nset output " << gp_quote(h.name + ".png")
     << "\nset title " << gp_quote(h.title + ": " + context_of(s, {&x, &y, h.reduce})) << "\nset xlabel "
     << gp_quote(x.path) << "\nset ylabel " << gp_quote(y.path) << "\nset cblabel " << gp_quote(h.cblabel)
     << "\nset palette " << h.palette << "\n"
     << (h.cbrange.empty() ? "" : "set cbrange " + h.cbrange + "\n");
  value_tics(gp, "xtics", x);
  value_tics(gp, "ytics", y);
  gp << "plot " << gp_quote(h.name + ".dat") << " using 1:2:3 with image notitle, " << gp_quote(h.name + ".dat")
     << " using 1:2:(sprintf('%.3g', $3)) with labels notitle\n";
}

/// `column` along axis x (the other axes at their first value; with `reduce`, the largest value over
/// that axis), one line per strategy.
void line_plot(const std::string& dir, const SweepSpec& s, const std::vector<Row>& rows,
               const std::vector<std::string>& strategies, const SweepAxis& x, const std::string& column,
               const std::string& name, const std::string& what, std::ostringstream& gp,
               const SweepAxis* reduce = nullptr) {
  std::ofstream dat(dir + "/" + name + ".dat");
  for (const std::string& st : strategies) {
    dat << "# " << st << "\n";
    for (size_t i = 0; i < x.values.size(); ++i) {
      std::string best;
      for (const Row& r : rows)
        if (r.cell.at("strategy") == st && r.cell.at(x.path) == text_of(x.values[i]) &&
            held_fixed(s, r, {&x, reduce}) && !r.cell.at(column).empty() &&
            (best.empty() || std::stod(r.cell.at(column)) > std::stod(best)))
          best = r.cell.at(column);
      if (!best.empty()) dat << i << " " << best << "\n";
    }
    dat << "\n\n";
  }
  const std::string title = what + " along " + x.path + (reduce ? ", best " + reduce->path : "");
  gp << "reset\nset terminal pngcairo size 900,560 font 'sans,10' noenhanced\nset output " << gp_quote(name + ".png")
     << "\nset title " << gp_quote(title + ": " + context_of(s, {&x, reduce})) << "\nset xlabel " << gp_quote(x.path)
     << "\nset ylabel " << gp_quote(what) << "\nset grid\nset key outside right\n";
  value_tics(gp, "xtics", x);
  gp << "plot ";
  for (size_t k = 0; k < strategies.size(); ++k)
    gp << (k ? ", " : "") << gp_quote(name + ".dat") << " index " << k << " using 1:2 with linespoints title "
       << gp_quote(strategies[k]);
  gp << "\n";
}

/// A run sweep: TBT along the first axis, speedup heatmaps over the first two, the TBT-energy front.
void run_plots(const std::string& dir, const SweepSpec& s, const std::vector<Row>& rows,
               const std::vector<std::string>& strategies, const std::vector<const SweepAxis*>& num,
               std::ostringstream& gp) {
  line_plot(dir, s, rows, strategies, *num[0], "mean_tbt_us", "sweep_tbt", "TBT (us)", gp);
  const std::string col = "speedup_vs_" + s.baseline;
  if (num.size() >= 2)
    for (const std::string& st : strategies)
      if (st != s.baseline)
        heatmap(
            dir, s, rows, st, *num[0], *num[1],
            {"sweep_speedup_" + st, st + ": speedup over " + s.baseline + " (TBT ratio, > 1 is faster)", "speedup",
             "defined (0 '#b2182b', 1 '#f7f7f7', 2 '#2166ac')", "[0:2]", [&](const Row& r) { return r.cell.at(col); }},
            gp);
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> series;
  for (const std::string& st : strategies) {
    series.push_back({st, {}});
    for (const Row& r : rows)
      if (r.cell.at("strategy") == st && !r.cell.at("energy_per_token_uj").empty())
        series.back().second.emplace_back(number_of(r, "mean_tbt_us"), number_of(r, "energy_per_token_uj"));
  }
  front_plot(dir, "sweep_pareto", "TBT against energy per token, every point: " + context_of(s, all_axes(s)),
             "TBT (us)", "energy per token (uJ)", series, false, gp);
}

/// A serving sweep: goodput along the first axis; per strategy a heatmap of the best goodput over the
/// offered rates across the first two other axes; goodput per watt against goodput per cm^2 of each
/// design at its best rate, with the front.
void serve_plots(const std::string& dir, const SweepSpec& s, const std::vector<Row>& rows,
                 const std::vector<std::string>& strategies, const std::vector<const SweepAxis*>& num,
                 std::ostringstream& gp) {
  const SweepAxis* rate = nullptr;
  std::vector<const SweepAxis*> design;
  for (const SweepAxis* a : num) {
    if (a->path == "serve.rate")
      rate = a;
    else
      design.push_back(a);
  }
  // Along the first design axis, each point at its best rate; with no design axis, along the rate.
  line_plot(dir, s, rows, strategies, design.empty() ? *rate : *design[0], "goodput_requests_per_s", "sweep_goodput",
            "goodput (requests/s)", gp, design.empty() ? nullptr : rate);
  if (design.size() >= 2)
    for (const std::string& st : strategies)
      heatmap(dir, s, rows, st, *design[0], *design[1],
              {"sweep_goodput_" + st,
               st + ": goodput (requests/s within the SLO)" + std::string(rate ? ", best offered rate" : ""),
               "requests/s", "defined (0 '#f7f7f7', 1 '#2166ac')", "[0:*]",
               [](const Row& r) { return r.cell.at("goodput_requests_per_s"); }, rate},
              gp);
  // Each design (every axis but the rate) at its best rate.
  std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> series;
  std::vector<std::string> labels;  // "peak_tflops=10, gbytes_per_s=100": the design's axis values
  for (const std::string& st : strategies) {
    std::map<std::string, const Row*> best;
    for (const Row& r : rows) {
      if (r.cell.at("strategy") != st) continue;
      std::string key;
      for (const SweepAxis& a : s.axes)
        if (&a != rate) key += r.cell.at(a.path) + "\x1f";
      const Row*& b = best[key];
      if (!b || number_of(r, "goodput_requests_per_s") > number_of(*b, "goodput_requests_per_s")) b = &r;
    }
    series.push_back({st, {}});
    for (const auto& [key, r] : best) {
      series.back().second.emplace_back(number_of(*r, "goodput_requests_per_j"),
                                        100 * number_of(*r, "goodput_requests_per_s_per_logic_mm2"));
      std::string label;
      for (const SweepAxis* a : design)
        label += (label.empty() ? "" : ", ") + a->path.substr(a->path.rfind('.') + 1) + "=" + r->cell.at(a->path);
      labels.push_back(label);
    }
  }
  // Per cm^2 of logic: DRAM's area is set by the capacity and would flatten the compute and link axes.
  front_plot(
      dir, "sweep_pareto",
      "goodput per watt against goodput per cm^2 of logic, each design at its best rate: " + context_of(s, all_axes(s)),
      "goodput per watt (requests/J)", "goodput per cm^2 of logic silicon (requests/s/cm^2)", series, true, gp,
      &labels);
}

}  // namespace

std::string sweep_plots(const std::string& dir, const SweepSpec& s, const std::string& csv) {
  std::vector<std::string> header;
  const std::vector<Row> rows = parse_csv(csv, header);
  std::vector<const SweepAxis*> num;
  for (const SweepAxis& a : s.axes)
    if (varying_axis(a)) num.push_back(&a);
  if (rows.empty() || num.empty()) return "plots skipped: no axis with two or more values, or no results";
  std::vector<std::string> strategies;
  for (const Row& r : rows)
    if (std::find(strategies.begin(), strategies.end(), r.cell.at("strategy")) == strategies.end())
      strategies.push_back(r.cell.at("strategy"));
  std::ostringstream gp;
  if (s.serving())
    serve_plots(dir, s, rows, strategies, num, gp);
  else
    run_plots(dir, s, rows, strategies, num, gp);
  {
    std::ofstream f(dir + "/sweep_plots.gp");
    f << gp.str();
  }
  const ProcessResult r = run_program({"gnuplot", "sweep_plots.gp"}, dir, dir + "/sweep_plots.log");
  if (!r.started) return "plots skipped: gnuplot is not installed (bash .ci/install-deps.sh installs it)";
  if (r.exit_code != 0) return "plots failed: gnuplot's messages are in sweep_plots.log";
  return "";
}

}  // namespace nmpsim::apps
