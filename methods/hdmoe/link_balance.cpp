#include "nmpsim/methods/hdmoe/link_balance.h"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "nmpsim/base/rng.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::vector<int> identity(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

void shuffle(std::vector<int>& v, Rng& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

struct Tracker {
  const MappingCost& cost;
  MappingResult r;
  double evaluate(const std::vector<int>& m) {
    const double c = cost(m);
    if (r.best_by_evaluation.empty() || c < r.cost) {
      r.cost = c;
      r.node_map = m;
    }
    r.best_by_evaluation.push_back(r.cost);
    return c;
  }
};
}  // namespace

MappingCost::MappingCost(const AnalyticalHardware& hw, const std::vector<LayerPlan>& plans) : n_(hw.topology.nodes()) {
  std::vector<std::vector<double>> dispatch;  // [sample][home * n + logical]
  for (const LayerPlan& p : plans) dispatch.push_back(p.dispatch);
  f_ = [model = flow::LinkLoadModel(hw), n = n_, dispatch = std::move(dispatch)](const std::vector<int>& map) {
    double total = 0;
    std::vector<double> phys(static_cast<size_t>(n) * n), back(static_cast<size_t>(n) * n);
    for (const auto& d : dispatch) {
      std::fill(phys.begin(), phys.end(), 0.0);
      std::fill(back.begin(), back.end(), 0.0);
      for (int h = 0; h < n; ++h)
        for (int c = 0; c < n; ++c) {
          const double b = d[static_cast<size_t>(h) * n + c];
          if (b <= 0) continue;
          const int p = map[c];
          if (p == h) continue;  // after mapping, the expert node may be the home itself
          phys[static_cast<size_t>(h) * n + p] += b;
          back[static_cast<size_t>(p) * n + h] += b;
        }
      total += model.seconds_matrix(phys) + model.seconds_matrix(back);
    }
    return total;
  };
}

MappingResult map_random(const MappingCost& cost, int evaluations, uint64_t seed) {
  const auto t0 = Clock::now();
  Rng rng(seed);
  Tracker tr{cost, {}};
  tr.r.identity_cost = tr.evaluate(identity(cost.nodes()));
  for (int e = 1; e < evaluations; ++e) {
    std::vector<int> m = identity(cost.nodes());
    shuffle(m, rng);
    tr.evaluate(m);
  }
  tr.r.method = "random";
  tr.r.seconds = since(t0);
  return tr.r;
}

MappingResult map_annealing(const MappingCost& cost, int evaluations, uint64_t seed) {
  const auto t0 = Clock::now();
  Rng rng(seed);
  Tracker tr{cost, {}};
  std::vector<int> cur = identity(cost.nodes());
  double cur_cost = tr.evaluate(cur);
  tr.r.identity_cost = cur_cost;
  const int n = cost.nodes();
  // Geometric cooling from 5% to 0.01% of the starting cost over the budget.
  const double t_start = 0.05 * cur_cost, t_end = 1e-4 * cur_cost;
  for (int e = 1; e < evaluations && n > 1; ++e) {
    const double temp = t_start * std::pow(t_end / t_start, double(e) / std::max(1, evaluations - 1));
    std::vector<int> next = cur;
    const int a = static_cast<int>(rng.below(n));
    int b = static_cast<int>(rng.below(n - 1));
    if (b >= a) ++b;
    std::swap(next[a], next[b]);
    const double c = tr.evaluate(next);
    if (c <= cur_cost || rng.uniform() < std::exp((cur_cost - c) / temp)) {
      cur = std::move(next);
      cur_cost = c;
    }
  }
  tr.r.method = "annealing";
  tr.r.seconds = since(t0);
  return tr.r;
}

std::vector<int> assign_min_cost(const std::vector<double>& a, int n) {
  // Hungarian algorithm with potentials (rows 1..n, columns 1..n), O(n^3).
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> u(static_cast<size_t>(n + 1), 0), v(static_cast<size_t>(n + 1), 0);
  std::vector<int> p(static_cast<size_t>(n + 1), 0), way(static_cast<size_t>(n + 1), 0);
  for (int i = 1; i <= n; ++i) {
    p[0] = i;
    int j0 = 0;
    std::vector<double> minv(static_cast<size_t>(n + 1), inf);
    std::vector<char> used(static_cast<size_t>(n + 1), 0);
    do {
      used[j0] = 1;
      const int i0 = p[j0];
      double delta = inf;
      int j1 = 0;
      for (int j = 1; j <= n; ++j) {
        if (used[j]) continue;
        const double cur = a[static_cast<size_t>(i0 - 1) * n + (j - 1)] - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (int j = 0; j <= n; ++j) {
        if (used[j]) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (p[j0] != 0);
    do {
      const int j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0);
  }
  std::vector<int> result(static_cast<size_t>(n), 0);
  for (int j = 1; j <= n; ++j) result[p[j] - 1] = j - 1;
  return result;
}

namespace {

/// Feature of a mapping: the normalised physical coordinates of every logical node.
Eigen::VectorXd mapping_features(const std::vector<int>& m, const Topology& t) {
  const int n = static_cast<int>(m.size());
  Eigen::VectorXd x(2 * n);
  for (int c = 0; c < n; ++c) {
    x(2 * c) = t.x(m[c]) / double(std::max(1, t.width - 1));
    x(2 * c + 1) = t.y(m[c]) / double(std::max(1, t.height - 1));
  }
  return x;
}

/// Candidates around the incumbent: 48 of 1-3 swaps, 16 of its coordinates plus Gaussian noise made a
/// valid permutation by assignment, and 8 random permutations.
std::vector<std::vector<int>> bo_candidates(const std::vector<int>& incumbent, const Topology& t, Rng& rng) {
  const int n = static_cast<int>(incumbent.size());
  std::vector<std::vector<int>> cands;
  for (int k = 0; k < 48; ++k) {
    std::vector<int> c = incumbent;
    const int swaps = 1 + static_cast<int>(rng.below(3));
    for (int s = 0; s < swaps && n > 1; ++s) std::swap(c[rng.below(n)], c[rng.below(n)]);
    cands.push_back(c);
  }
  for (int k = 0; k < 16; ++k) {
    const double sigma = 0.5 + rng.uniform() * 1.5;  // in mesh hops
    std::vector<double> a(static_cast<size_t>(n) * n);
    std::vector<double> tx(static_cast<size_t>(n)), ty(static_cast<size_t>(n));
    for (int c = 0; c < n; ++c) {
      // Box-Muller noise around the incumbent's coordinates.
      const double r = std::sqrt(-2 * std::log(1 - rng.uniform())), th = 2 * M_PI * rng.uniform();
      tx[c] = t.x(incumbent[c]) + sigma * r * std::cos(th);
      ty[c] = t.y(incumbent[c]) + sigma * r * std::sin(th);
    }
    for (int c = 0; c < n; ++c)
      for (int p = 0; p < n; ++p)
        a[static_cast<size_t>(c) * n + p] = (tx[c] - t.x(p)) * (tx[c] - t.x(p)) + (ty[c] - t.y(p)) * (ty[c] - t.y(p));
    cands.push_back(assign_min_cost(a, n));
  }
  for (int k = 0; k < 8; ++k) {
    std::vector<int> c = identity(n);
    shuffle(c, rng);
    cands.push_back(c);
  }
  return cands;
}

/// The candidate of highest expected improvement (minimisation) under a Gaussian process fitted to
/// the observations (RBF kernel over mapping features, standardised costs).
size_t best_expected_improvement(const std::vector<std::vector<int>>& X, const std::vector<double>& Y,
                                 const std::vector<std::vector<int>>& cands, const Topology& t) {
  const int m = static_cast<int>(Y.size()), n = static_cast<int>(X[0].size());
  const double ell2 = 0.5 * n, noise = 1e-6;  // lengthscale relative to the feature dimension
  auto kernel = [&](const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return std::exp(-(a - b).squaredNorm() / (2 * ell2));
  };
  const double mean = std::accumulate(Y.begin(), Y.end(), 0.0) / m;
  double var = 0;
  for (double y : Y) var += (y - mean) * (y - mean);
  const double sd = std::sqrt(var / m) + 1e-12;
  std::vector<Eigen::VectorXd> F;
  for (const auto& x : X) F.push_back(mapping_features(x, t));
  Eigen::MatrixXd K(m, m);
  Eigen::VectorXd y(m);
  for (int i = 0; i < m; ++i) {
    y(i) = (Y[i] - mean) / sd;
    for (int j = 0; j < m; ++j) K(i, j) = kernel(F[i], F[j]) + (i == j ? noise : 0.0);
  }
  const Eigen::LLT<Eigen::MatrixXd> llt(K);
  const Eigen::VectorXd alpha = llt.solve(y);
  const double best = (*std::min_element(Y.begin(), Y.end()) - mean) / sd;
  double best_ei = -1;
  size_t pick = 0;
  for (size_t k = 0; k < cands.size(); ++k) {
    const Eigen::VectorXd f = mapping_features(cands[k], t);
    Eigen::VectorXd ks(m);
    for (int i = 0; i < m; ++i) ks(i) = kernel(f, F[i]);
    const double mu = ks.dot(alpha);
    const double s2 = std::max(1e-12, 1.0 + noise - ks.dot(llt.solve(ks)));
    const double s = std::sqrt(s2), z = (best - mu) / s;
    const double ei =
        (best - mu) * 0.5 * std::erfc(-z / std::sqrt(2.0)) + s * std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
    if (ei > best_ei) {
      best_ei = ei;
      pick = k;
    }
  }
  return pick;
}

}  // namespace

MappingResult map_bayesian(const MappingCost& cost, int evaluations, uint64_t seed, const Topology& t) {
  const auto t0 = Clock::now();
  Rng rng(seed);
  const int n = cost.nodes();
  Tracker tr{cost, {}};
  std::vector<std::vector<int>> X;
  std::vector<double> Y;
  auto observe = [&](const std::vector<int>& m) {
    Y.push_back(tr.evaluate(m));
    X.push_back(m);
  };
  observe(identity(n));
  tr.r.identity_cost = Y[0];
  const int initial = std::min(evaluations, std::max(5, evaluations / 10));
  for (int i = 1; i < initial; ++i) {
    std::vector<int> m = identity(n);
    shuffle(m, rng);
    observe(m);
  }
  while (static_cast<int>(Y.size()) < evaluations) {
    const std::vector<std::vector<int>> cands = bo_candidates(tr.r.node_map, t, rng);
    observe(cands[best_expected_improvement(X, Y, cands, t)]);
  }
  tr.r.method = "bayesian";
  tr.r.seconds = since(t0);
  return tr.r;
}

}  // namespace nmpsim::methods::hdmoe
