#include "methods/hiermoe/swap.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "mapping/json_fields.h"

namespace nmpsim::methods::hiermoe {

double smooth_max(const float* x, int n, double gamma) {
  const double mx = *std::max_element(x, x + n);
  if (mx <= 0) return 0.0;
  double s = 0;
  for (int i = 0; i < n; ++i) s += std::pow(x[i] / mx, gamma);
  return mx * std::pow(s, 1.0 / gamma);
}

std::vector<float> swap_counts(const Routing& r, int groups) {
  const int E = r.experts, per = E / groups;
  const std::vector<double> p = group_counts(r, groups);
  std::vector<float> z(static_cast<size_t>(E) * E * groups);
  for (size_t ab = 0; ab < static_cast<size_t>(E) * E; ++ab)
    for (int g = 0; g < groups; ++g) z[ab * groups + g] = static_cast<float>(p[static_cast<size_t>(g)]);
  auto at = [&](int a, int b, int g) -> float& { return z[(static_cast<size_t>(a) * E + b) * groups + g]; };
  std::vector<char> chosen(static_cast<size_t>(E), 0);
  std::vector<int> count(static_cast<size_t>(groups), 0);
  for (size_t t = 0; t < r.tokens(); ++t) {
    const uint16_t* ids = &r.ids[t * static_cast<size_t>(r.top_k)];
    for (int k = 0; k < r.top_k; ++k)
      if (!chosen[ids[k]]) {
        chosen[ids[k]] = 1;
        ++count[static_cast<size_t>(ids[k] / per)];
      }
    // Fig. 8: swapping a chosen slot a with an unchosen slot b of another group moves the token's
    // choice from a's group to b's: a's group loses it if a was its only choice there, b's group
    // gains it if the token chose nothing there.
    for (int k = 0; k < r.top_k; ++k) {
      const int a = ids[k], ga = a / per;
      if (k > 0 && std::find(ids, ids + k, ids[k]) != ids + k) continue;  // a repeated id
      const bool only = count[static_cast<size_t>(ga)] == 1;
      for (int b = 0; b < E; ++b) {
        const int gb = b / per;
        if (chosen[static_cast<size_t>(b)] || gb == ga) continue;
        if (only) {
          at(a, b, ga) -= 1;
          at(b, a, ga) -= 1;
        }
        if (count[static_cast<size_t>(gb)] == 0) {
          at(a, b, gb) += 1;
          at(b, a, gb) += 1;
        }
      }
    }
    for (int k = 0; k < r.top_k; ++k) {
      if (chosen[ids[k]]) --count[static_cast<size_t>(ids[k] / per)];
      chosen[ids[k]] = 0;
    }
  }
  return z;
}

SwapChoice best_swap(const mapping::Hierarchy& h, const HierarchyCosts& c, const Routing& r, int d, double token_bytes,
                     double gamma) {
  const int E = r.experts, G = h.nodes();
  if (E < G || E % G != 0) throw mapping::InputError("hiermoe swap: needs a whole number of experts per node");
  // The group counts of Eq. 8-9, for each all-to-all of HDd: now, and after every swap.
  struct Term {
    HdTerm kind;
    std::vector<float> z, base;
  };
  std::vector<Term> terms;
  for (const HdTerm& k : hd_terms(h, c, d)) terms.push_back(Term{k, {}, {}});
  for (Term& t : terms) {
    t.z = swap_counts(r, t.kind.groups);
    const std::vector<double> p = group_counts(r, t.kind.groups);
    t.base.assign(p.begin(), p.end());
  }
  auto seconds = [&](auto&& counts_of) {
    double s = 0;
    for (const Term& t : terms)
      s += t.kind.cost.seconds(t.kind.fan * smooth_max(counts_of(t), t.kind.groups, gamma) * token_bytes);
    return s;
  };
  SwapChoice best;
  best.current_s = seconds([](const Term& t) { return t.base.data(); });
  const int per_node = E / G;
  for (int a = 0; a < E; ++a)
    for (int b = a + 1; b < E; ++b) {
      if (a / per_node == b / per_node) continue;  // same node: nothing moves
      const double s = seconds([&](const Term& t) { return &t.z[(static_cast<size_t>(a) * E + b) * t.kind.groups]; });
      if (best.a < 0 || s < best.seconds) best = SwapChoice{a, b, s, best.current_s};
    }
  return best;
}

int expert_swap(const mapping::Hierarchy& h, const HierarchyCosts& c, const Routing& experts, double token_bytes,
                double gamma, int max_swaps, std::vector<int>& slot_of) {
  if (experts.experts < h.nodes() || experts.experts % h.nodes() != 0) return 0;
  Routing r = experts;  // in slots
  for (uint16_t& id : r.ids) id = static_cast<uint16_t>(slot_of[id]);
  const int d = optimal_dimension(h, c, r, token_bytes);
  int swaps = 0;
  for (; swaps < max_swaps; ++swaps) {
    const SwapChoice s = best_swap(h, c, r, d, token_bytes, gamma);
    if (s.a < 0 || !(s.seconds < s.current_s * (1 - 1e-9))) break;
    for (int& slot : slot_of) slot = slot == s.a ? s.b : slot == s.b ? s.a : slot;
    for (uint16_t& id : r.ids) id = static_cast<uint16_t>(id == s.a ? s.b : id == s.b ? s.a : id);
  }
  return swaps;
}

}  // namespace nmpsim::methods::hiermoe
