#include "nmpsim/methods/hiermoe/dedup.h"

#include <algorithm>
#include <cmath>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::methods::hiermoe {

namespace {

void check_groups(const Routing& r, int groups) {
  if (groups < 1 || r.experts % groups != 0)
    throw mapping::InputError("hiermoe: " + std::to_string(groups) + " groups do not divide " +
                              std::to_string(r.experts) + " experts");
}

/// Calls f(group) once per distinct group token t selects.
template <class F>
void distinct_groups(const Routing& r, size_t t, int groups, F&& f) {
  const int per = r.experts / groups;
  int seen[64];
  int n = 0;
  for (int k = 0; k < r.top_k; ++k) {
    const int g = r.ids[t * static_cast<size_t>(r.top_k) + static_cast<size_t>(k)] / per;
    if (std::find(seen, seen + n, g) != seen + n) continue;
    if (n < 64) seen[n++] = g;
    f(g);
  }
}

double max_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }

}  // namespace

std::vector<double> group_counts(const Routing& r, int groups) {
  check_groups(r, groups);
  std::vector<double> p(static_cast<size_t>(groups), 0.0);
  for (size_t t = 0; t < r.tokens(); ++t) distinct_groups(r, t, groups, [&](int g) { p[static_cast<size_t>(g)] += 1; });
  return p;
}

double duplication_rate(const Routing& r, int groups) {
  check_groups(r, groups);
  if (r.tokens() == 0) return 0.0;
  double distinct = 0;
  for (size_t t = 0; t < r.tokens(); ++t) distinct_groups(r, t, groups, [&](int) { distinct += 1; });
  return 1.0 - distinct / (static_cast<double>(r.tokens()) * r.top_k);
}

double uniform_duplication_rate(int experts, int top_k, int groups) {
  // P(a group gets none of the K experts) = C(E - E/R, K) / C(E, K) = prod_{i<K} (E - E/R - i) / (E - i).
  const int per = experts / groups;
  double none = 1.0;
  for (int i = 0; i < top_k; ++i) none *= std::max(0.0, double(experts - per - i)) / double(experts - i);
  return 1.0 - groups * (1.0 - none) / top_k;
}

std::vector<HdTerm> hd_terms(const common::Hierarchy& h, const HierarchyCosts& c, int d) {
  const int G = h.nodes(), D = h.dimensions();
  if (d < 1 || d > D)
    throw mapping::InputError("hiermoe: dimension " + std::to_string(d) + " outside 1.." + std::to_string(D));
  std::vector<HdTerm> terms;
  int prev = 1;  // U[0]
  for (int i = 1; i < d; ++i) {
    const int U = h.levels[static_cast<size_t>(i - 1)].groups;
    terms.push_back(HdTerm{U, double(U) / prev, c.inter[static_cast<size_t>(i - 1)]});  // Eq. 4
    prev = U;
  }
  // Eq. 2 (d = 1) or Eq. 5: the G node groups, G / U[d-1] participants.
  terms.push_back(HdTerm{G, double(G) / prev, d == 1 ? c.flat : c.intra[static_cast<size_t>(d - 2)]});
  return terms;
}

double hd_seconds(const common::Hierarchy& h, const HierarchyCosts& c, const Routing& r, int d, double token_bytes) {
  double t = 0;
  for (const HdTerm& term : hd_terms(h, c, d))
    t += term.cost.seconds(term.fan * max_of(group_counts(r, term.groups)) * token_bytes);
  return t;
}

int optimal_dimension(const common::Hierarchy& h, const HierarchyCosts& c, const Routing& r, double token_bytes) {
  int best = 1;
  double best_s = hd_seconds(h, c, r, 1, token_bytes);
  for (int d = 2; d <= h.dimensions(); ++d) {
    const double s = hd_seconds(h, c, r, d, token_bytes);
    if (s < best_s) {
      best = d;
      best_s = s;
    }
  }
  return best;
}

}  // namespace nmpsim::methods::hiermoe
