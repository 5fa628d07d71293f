#include "nmpsim/apps/sweep.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "nmpsim/apps/run_report.h"
#include "nmpsim/apps/run_spec.h"
#include "nmpsim/apps/subprocess.h"
#include "nmpsim/base/input_file.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/moe_model.h"

namespace nmpsim::apps {

namespace {

std::string csv_cell(const nlohmann::json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return q + "\"";
}

/// A file of a sweep's directory ("" if it cannot be read: a point without a result).
std::string read_text(const std::string& path) {
  try {
    return base::read_input_file(path, size_t{64} << 20);
  } catch (const base::InputError&) {
    return "";
  }
}

/// The times results.csv reads from every strategy of a point's summary.json.
const char* const kResultFields[] = {"mean_tbt_us",    "attention_us", "allreduce_us",
                                     "moe_compute_us", "moe_comm_us",  "other_us"};

}  // namespace

nlohmann::json point_summary(const std::string& dir, const SweepPoint& p) {
  const nlohmann::json meta = nlohmann::json::parse(read_text(dir + "/point.json"), nullptr, false);
  if (meta.is_discarded() || !meta.is_object() || meta.value("spec", nlohmann::json()) != p.spec) return nullptr;
  nlohmann::json sum;
  try {  // strictly: a damaged file (a key twice, a number that overflows) is no result
    sum = base::parse_json_text(read_text(dir + "/summary.json"), "summary.json");
  } catch (const mapping::InputError&) {
    return nullptr;
  }
  if (!sum.is_object() || !sum.contains("strategies")) return nullptr;
  const nlohmann::json& st = sum["strategies"];
  if (!st.is_object() || st.empty()) return nullptr;
  // Complete: one entry per strategy of the point (when it lists them), each with every time results.csv reads.
  const nlohmann::json listed = p.spec.value("strategies", nlohmann::json());
  if (listed.is_array() && listed.size() != st.size()) return nullptr;
  for (const auto& [name, r] : st.items())
    for (const char* k : kResultFields)
      if (!r.is_object() || !r.contains(k) || !r[k].is_number() || !(r[k].get<double>() >= 0)) return nullptr;
  return sum;
}

bool point_done(const std::string& dir, const SweepPoint& p) { return !point_summary(dir, p).is_null(); }

std::string results_csv(const SweepSpec& s, const std::vector<SweepPoint>& points, const std::string& out_dir,
                        SweepTally* tally) {
  SweepTally count;
  std::vector<std::string> paths;  // axis columns: product axes, then explicit points' paths
  for (const SweepAxis& a : s.axes) paths.push_back(a.path);
  for (const nlohmann::json& p : s.points)
    for (const auto& kv : p.items())
      if (std::find(paths.begin(), paths.end(), kv.key()) == paths.end()) paths.push_back(kv.key());
  std::string csv = "point";
  for (const std::string& p : paths) csv += "," + csv_cell(p);
  csv +=
      ",strategy,mean_tbt_us,attention_us,allreduce_us,moe_compute_us,moe_comm_us,other_us,energy_per_token_uj,"
      "speedup_vs_" +
      s.baseline + ",ttft_us,exposed_comm_us,hidden_comm_us,status\n";
  for (const SweepPoint& p : points) {
    const std::string dir = out_dir + "/points/" + p.id;
    std::string lead = p.id;
    for (const std::string& path : paths) lead += "," + (p.values.contains(path) ? csv_cell(p.values[path]) : "");
    const nlohmann::json sum = point_summary(dir, p);
    if (sum.is_null()) {
      const std::string err = read_text(dir + "/error.txt");
      const bool failed = !err.empty();
      csv += lead + ",,,,,,,,,,,,," +
             csv_cell(failed ? "failed: " + err : "missing: no complete result in points/" + p.id) + "\n";
      ++(failed ? count.failed : count.missing);
      continue;
    }
    ++count.complete;
    const nlohmann::json& st = sum["strategies"];
    const double base = st.contains(s.baseline) ? st[s.baseline].value("mean_tbt_us", 0.0) : 0.0;
    for (const auto& [name, r] : st.items()) {
      char row[512];
      const double tbt = r.value("mean_tbt_us", 0.0);
      std::snprintf(row, sizeof row, ",%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,", csv_cell(name).c_str(), tbt,
                    r.value("attention_us", 0.0), r.value("allreduce_us", 0.0), r.value("moe_compute_us", 0.0),
                    r.value("moe_comm_us", 0.0), r.value("other_us", 0.0));
      std::string line = lead + row;
      if (r.contains("energy_per_token_uj")) line += std::to_string(r["energy_per_token_uj"].get<double>());
      line += ",";
      if (base > 0 && tbt > 0) line += std::to_string(base / tbt);
      for (const char* k : {"ttft_us", "exposed_comm_us", "hidden_comm_us"}) {  // empty where a run has none
        line += ",";
        if (r.contains(k) && r[k].is_number()) line += std::to_string(r[k].get<double>());
      }
      csv += line + ",ok\n";
    }
  }
  if (tally) *tally = count;
  return csv;
}

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
  if (b.contains("batch") && !is_axis("batch")) parts.push_back("batch " + b["batch"].dump());
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

/// TBT against energy per token of every point and strategy, and the front no other point beats
/// on both (lower is better on both axes).
void pareto_plot(const std::string& dir, const SweepSpec& s, const std::vector<Row>& rows,
                 const std::vector<std::string>& strategies, std::ostringstream& gp) {
  std::vector<std::pair<double, double>> all;
  std::ofstream dat(dir + "/sweep_pareto.dat");
  for (const std::string& st : strategies) {
    dat << "# " << st << "\n";
    for (const Row& r : rows)
      if (r.cell.at("strategy") == st && !r.cell.at("energy_per_token_uj").empty()) {
        all.emplace_back(std::stod(r.cell.at("mean_tbt_us")), std::stod(r.cell.at("energy_per_token_uj")));
        dat << all.back().first << " " << all.back().second << "\n";
      }
    dat << "\n\n";
  }
  if (all.empty()) return;
  std::sort(all.begin(), all.end());
  dat << "# front\n";
  double best = 1e300;
  for (const auto& [t, e] : all)
    if (e < best) {
      dat << t << " " << e << "\n";
      best = e;
    }
  gp << "reset\nset terminal pngcairo size 900,600 font 'sans,10' noenhanced\nset output 'sweep_pareto.png'\n"
     << "set title " << gp_quote("TBT against energy per token, every point: " + context_of(s, all_axes(s))) << "\n"
     << "set xlabel 'TBT (us)'\nset ylabel 'energy per token (uJ)'\nset grid\nset key outside right\nplot ";
  for (size_t k = 0; k < strategies.size(); ++k)
    gp << "'sweep_pareto.dat' index " << k << " using 1:2 with points pt 7 title " << gp_quote(strategies[k]) << ", ";
  gp << "'sweep_pareto.dat' index " << strategies.size()
     << " using 1:2 with steps lw 2 lc 'black' title 'Pareto front'\n";
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

/// Speedup over the baseline across axes x and y (the other axes at their first value), one heatmap per
/// strategy: the data files in `dir` and their gnuplot commands on `gp`.
void speedup_plots(const std::string& dir, const SweepSpec& s, const std::vector<Row>& rows,
                   const std::vector<std::string>& strategies, const SweepAxis& x, const SweepAxis& y,
                   std::ostringstream& gp) {
  auto fixed = [&](const Row& r, const std::vector<const SweepAxis*>& free) { return held_fixed(s, r, free); };
  const std::string col = "speedup_vs_" + s.baseline;
  for (const std::string& st : strategies) {
    if (st == s.baseline) continue;
    const std::string file = "sweep_speedup_" + st + ".dat";
    std::ofstream dat(dir + "/" + file);
    for (size_t j = 0; j < y.values.size(); ++j) {
      for (size_t i = 0; i < x.values.size(); ++i)
        for (const Row& r : rows)
          if (r.cell.at("strategy") == st && r.cell.at(x.path) == text_of(x.values[i]) &&
              r.cell.at(y.path) == text_of(y.values[j]) && fixed(r, {&x, &y}) && !r.cell.at(col).empty())
            dat << i << " " << j << " " << r.cell.at(col) << "\n";
      dat << "\n";
    }
    gp << "reset\nset terminal pngcairo size 800,640 font 'sans,10' noenhanced\nset output "
       << gp_quote("sweep_speedup_" + st + ".png") << "\nset title "
       << gp_quote(st + ": speedup over " + s.baseline + " (TBT ratio, > 1 is faster): " + context_of(s, {&x, &y}))
       << "\nset xlabel " << gp_quote(x.path) << "\nset ylabel " << gp_quote(y.path)
       << "\nset cblabel 'speedup'\nset palette "
       << "defined (0 '#b2182b', 1 '#f7f7f7', 2 '#2166ac')\nset cbrange [0:2]\nset xtics (";
    for (size_t i = 0; i < x.values.size(); ++i) gp << (i ? ", " : "") << gp_quote(text_of(x.values[i])) << " " << i;
    gp << ")\nset ytics (";
    for (size_t j = 0; j < y.values.size(); ++j) gp << (j ? ", " : "") << gp_quote(text_of(y.values[j])) << " " << j;
    gp << ")\nplot " << gp_quote(file) << " using 1:2:3 with image notitle, " << gp_quote(file)
       << " using 1:2:(sprintf('%.2f', $3)) with labels notitle\n";
  }
}

}  // namespace

std::string sweep_plots(const std::string& dir, const SweepSpec& s, const std::string& csv) {
  std::vector<std::string> header;
  const std::vector<Row> rows = parse_csv(csv, header);
  std::vector<const SweepAxis*> num;
  for (const SweepAxis& a : s.axes)
    if (varying_axis(a)) num.push_back(&a);
  if (rows.empty() || num.empty()) return "plots skipped: no axis with two or more values, or no results";
  auto fixed = [&](const Row& r, const std::vector<const SweepAxis*>& free) { return held_fixed(s, r, free); };
  std::vector<std::string> strategies;
  for (const Row& r : rows)
    if (std::find(strategies.begin(), strategies.end(), r.cell.at("strategy")) == strategies.end())
      strategies.push_back(r.cell.at("strategy"));
  std::ostringstream gp;
  const SweepAxis& x = *num[0];
  // TBT along the first axis with several values, one line per strategy.
  {
    std::ofstream dat(dir + "/sweep_tbt.dat");
    for (const std::string& st : strategies) {
      dat << "# " << st << "\n";
      for (size_t i = 0; i < x.values.size(); ++i)
        for (const Row& r : rows)
          if (r.cell.at("strategy") == st && r.cell.at(x.path) == text_of(x.values[i]) && fixed(r, {&x}))
            dat << i << " " << r.cell.at("mean_tbt_us") << "\n";
      dat << "\n\n";
    }
    gp << "set terminal pngcairo size 900,560 font 'sans,10' noenhanced\nset output 'sweep_tbt.png'\n"
       << "set title " << gp_quote("TBT along " + x.path + ": " + context_of(s, {&x})) << "\n"
       << "set xlabel " << gp_quote(x.path) << "\nset ylabel 'TBT (us)'\nset grid\nset key outside right\nset xtics (";
    for (size_t i = 0; i < x.values.size(); ++i) gp << (i ? ", " : "") << gp_quote(text_of(x.values[i])) << " " << i;
    gp << ")\nplot ";
    for (size_t k = 0; k < strategies.size(); ++k)
      gp << (k ? ", " : "") << "'sweep_tbt.dat' index " << k << " using 1:2 with linespoints title "
         << gp_quote(strategies[k]);
    gp << "\n";
  }
  if (num.size() >= 2) speedup_plots(dir, s, rows, strategies, x, *num[1], gp);
  pareto_plot(dir, s, rows, strategies, gp);
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
