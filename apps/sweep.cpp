#include "apps/sweep.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "apps/hw_overrides.h"
#include "apps/run_report.h"
#include "apps/run_spec.h"
#include "apps/subprocess.h"
#include "hw/hardware_spec.h"
#include "mapping/json_fields.h"
#include "mapping/moe_model.h"

namespace nmpsim::apps {

namespace {

/// Run-spec fields an axis may set directly (the rest are hardware paths).
const std::vector<std::string> kRunFields = {
    "batch",    "steps",      "context",  "attn_tp",      "first_token",     "profile_tokens",
    "seed",     "fidelity",   "policies", "accounting",   "trace",           "model",
    "hardware", "strategies", "strategy", "weight_bytes", "activation_bytes"};

bool is_run_field(const std::string& p) {
  return std::find(kRunFields.begin(), kRunFields.end(), p) != kRunFields.end();
}

/// A model field as an object {"preset", "weight_bytes", "activation_bytes"} (a preset given by name).
nlohmann::json& model_object(nlohmann::json& spec) {
  nlohmann::json& m = spec["model"];
  if (m.is_null()) m = "mixtral-8x7b";
  if (m.is_string()) m = {{"preset", m.get<std::string>()}};
  return m;
}

void set_field(nlohmann::json& spec, const std::string& path, const nlohmann::json& v) {
  if (path == "strategy" || path == "strategies") {
    nlohmann::json list = nlohmann::json::array();
    std::stringstream ss(v.is_string() ? v.get<std::string>() : v.dump());
    for (std::string name; std::getline(ss, name, ',');)
      if (!name.empty()) list.push_back({{"name", name}});
    spec["strategies"] = list;
  } else if (path == "model") {
    nlohmann::json& m = spec["model"];
    if (m.is_object() && m.contains("preset") && v.is_string())
      m["preset"] = v;
    else
      m = v;
  } else if (path == "weight_bytes" || path == "activation_bytes") {
    model_object(spec)[path] = v;
  } else {
    spec[path] = v;
  }
}

std::string csv_cell(const nlohmann::json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return q + "\"";
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

SweepAxis parse_axis(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw mapping::InputError("--axis: expected PATH=V1,V2,... (e.g. compute.peak_tflops=2.5,5,10), got '" + text +
                              "'");
  SweepAxis a;
  a.path = text.substr(0, eq);
  std::stringstream ss(text.substr(eq + 1));
  for (std::string v; std::getline(ss, v, ',');) {
    if (v.empty()) throw mapping::InputError("--axis " + a.path + ": an empty value in '" + text + "'");
    a.values.push_back(parse_value(v));
  }
  return a;
}

SweepSpec sweep_from_json(const nlohmann::json& j, const std::string& where) {
  const mapping::JsonFields f(j, where, "");
  SweepSpec s;
  if (f.has("base")) {
    s.base = f.raw("base");
    if (!s.base.is_object()) f.fail("base", "expected a run spec (an object)");
  }
  if (f.has("axes")) {
    const nlohmann::json& axes = f.raw("axes");
    if (!axes.is_array()) f.fail("axes", "expected a list of {\"path\", \"values\"}");
    for (size_t i = 0; i < axes.size(); ++i) {
      const mapping::JsonFields a(axes[i], where, "axes[" + std::to_string(i) + "]");
      SweepAxis ax;
      ax.path = a.string("path");
      const nlohmann::json& v = a.raw("values");
      if (!v.is_array() || v.empty()) a.fail("values", "expected a non-empty list");
      ax.values.assign(v.begin(), v.end());
      a.no_unknown_keys();
      s.axes.push_back(ax);
    }
  }
  if (f.has("points")) {
    const nlohmann::json& p = f.raw("points");
    if (!p.is_array()) f.fail("points", "expected a list of {path: value} objects");
    for (const auto& x : p) {
      if (!x.is_object() || x.empty()) f.fail("points", "every point must be a non-empty {path: value} object");
      s.points.push_back(x);
    }
  }
  s.baseline = f.string("baseline", s.baseline);
  f.no_unknown_keys();
  if (s.axes.empty() && s.points.empty()) f.fail("axes", "a sweep needs at least one axis or point");
  return s;
}

nlohmann::json sweep_to_json(const SweepSpec& s) {
  nlohmann::json axes = nlohmann::json::array();
  for (const SweepAxis& a : s.axes) axes.push_back({{"path", a.path}, {"values", a.values}});
  return {{"base", s.base}, {"axes", axes}, {"points", s.points}, {"baseline", s.baseline}};
}

std::vector<SweepPoint> expand(const SweepSpec& s) {
  std::vector<nlohmann::json> combos{nlohmann::json::object()};
  for (const SweepAxis& a : s.axes) {
    std::vector<nlohmann::json> next;
    for (const nlohmann::json& c : combos)
      for (const nlohmann::json& v : a.values) {
        next.push_back(c);
        next.back()[a.path] = v;
      }
    combos = std::move(next);
  }
  if (s.axes.empty()) combos.clear();
  combos.insert(combos.end(), s.points.begin(), s.points.end());
  if (combos.size() > 100000)
    throw mapping::InputError("sweep: " + std::to_string(combos.size()) + " points; at most 100000");
  std::vector<SweepPoint> out;
  for (size_t i = 0; i < combos.size(); ++i) {
    SweepPoint p;
    char id[32];
    std::snprintf(id, sizeof id, "p%04zu", i);
    p.id = id;
    p.values = combos[i];
    p.spec = s.base;
    const std::string where = "sweep point " + p.id;
    // The hardware axis first, then run fields, then hardware paths on top of the hardware.
    if (p.values.contains("hardware")) p.spec["hardware"] = p.values["hardware"];
    std::vector<std::string> sets;
    for (const auto& [path, v] : p.values.items()) {
      if (path == "hardware") continue;
      if (is_run_field(path))
        set_field(p.spec, path, v);
      else
        sets.push_back(path + "=" + (v.is_string() ? nlohmann::json(v).dump() : v.dump()));
    }
    try {
      if (!sets.empty())
        p.spec["hardware"] = override_hardware(p.spec.value("hardware", nlohmann::json("hdmoe-4x8-5t50g")), sets);
      if (p.spec.contains("hardware") && p.spec["hardware"].is_object())
        (void)hw::hardware_from_json(p.spec["hardware"], "hardware");
      (void)run_spec_from_json(p.spec, "spec");
    } catch (const mapping::InputError& e) {
      throw mapping::InputError(where + " (" + p.values.dump() + "): " + e.what());
    }
    out.push_back(std::move(p));
  }
  return out;
}

nlohmann::json point_summary(const std::string& dir, const SweepPoint& p) {
  const nlohmann::json meta = nlohmann::json::parse(read_text(dir + "/point.json"), nullptr, false);
  if (meta.is_discarded() || !meta.is_object() || meta.value("spec", nlohmann::json()) != p.spec) return nullptr;
  nlohmann::json sum = nlohmann::json::parse(read_text(dir + "/summary.json"), nullptr, false);
  const bool ok = !sum.is_discarded() && sum.is_object() && sum.contains("strategies") && !sum["strategies"].empty();
  return ok ? sum : nlohmann::json(nullptr);
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
      s.baseline + ",status\n";
  for (const SweepPoint& p : points) {
    const std::string dir = out_dir + "/points/" + p.id;
    std::string lead = p.id;
    for (const std::string& path : paths) lead += "," + (p.values.contains(path) ? csv_cell(p.values[path]) : "");
    const nlohmann::json sum = point_summary(dir, p);
    if (sum.is_null()) {
      const std::string err = read_text(dir + "/error.txt");
      if (!err.empty()) {
        csv += lead + ",,,,,,,,,," + csv_cell("failed: " + err) + "\n";
        ++count.failed;
      }
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

std::string sweep_plots(const std::string& dir, const SweepSpec& s, const std::string& csv) {
  std::vector<std::string> header;
  const std::vector<Row> rows = parse_csv(csv, header);
  std::vector<const SweepAxis*> num;
  for (const SweepAxis& a : s.axes)
    if (varying_axis(a)) num.push_back(&a);
  if (rows.empty() || num.empty()) return "plots skipped: no axis with two or more values, or no results";
  // Other axes are held at their first value.
  auto fixed = [&](const Row& r, const std::vector<const SweepAxis*>& free) {
    for (const SweepAxis& a : s.axes) {
      if (std::find(free.begin(), free.end(), &a) != free.end()) continue;
      if (r.cell.at(a.path) != text_of(a.values.front())) return false;
    }
    return true;
  };
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
  // Speedup over the baseline across the first two such axes, one heatmap per strategy.
  if (num.size() >= 2) {
    const SweepAxis& y = *num[1];
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
