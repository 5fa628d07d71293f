// Percentiles, throughput and goodput of a serving run (apps/serve.h).
#include <algorithm>
#include <cmath>

#include "nmpsim/apps/serve.h"

namespace nmpsim::apps::serve {

namespace {
/// Nearest-rank percentile of sorted values (0 for none).
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}
}  // namespace

ServeSummary summarize(const ServeRun& run, double slo_ttft_s, double slo_tpot_s) {
  ServeSummary s;
  s.requests = static_cast<int>(run.requests.size());
  if (run.requests.empty()) return s;
  std::vector<double> ttft, tpot, lat;
  double first = run.requests.front().arrival_s, last = 0, tokens = 0, within = 0, lat_sum = 0;
  for (const RequestResult& r : run.requests) {
    first = std::min(first, r.arrival_s);
    last = std::max(last, r.finish_s);
    ttft.push_back(r.ttft_s());
    lat.push_back(r.latency_s());
    lat_sum += r.latency_s();
    if (r.output_tokens > 1) tpot.push_back(r.tpot_s());
    tokens += r.output_tokens;
    within += (slo_ttft_s <= 0 || r.ttft_s() <= slo_ttft_s) && (slo_tpot_s <= 0 || r.tpot_s() <= slo_tpot_s);
  }
  for (auto* v : {&ttft, &tpot, &lat}) std::sort(v->begin(), v->end());
  s.duration_s = last - first;
  s.ttft_p50_s = percentile(ttft, 0.5);
  s.ttft_p90_s = percentile(ttft, 0.9);
  s.ttft_p99_s = percentile(ttft, 0.99);
  s.tpot_p50_s = percentile(tpot, 0.5);
  s.tpot_p90_s = percentile(tpot, 0.9);
  s.tpot_p99_s = percentile(tpot, 0.99);
  s.latency_p50_s = percentile(lat, 0.5);
  s.latency_p90_s = percentile(lat, 0.9);
  s.latency_p99_s = percentile(lat, 0.99);
  s.latency_mean_s = lat_sum / s.requests;
  s.slo_attained = within / s.requests;
  if (s.duration_s > 0) {
    s.throughput_requests_per_s = s.requests / s.duration_s;
    s.throughput_tokens_per_s = tokens / s.duration_s;
    s.goodput_requests_per_s = within / s.duration_s;
    s.mean_in_system = run.request_seconds / s.duration_s;
  }
  s.energy_per_token_j = tokens > 0 ? run.energy_j / tokens : 0;
  return s;
}

}  // namespace nmpsim::apps::serve
