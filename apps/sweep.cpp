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

namespace {

/// Complete: one entry per strategy of the point (when it lists them), each with every value
/// results.csv reads.
bool complete(const nlohmann::json& st, const SweepPoint& p) {
  if (!st.is_object() || st.empty()) return false;
  const nlohmann::json listed = p.spec.value("strategies", nlohmann::json());
  if (listed.is_array() && listed.size() != st.size()) return false;
  const bool serving = p.spec.contains("serve");
  auto number = [](const nlohmann::json& r, const char* k) {
    return r.is_object() && r.contains(k) && r[k].is_number() && r[k].get<double>() >= 0;
  };
  for (const auto& [name, r] : st.items()) {
    if (serving && (!number(r, "goodput_requests_per_s") || !r.contains("power") || !number(r["power"], "area_mm2")))
      return false;
    if (!serving)
      for (const char* k : kResultFields)
        if (!number(r, k)) return false;
  }
  return true;
}

/// One strategy's cells of results.csv, after the point and axis columns.
std::string run_cells(const std::string& name, const nlohmann::json& r, double base) {
  char row[512];
  const double tbt = r.value("mean_tbt_us", 0.0);
  std::snprintf(row, sizeof row, ",%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,", csv_cell(name).c_str(), tbt,
                r.value("attention_us", 0.0), r.value("allreduce_us", 0.0), r.value("moe_compute_us", 0.0),
                r.value("moe_comm_us", 0.0), r.value("other_us", 0.0));
  std::string line = row;
  if (r.contains("energy_per_token_uj")) line += std::to_string(r["energy_per_token_uj"].get<double>());
  line += ",";
  if (base > 0 && tbt > 0) line += std::to_string(base / tbt);
  for (const char* k : {"ttft_us", "exposed_comm_us", "hidden_comm_us"}) {  // empty where a run has none
    line += ",";
    if (r.contains(k) && r[k].is_number()) line += std::to_string(r[k].get<double>());
  }
  return line;
}

const char kServeColumns[] =
    ",strategy,goodput_requests_per_s,throughput_requests_per_s,slo_attained,ttft_p50_ms,ttft_p99_ms,tpot_p50_ms,"
    "tpot_p99_ms,energy_per_output_token_j,mean_power_w,area_mm2,logic_area_mm2,goodput_requests_per_j,"
    "goodput_requests_per_s_per_mm2,goodput_requests_per_s_per_logic_mm2,status\n";

std::string serve_cells(const std::string& name, const nlohmann::json& r) {
  const nlohmann::json& pw = r["power"];
  auto pct = [&](const char* k, const char* p) { return r.contains(k) && r[k].is_object() ? r[k].value(p, 0.0) : 0.0; };
  char row[640];
  std::snprintf(row, sizeof row, ",%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g",
                csv_cell(name).c_str(), r.value("goodput_requests_per_s", 0.0),
                r.value("throughput_requests_per_s", 0.0), r.value("slo_attained", 0.0), pct("ttft_ms", "p50"),
                pct("ttft_ms", "p99"), pct("tpot_ms", "p50"), pct("tpot_ms", "p99"),
                r.value("energy_per_output_token_j", 0.0), pw.value("mean_power_w", 0.0), pw.value("area_mm2", 0.0),
                pw.value("logic_area_mm2", 0.0), pw.value("goodput_requests_per_j", 0.0),
                pw.value("goodput_requests_per_s_per_mm2", 0.0), pw.value("goodput_requests_per_s_per_logic_mm2", 0.0));
  return row;
}

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
  if (!sum.is_object() || !sum.contains("strategies") || !complete(sum["strategies"], p)) return nullptr;
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
  const std::string columns =
      s.serving() ? kServeColumns
                  : ",strategy,mean_tbt_us,attention_us,allreduce_us,moe_compute_us,moe_comm_us,other_us,"
                    "energy_per_token_uj,speedup_vs_" +
                        s.baseline + ",ttft_us,exposed_comm_us,hidden_comm_us,status\n";
  csv += columns;
  const std::string empty(static_cast<size_t>(std::count(columns.begin(), columns.end(), ',')) - 1, ',');
  for (const SweepPoint& p : points) {
    const std::string dir = out_dir + "/points/" + p.id;
    std::string lead = p.id;
    for (const std::string& path : paths) lead += "," + (p.values.contains(path) ? csv_cell(p.values[path]) : "");
    const nlohmann::json sum = point_summary(dir, p);
    if (sum.is_null()) {
      const std::string err = read_text(dir + "/error.txt");
      const bool failed = !err.empty();
      csv += lead + empty + "," +
             csv_cell(failed ? "failed: " + err : "missing: no complete result in points/" + p.id) + "\n";
      ++(failed ? count.failed : count.missing);
      continue;
    }
    ++count.complete;
    const nlohmann::json& st = sum["strategies"];
    const double base = st.contains(s.baseline) ? st[s.baseline].value("mean_tbt_us", 0.0) : 0.0;
    for (const auto& [name, r] : st.items())
      csv += lead + (s.serving() ? serve_cells(name, r) : run_cells(name, r, base)) + ",ok\n";
  }
  if (tally) *tally = count;
  return csv;
}

}  // namespace nmpsim::apps
