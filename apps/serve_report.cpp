// The outputs of `nmpsim serve` (apps/serve_report.h).
#include "nmpsim/apps/serve_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "nmpsim/apps/subprocess.h"

namespace nmpsim::apps::serve {

std::string requests_csv(const ServeRun& run) {
  std::ostringstream os;
  os << "request,arrival_s,prompt_tokens,output_tokens,first_token_s,finish_s,ttft_ms,tpot_ms,latency_ms,preemptions\n";
  char buf[256];
  for (size_t i = 0; i < run.requests.size(); ++i) {
    const RequestResult& r = run.requests[i];
    std::snprintf(buf, sizeof buf, "%zu,%.9g,%d,%d,%.9g,%.9g,%.6g,%.6g,%.6g,%d\n", i + 1, r.arrival_s, r.prompt_tokens,
                  r.output_tokens, r.first_token_s, r.finish_s, r.ttft_s() * 1e3, r.tpot_s() * 1e3, r.latency_s() * 1e3,
                  r.preemptions);
    os << buf;
  }
  return os.str();
}

std::string steps_csv(const ServeRun& run) {
  std::ostringstream os;
  os << "step,end_s,decode_tokens,prefill_tokens,context_tokens\n";
  for (size_t i = 0; i < run.steps.size(); ++i)
    os << i << ',' << run.step_end_s[i] << ',' << run.steps[i].decode_tokens << ',' << run.steps[i].prefill_tokens
       << ',' << run.steps[i].context_tokens << '\n';
  return os.str();
}

nlohmann::json summary_json(const ServeSummary& s, const ServeRun& run, double slo_ttft_ms, double slo_tpot_ms,
                            const SchedulerConfig& c, size_t simulated) {
  auto ms = [](double a, double b, double d) {
    return nlohmann::json{{"p50", a * 1e3}, {"p90", b * 1e3}, {"p99", d * 1e3}};
  };
  nlohmann::json lat = ms(s.latency_p50_s, s.latency_p90_s, s.latency_p99_s);
  lat["mean"] = s.latency_mean_s * 1e3;
  return {{"requests", s.requests},
          {"duration_s", s.duration_s},
          {"ttft_ms", ms(s.ttft_p50_s, s.ttft_p90_s, s.ttft_p99_s)},
          {"tpot_ms", ms(s.tpot_p50_s, s.tpot_p90_s, s.tpot_p99_s)},
          {"latency_ms", lat},
          {"throughput_requests_per_s", s.throughput_requests_per_s},
          {"throughput_output_tokens_per_s", s.throughput_tokens_per_s},
          {"goodput_requests_per_s", s.goodput_requests_per_s},
          {"slo_attained", s.slo_attained},
          {"slo_ttft_ms", slo_ttft_ms},
          {"slo_tpot_ms", slo_tpot_ms},
          {"mean_requests_in_system", s.mean_in_system},
          {"energy_per_output_token_j", s.energy_per_token_j},
          {"steps", run.steps.size()},
          {"simulated_step_shapes", simulated},
          {"preemptions", run.preemptions},
          {"peak_kv_tokens", run.peak_kv_tokens},
          {"scheduler", {{"token_budget", c.token_budget}, {"max_seqs", c.max_seqs}, {"kv_tokens", c.kv_tokens}}}};
}

std::string rates_csv(const std::vector<RatePoint>& points) {
  std::ostringstream os;
  os << "offered_rate_per_s,throughput_requests_per_s,goodput_requests_per_s,slo_attained,ttft_p50_ms,ttft_p99_ms,"
        "tpot_p50_ms,tpot_p99_ms,mean_power_w,goodput_requests_per_j\n";
  char buf[320];
  for (const RatePoint& p : points) {
    const ServeSummary& s = p.summary;
    std::snprintf(buf, sizeof buf, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", p.rate_per_s,
                  s.throughput_requests_per_s, s.goodput_requests_per_s, s.slo_attained, s.ttft_p50_s * 1e3,
                  s.ttft_p99_s * 1e3, s.tpot_p50_s * 1e3, s.tpot_p99_s * 1e3, p.power.mean_power_w,
                  p.power.goodput_requests_per_j);
    os << buf;
  }
  return os.str();
}

nlohmann::json rates_json(const std::vector<RatePoint>& points) {
  nlohmann::json a = nlohmann::json::array();
  for (const RatePoint& p : points)
    a.push_back({{"offered_rate_per_s", p.rate_per_s},
                 {"throughput_requests_per_s", p.summary.throughput_requests_per_s},
                 {"goodput_requests_per_s", p.summary.goodput_requests_per_s},
                 {"slo_attained", p.summary.slo_attained},
                 {"ttft_ms", {{"p50", p.summary.ttft_p50_s * 1e3}, {"p99", p.summary.ttft_p99_s * 1e3}}},
                 {"tpot_ms", {{"p50", p.summary.tpot_p50_s * 1e3}, {"p99", p.summary.tpot_p99_s * 1e3}}},
                 {"mean_power_w", p.power.mean_power_w},
                 {"goodput_requests_per_j", p.power.goodput_requests_per_j}});
  return a;
}

namespace {
/// cdf.dat: two blocks (TTFT, TPOT), each "ms fraction" sorted; returns whether TPOT has points.
bool write_cdf_data(const std::string& path, const ServeRun& run) {
  std::vector<double> ttft, tpot;
  for (const RequestResult& r : run.requests) {
    ttft.push_back(r.ttft_s() * 1e3);
    if (r.output_tokens > 1) tpot.push_back(r.tpot_s() * 1e3);
  }
  std::ofstream f(path);
  for (std::vector<double>* v : {&ttft, &tpot}) {
    std::sort(v->begin(), v->end());
    for (size_t i = 0; i < v->size(); ++i) f << (*v)[i] << ' ' << double(i + 1) / double(v->size()) << '\n';
    f << "\n\n";
  }
  return !tpot.empty();
}

/// A gnuplot string literal: the text with quotes and backslashes removed (it is a label only).
std::string label(std::string s) {
  s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c == '"' || c == '\\' || c < 0x20; }), s.end());
  return s;
}
}  // namespace

std::string write_serve_plots(const std::string& dir, const ServeRun* run, const std::vector<RatePoint>& rates,
                              const std::string& title) {
  std::ostringstream gp;
  gp << "set terminal pngcairo size 900,520\nset grid\nset key bottom right\n";
  if (run != nullptr) {
    const bool tpot = write_cdf_data(dir + "/cdf.dat", *run);
    gp << "set output 'latency_cdf.png'\nset title \"" << label(title) << "\"\nset logscale x\n"
       << "set xlabel 'milliseconds'\nset ylabel 'fraction of requests'\nset yrange [0:1]\n"
       << "plot 'cdf.dat' index 0 with lines lw 2 title 'TTFT'"
       << (tpot ? ", '' index 1 with lines lw 2 title 'TPOT'" : "") << "\nunset logscale x\nset yrange [*:*]\n";
  }
  if (rates.size() >= 2) {
    const std::string csv = rates_csv(rates);
    std::ofstream(dir + "/rates.dat") << csv.substr(csv.find('\n') + 1);  // without the header
    gp << "set output 'goodput.png'\nset title \"" << label(title) << "\"\nset datafile separator ','\n"
       << "set xlabel 'offered requests per second'\nset ylabel 'requests per second'\nset key top left\n"
       << "plot 'rates.dat' using 1:2 with linespoints lw 2 title 'throughput', '' using 1:3 with linespoints lw 2 "
          "title 'goodput within the SLO', x with lines dt 2 title 'offered'\n";
  }
  return run_gnuplot(dir, "serve_plots", gp.str());
}

}  // namespace nmpsim::apps::serve
