#include "nmpsim/methods/hiermoe/swap.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "nmpsim/mapping/base_names.h"

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
  std::vector<float> own(static_cast<size_t>(E) * E);
  for (int a = 0; a < E; ++a)
    std::fill_n(own.begin() + static_cast<std::ptrdiff_t>(a) * E, E,
                static_cast<float>(p[static_cast<size_t>(a / per)]));
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
        if (only) own[static_cast<size_t>(a) * E + b] -= 1;
        if (count[static_cast<size_t>(gb)] == 0) own[static_cast<size_t>(b) * E + a] += 1;
      }
    }
    for (int k = 0; k < r.top_k; ++k) {
      if (chosen[ids[k]]) --count[static_cast<size_t>(ids[k] / per)];
      chosen[ids[k]] = 0;
    }
  }
  return own;
}

namespace {

/// smooth_max of a term's group counts after one swap, in O(1) per swap: only the groups ga and gb
/// of the two slots change (to za and zb). With R = sum over the other groups of (x / m0)^gamma
/// (m0: the largest count now), smooth-max = m' (R (m0 / m')^gamma + (za / m')^gamma + (zb /
/// m')^gamma)^(1 / gamma) for the new largest m'. R comes from the whole sum less the two groups;
/// when that cancels most of it (a changed group is the largest and gamma is high), R is summed again.
class SwapSmoothMax {
 public:
  SwapSmoothMax(const std::vector<float>& base, double gamma) : x_(base), gamma_(gamma) {
    for (int i = 0; i < static_cast<int>(x_.size()); ++i) {
      // The three largest counts, so that the largest outside any two groups is known.
      int j = i;
      for (int k = 0; k < 3 && j >= 0; ++k)
        if (top_[k] < 0 || x_[static_cast<size_t>(j)] > x_[static_cast<size_t>(top_[k])]) std::swap(j, top_[k]);
    }
    m0_ = top_[0] >= 0 ? x_[static_cast<size_t>(top_[0])] : 0.0;
    for (float v : x_) sum_ += m0_ > 0 ? std::pow(v / m0_, gamma_) : 0.0;
  }
  double now() const { return m0_ > 0 ? m0_ * std::pow(sum_, 1.0 / gamma_) : 0.0; }
  double after(int ga, int gb, double za, double zb) const {
    double rest_max = 0;
    for (int t : top_)
      if (t >= 0 && t != ga && t != gb) {
        rest_max = x_[static_cast<size_t>(t)];
        break;
      }
    const double m = std::max({rest_max, za, zb});
    if (m <= 0) return 0.0;
    double r = 0;
    if (m0_ > 0) {
      const double ra = std::pow(x_[static_cast<size_t>(ga)] / m0_, gamma_),
                   rb = std::pow(x_[static_cast<size_t>(gb)] / m0_, gamma_);
      r = sum_ - ra - rb;
      if (r < 1e-9 * sum_) {  // cancelled: sum the other groups again
        r = 0;
        for (size_t i = 0; i < x_.size(); ++i)
          if (static_cast<int>(i) != ga && static_cast<int>(i) != gb) r += std::pow(x_[i] / m0_, gamma_);
      }
      r = r > 0 ? r * std::pow(m0_ / m, gamma_) : 0.0;
    }
    return m * std::pow(r + std::pow(za / m, gamma_) + std::pow(zb / m, gamma_), 1.0 / gamma_);
  }

 private:
  const std::vector<float>& x_;
  double gamma_;
  int top_[3] = {-1, -1, -1};
  double m0_ = 0, sum_ = 0;
};

}  // namespace

SwapChoice best_swap(const common::Hierarchy& h, const HierarchyCosts& c, const Routing& r, int d, double token_bytes,
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
  std::vector<SwapSmoothMax> smax;
  smax.reserve(terms.size());
  for (Term& t : terms) {
    t.z = swap_counts(r, t.kind.groups);
    const std::vector<double> p = group_counts(r, t.kind.groups);
    t.base.assign(p.begin(), p.end());
    smax.emplace_back(t.base, gamma);
  }
  SwapChoice best;
  for (size_t i = 0; i < terms.size(); ++i)
    best.current_s += terms[i].kind.cost.seconds(terms[i].kind.fan * smax[i].now() * token_bytes);
  const int per_node = E / G;
  for (int a = 0; a < E; ++a)
    for (int b = a + 1; b < E; ++b) {
      if (a / per_node == b / per_node) continue;  // same node: nothing moves
      double s = 0;
      for (size_t i = 0; i < terms.size(); ++i) {
        const Term& t = terms[i];
        const int groups = t.kind.groups, per = E / groups, ga = a / per, gb = b / per;
        const double m =
            ga == gb ? smax[i].now()
                     : smax[i].after(ga, gb, t.z[static_cast<size_t>(a) * E + b], t.z[static_cast<size_t>(b) * E + a]);
        s += t.kind.cost.seconds(t.kind.fan * m * token_bytes);
      }
      if (best.a < 0 || s < best.seconds) best = SwapChoice{a, b, s, best.current_s};
    }
  return best;
}

int expert_swap(const common::Hierarchy& h, const HierarchyCosts& c, const Routing& experts, double token_bytes,
                double gamma, int max_swaps, std::vector<int>& slot_of,
                const std::function<bool(const SwapChoice&)>& accept, std::vector<SwapChoice>* made) {
  if (experts.experts < h.nodes() || experts.experts % h.nodes() != 0) return 0;
  Routing r = experts;  // in slots
  for (uint16_t& id : r.ids) id = static_cast<uint16_t>(slot_of[id]);
  const int d = optimal_dimension(h, c, r, token_bytes);
  int swaps = 0;
  for (; swaps < max_swaps; ++swaps) {
    const SwapChoice s = best_swap(h, c, r, d, token_bytes, gamma);
    if (s.a < 0 || !(s.seconds < s.current_s * (1 - 1e-9))) break;
    if (accept && !accept(s)) break;
    if (made) made->push_back(s);
    for (int& slot : slot_of) slot = slot == s.a ? s.b : slot == s.b ? s.a : slot;
    for (uint16_t& id : r.ids) id = static_cast<uint16_t>(id == s.a ? s.b : id == s.b ? s.a : id);
  }
  return swaps;
}

}  // namespace nmpsim::methods::hiermoe
