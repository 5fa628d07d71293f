#include "nmpsim/apps/noc_curve.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/subprocess.h"
#include "nmpsim/apps/workers.h"
#include "nmpsim/base/output_files.h"
#include "nmpsim/base/parse.h"

namespace nmpsim::apps {

noc::TestbenchResult run_noc_testbench(const noc::TestbenchConfig& cfg, const RouterChoice& rc,
                                       const std::string& vcd_path, int vcd_node) {
  if (rc.kind == "engine") return noc::run_testbench(cfg);
  return noc::run_pin_testbench(cfg, router_factory(rc), [&](noc::PinMesh& m) {
    if (!vcd_path.empty()) m.router(vcd_node)->open_vcd(vcd_path);
  });
}

namespace {
double rate_of(const std::string& s) {
  const double v = base::parse_number(s, "--curve");
  if (!(v >= 0.0 && v <= 1.0))
    throw UsageError("--curve: '" + s + "' is not an offered load in [0, 1] (expected FROM:TO:STEP or R1,R2,...)");
  return v;
}

/// The model a router is compared with: the engine for the VC kind, the cycle model for look-ahead.
RouterChoice model_of(const RouterChoice& rc, const noc::NocConfig& noc) {
  return parse_router_choice(rc.router_kind == noc::RouterKind::kLookahead ? "sc" : "engine", "", false, noc);
}

std::string label_of(const RouterChoice& rc) {
  if (rc.kind == "engine" || rc.kind == "sc") return rc.kind;
  return rc.kind + ":" + rc.rtl_name;
}

struct Point {
  double latency = 0, accepted = 0;
  std::string failure;  // empty: the run passed its checks
};

Point point_of(const noc::TestbenchResult& r) {
  Point p{r.stats.packet_latency_cycles.avg, r.stats.accepted_flits_per_node_cycle, ""};
  // The first cause: a router's own error, else the stall (whose report starts with any check that
  // failed before it), else the failed check.
  if (!r.conservation_error.empty()) p.failure = r.conservation_error;
  if (r.stalled) p.failure = r.stall_report;
  if (!r.router_error.empty()) p.failure = "router error: " + r.router_error;
  return p;
}

std::string plot_script(const std::string& title, const std::string& a, const std::string& b) {
  std::ostringstream gp;
  gp << "set terminal pngcairo noenhanced size 1100,450 font ',11'\nset output 'curve.png'\n"
     << "set datafile separator ' '\nset multiplot layout 1,2 title '" << title << "'\n"
     << "set xlabel 'offered load (flits/node/cycle)'\nset key top left\n"
     << "set ylabel 'mean packet latency (cycles)'\nset logscale y\n"
     << "plot 'curve.dat' u 1:2 w lp lw 2 pt 7 t '" << a << "', '' u 1:4 w lp dt 2 pt 6 ps 1.5 t '" << b << "'\n"
     << "unset logscale y\nset ylabel 'accepted throughput (flits/node/cycle)'\n"
     << "plot 'curve.dat' u 1:3 w lp lw 2 pt 7 t '" << a << "', '' u 1:5 w lp dt 2 pt 6 ps 1.5 t '" << b
     << "', x w l lc rgb 'gray' t 'offered'\nunset multiplot\n";
  return gp.str();
}

void write_plot(base::OutputFiles& files, const std::string& path, const std::string& script, const std::string& data) {
  const std::string scratch = files.make_scratch_dir("");
  std::ofstream(scratch + "/curve.gp") << script;
  std::ofstream(scratch + "/curve.dat") << data;
  // gnuplot runs in the scratch directory and reads the script by name: no path reaches a shell.
  const ProcessResult r = run_program({"gnuplot", "curve.gp"}, scratch, scratch + "/gnuplot.log");
  if (!r.started) throw UsageError("--plot: gnuplot is not installed (bash .ci/install-deps.sh installs it)");
  if (r.exit_code != 0) throw UsageError("--plot: gnuplot failed on the curve");
  files.adopt(scratch + "/curve.png", path, "--plot");
}
}  // namespace

std::vector<double> parse_curve_rates(const std::string& text) {
  std::vector<double> rates;
  if (text.find(':') != std::string::npos) {
    std::vector<std::string> part;
    std::stringstream ss(text);
    for (std::string s; std::getline(ss, s, ':');) part.push_back(s);
    if (part.size() != 3) throw UsageError("--curve: '" + text + "' is not FROM:TO:STEP");
    const double from = rate_of(part[0]), to = rate_of(part[1]), step = rate_of(part[2]);
    if (step <= 0 || to < from) throw UsageError("--curve: '" + text + "' needs FROM <= TO and STEP > 0");
    for (int i = 0; from + i * step <= to + 1e-9; ++i) {
      if (i >= 200) throw UsageError("--curve: '" + text + "' gives more than 200 loads");
      rates.push_back(from + i * step);
    }
  } else {
    for (const std::string& item : base::split_items(text, "--curve")) {
      const double r = rate_of(item);
      if (std::find(rates.begin(), rates.end(), r) != rates.end())
        throw UsageError("--curve: the load " + item + " is listed twice");
      rates.push_back(r);
    }
    if (rates.size() > 200) throw UsageError("--curve: give 1 to 200 loads");
  }
  return rates;
}

int run_noc_curve(const noc::TestbenchConfig& cfg, const RouterChoice& rc, const std::vector<double>& rates,
                  const CurveOutputs& out) {
  const RouterChoice model = model_of(rc, cfg.noc);
  const bool same = label_of(model) == label_of(rc);
  const bool must_agree = !rc.own_rtl;  // nmp, la and the SystemC routers implement their model
  const int runs_per_rate = same ? 1 : 2;
  const int count = static_cast<int>(rates.size()) * runs_per_rate;
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i)
    names.push_back("load " + std::to_string(rates[i / runs_per_rate]) + " " +
                    label_of(i % runs_per_rate ? model : rc));
  int done = 0;
  const bool progress = !out.quiet && isatty(fileno(stderr));
  const std::vector<std::string> got = run_in_workers(
      count, available_cores(), names,
      [&](int i) {
        noc::TestbenchConfig c = cfg;
        c.traffic.injection_rate = rates[i / runs_per_rate];
        const Point p = point_of(run_noc_testbench(c, i % runs_per_rate ? model : rc));
        return nlohmann::json{{"latency", p.latency}, {"accepted", p.accepted}, {"failure", p.failure}}.dump();
      },
      [&](int) {
        if (progress) std::fprintf(stderr, "\r  %d of %d runs done", ++done, count);
      });
  if (progress) std::fprintf(stderr, "\r%*s\r", 30, "");
  const std::string a = label_of(rc), b = same ? a : label_of(model) + " (model)";
  std::FILE* rep = out.report;
  if (!out.quiet) {
    std::fprintf(rep, "  router %s beside %s; latency in cycles, loads in flits/node/cycle\n", a.c_str(),
                 same ? "itself (it is the model)" : ("its model, " + label_of(model)).c_str());
    std::fprintf(rep, "  %-8s %12s %10s   %12s %10s\n", "offered", "latency", "accepted", "model lat.", "accepted");
  }
  nlohmann::json points = nlohmann::json::array();
  std::ostringstream dat;
  int code = kExitOk;
  for (size_t k = 0; k < rates.size(); ++k) {
    const nlohmann::json r = nlohmann::json::parse(got[k * runs_per_rate]);
    const nlohmann::json m = nlohmann::json::parse(got[k * runs_per_rate + runs_per_rate - 1]);
    const bool differ = r["latency"] != m["latency"] || r["accepted"] != m["accepted"];
    for (const nlohmann::json* j : {&r, &m})
      if (!(*j)["failure"].get<std::string>().empty()) {
        std::fprintf(stderr, "nmpsim noc --curve: at load %.4f: %s\n", rates[k],
                     (*j)["failure"].get<std::string>().c_str());
        code = kExitCheckFailed;
      }
    if (differ && must_agree) {
      std::fprintf(stderr, "nmpsim noc --curve: at load %.4f %s disagrees with its model %s\n", rates[k], a.c_str(),
                   b.c_str());
      code = kExitCheckFailed;
    }
    if (!out.quiet)
      std::fprintf(rep, "  %-8.4f %12.3f %10.4f   %12.3f %10.4f%s\n", rates[k], r["latency"].get<double>(),
                   r["accepted"].get<double>(), m["latency"].get<double>(), m["accepted"].get<double>(),
                   differ ? (must_agree ? "  MISMATCH" : "  differs") : "");
    dat << rates[k] << ' ' << r["latency"] << ' ' << r["accepted"] << ' ' << m["latency"] << ' ' << m["accepted"]
        << '\n';
    points.push_back(
        {{"offered_flits_per_node_cycle", rates[k]},
         {"router", {{"avg_packet_latency_cycles", r["latency"]}, {"accepted_flits_per_node_cycle", r["accepted"]}}},
         {"model", {{"avg_packet_latency_cycles", m["latency"]}, {"accepted_flits_per_node_cycle", m["accepted"]}}}});
  }
  base::OutputFiles files;  // the JSON and the PNG, both or neither
  if (!out.json_path.empty())
    files.write(out.json_path,
                nlohmann::json{{"router", a}, {"model", label_of(model)}, {"points", points}}.dump(2) + "\n", "--json");
  if (!out.plot_path.empty()) {
    const std::string title =
        std::to_string(cfg.noc.width) + "x" + std::to_string(cfg.noc.height) + " mesh: " + a + " beside its model";
    write_plot(files, out.plot_path, plot_script(title, a, b), dat.str());
  }
  files.commit();
  if (!out.quiet && !out.plot_path.empty()) std::fprintf(rep, "  curves written to %s\n", out.plot_path.c_str());
  return code;
}

}  // namespace nmpsim::apps
