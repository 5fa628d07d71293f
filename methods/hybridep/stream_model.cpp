#include "nmpsim/methods/hybridep/stream_model.h"

#include <algorithm>

#include "nmpsim/methods/hybridep/partition.h"

namespace nmpsim::methods::hybridep {

double a2a_seconds(const StreamInputs& in, double p) {
  if (p <= 0) return 0.0;
  const double G = in.workers;
  return in.alpha_s + p * in.data_bytes * (G - 1) / (G * in.bytes_per_s);
}

double ag_seconds(const StreamInputs& in, double p) {
  if (p >= 1) return 0.0;
  return in.alpha_s + (1 - p) * in.expert_bytes * (in.workers - 1) / in.bytes_per_s;
}

double final_seconds(const StreamInputs& in, double p) {
  return std::max(in.pre_expert_s, ag_seconds(in, p)) + 2 * a2a_seconds(in, p);
}

Optimum optimal_p(const StreamInputs& in) {
  const double G = in.workers;
  if (2 * in.data_bytes - G * in.expert_bytes >= 0) return {0.0, 22};
  const double knee = 1 - in.bytes_per_s * in.pre_expert_s / (in.expert_bytes * (G - 1));
  if (knee <= 0) return {0.0, 1};  // even the full all-gather hides behind the pre-expert phases
  return {knee, 21};
}

double p_of_domain(int workers, int sed) { return double(workers - sed) / (workers - 1); }
double p_table_form(int workers, int sed) { return sed == 1 ? 1.0 : 1.0 - double(sed) / workers; }

int best_domain(const std::vector<StreamInputs>& workers) {
  if (workers.empty()) return 1;
  const int G = workers.front().workers;
  int best = 1;
  double best_s = 0;
  for (int s : divisors(G)) {
    double worst = 0;
    for (const StreamInputs& w : workers) worst = std::max(worst, final_seconds(w, p_of_domain(G, s)));
    if (s == 1 || worst < best_s * (1 - 1e-12)) {
      best = s;
      best_s = worst;
    }
  }
  return best;
}

}  // namespace nmpsim::methods::hybridep
