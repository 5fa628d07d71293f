#include "methods/hdmoe/node_balance.h"

#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <ClpSolve.hpp>
#include <OsiClpSolverInterface.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "mapping/json_fields.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

namespace {
constexpr double kTieBreak = 1e-3;
constexpr int kMaxCbcColumns = 4000;
}  // namespace

CoactivationGroups coactivation_groups(const RoutingTrace& t, int layer, size_t max_groups) {
  std::map<std::vector<int>, double> count;
  std::vector<int> key;
  for (size_t i = 0; i < t.tokens(); ++i) {
    key.assign(t.experts_of(layer, i), t.experts_of(layer, i) + t.top_k());
    std::sort(key.begin(), key.end());
    count[key] += 1.0;
  }
  std::vector<std::pair<double, std::vector<int>>> sorted;
  for (auto& [k, c] : count) sorted.emplace_back(c / double(t.tokens()), k);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  CoactivationGroups g;
  g.total_groups = sorted.size();
  g.residual.assign(static_cast<size_t>(t.experts()), 0.0);
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i < max_groups) {
      g.experts.push_back(sorted[i].second);
      g.freq.push_back(sorted[i].first);
      g.kept_mass += sorted[i].first;
    } else {
      for (int e : sorted[i].second) g.residual[e] += sorted[i].first;
    }
  }
  return g;
}

double NodeBalanceProblem::unit_compute(int i, const std::vector<double>& f) const {
  // An expert no token of the batch chose streams nothing.
  if (f[i] * batch < 0.5) return 0.0;
  return std::max(f[i] * batch * expert_flops_per_token / peak_flops, expert_bytes / memory_bytes_per_s);
}

double NodeBalanceProblem::workload_cap() const {
  // R_CC = t_TP,comp / t_TP,comm with t_TP,comp = B e F / (D comp) and t_TP,comm = token_bytes B / BW (Eq. 4, 10).
  const double tp_comp = batch * top_k * expert_flops_per_token / (nodes * peak_flops);
  const double tp_comm = token_bytes * batch / link_bytes_per_s;
  const double rcc = tp_comp / tp_comm;
  return (1.0 / rcc + 1.0) * top_k / nodes;
}

NodeBalanceEval evaluate(const NodeBalanceProblem& pb, const std::vector<double>& P) {
  NodeBalanceEval ev;
  const int E = pb.experts, D = pb.nodes;
  const double comm_coef = pb.token_bytes * pb.batch / pb.link_bytes_per_s;
  const auto sc = pb.scenarios();
  for (const auto& f : sc) {
    double worst = 0;
    for (int c = 0; c < D; ++c) {
      double comp = 0;
      for (int i = 0; i < E; ++i) comp += P[static_cast<size_t>(i) * D + c] * pb.unit_compute(i, f);
      worst = std::max(worst, comp);
    }
    ev.t_comp += worst / sc.size();
  }
  for (int c = 0; c < D; ++c) {
    double comm = 0;
    for (int i = 0; i < E; ++i)
      if (P[static_cast<size_t>(i) * D + c] > 1e-9) comm += pb.groups.residual[i];
    for (size_t g = 0; g < pb.groups.experts.size(); ++g) {
      bool any = false;
      for (int i : pb.groups.experts[g]) any = any || P[static_cast<size_t>(i) * D + c] > 1e-9;
      if (any) comm += pb.groups.freq[g];
    }
    ev.t_comm = std::max(ev.t_comm, comm * comm_coef);
  }
  ev.objective = ev.t_comp + 2 * pb.gamma * ev.t_comm;
  return ev;
}

NodeBalanceResult solve_node_balance(const NodeBalanceProblem& pb, const std::vector<double>& warm, double time_limit_s) {
  const auto t0 = std::chrono::steady_clock::now();
  const int E = pb.experts, D = pb.nodes;
  const int G = static_cast<int>(pb.groups.experts.size());
  // Columns: P[i][c], Z[i][c], y[g][c], t_comp[s] per scenario, t_comm, node compute time u[s][c].
  const auto sc = pb.scenarios();
  const int S = static_cast<int>(sc.size());
  const int nP = E * D, nZ = E * D, nY = G * D;
  const int cP = 0, cZ = nP, cY = nP + nZ, cTc = nP + nZ + nY, cTm = cTc + S, cU = cTm + 1, ncols = cU + S * D;
  auto P = [&](int i, int c) { return cP + i * D + c; };
  auto Z = [&](int i, int c) { return cZ + i * D + c; };
  auto Y = [&](int g, int c) { return cY + g * D + c; };
  std::vector<double> collb(static_cast<size_t>(ncols), 0.0), colub(static_cast<size_t>(ncols), 1.0),
      obj(static_cast<size_t>(ncols), 0.0);
  for (int k = cTc; k < ncols; ++k)
    colub[k] = 1e30;
  // Scale times to microseconds so the LP is well conditioned.
  const double us = 1e6;
  for (int k = 0; k < S; ++k) obj[cTc + k] = 1.0 / S;  // mean over batches of the busiest node
  obj[cTm] = 2.0 * pb.gamma;
  // Tie-breaker: the objective only sees the busiest node, so among equal optima prefer the one that
  // also balances the others (1e-3 of the mean node time).
  for (int k = 0; k < S * D; ++k) obj[cU + k] = kTieBreak / (D * S);
  CoinPackedMatrix m(false, 0, 0);
  m.setDimensions(0, ncols);
  std::vector<double> rlb, rub;
  auto row = [&](const std::vector<int>& idx, const std::vector<double>& val, double lo, double hi) {
    m.appendRow(static_cast<int>(idx.size()), idx.data(), val.data());
    rlb.push_back(lo);
    rub.push_back(hi);
  };
  const double inf = 1e30;
  for (int i = 0; i < E; ++i)
    for (int c = 0; c < D; ++c) row({Z(i, c), P(i, c)}, {1.0, -1.0}, 0.0, inf);  // (5)
  for (int i = 0; i < E; ++i) {                                                     // (6)
    std::vector<int> idx;
    for (int c = 0; c < D; ++c) idx.push_back(P(i, c));
    row(idx, std::vector<double>(idx.size(), 1.0), 1.0, 1.0);
  }
  const double comm_coef = pb.token_bytes * pb.batch / pb.link_bytes_per_s * us;
  // Workload cap of Eq. 9, relaxed if the EP warm start exceeds it (so EP stays feasible).
  double cap = pb.workload_cap();
  double warm_max_load = 0;
  for (int c = 0; c < D; ++c) {
    double load = 0;
    for (int i = 0; i < E; ++i) load += warm[static_cast<size_t>(i) * D + c] * pb.freq[i];
    warm_max_load = std::max(warm_max_load, load);
  }
  cap = std::max(cap, warm_max_load);
  for (int c = 0; c < D; ++c) {
    for (int k = 0; k < S; ++k) {
      std::vector<int> idx{cU + k * D + c};
      std::vector<double> val{1.0};
      for (int i = 0; i < E; ++i) {
        idx.push_back(P(i, c));
        val.push_back(-pb.unit_compute(i, sc[k]) * us);
      }
      row(idx, val, 0.0, inf);                             // u[s][c] >= node c's compute time in batch s
      row({cTc + k, cU + k * D + c}, {1.0, -1.0}, 0.0, inf);  // (7): t_comp[s] >= u[s][c]
    }
    std::vector<int> idx{cTm};
    std::vector<double> val{1.0};
    for (int g = 0; g < G; ++g) {
      idx.push_back(Y(g, c));
      val.push_back(-pb.groups.freq[g] * comm_coef);
    }
    for (int i = 0; i < E; ++i)
      if (pb.groups.residual[i] > 0) {
        idx.push_back(Z(i, c));
        val.push_back(-pb.groups.residual[i] * comm_coef);
      }
    row(idx, val, 0.0, inf);  // (8)
    for (int g = 0; g < G; ++g)
      for (int i : pb.groups.experts[g]) row({Y(g, c), Z(i, c)}, {1.0, -1.0}, 0.0, inf);  // OR linearisation
    idx.clear();
    val.clear();
    for (int i = 0; i < E; ++i) {
      idx.push_back(P(i, c));
      val.push_back(pb.freq[i]);
    }
    if (pb.workload_bound) row(idx, val, 0.0, cap);  // (9)
    row(idx, std::vector<double>(idx.size(), 1.0), 0.0, pb.max_shares_per_node);  // memory
  }
  OsiClpSolverInterface si;
  si.loadProblem(m, collb.data(), colub.data(), obj.data(), rlb.data(), rub.data());
  for (int i = 0; i < E; ++i)
    for (int c = 0; c < D; ++c) si.setInteger(Z(i, c));
  si.messageHandler()->setLogLevel(0);
  // LP-and-round heuristic: solve the relaxation (Clp's barrier: on these degenerate LPs the simplex
  // took 10x longer) and keep its shares P; with Z = their support the point is feasible for the
  // MILP and usually far better than EP. It is a candidate, and CBC's start when better than EP.
  std::vector<double> lp_fix;
  double relaxation_bound = 0;
  {
    ClpSolve barrier;
    barrier.setSolveType(ClpSolve::useBarrier);
    OsiClpSolverInterface relax(si);
    relax.messageHandler()->setLogLevel(0);
    relax.setSolveOptions(barrier);
    relax.initialSolve();
    if (relax.isProvenOptimal()) {
      // The relaxation's P with Z = its support (and y = OR of Z) is feasible for the MILP.
      relaxation_bound = relax.getObjValue();
      lp_fix.assign(relax.getColSolution(), relax.getColSolution() + ncols);
    }
  }
  CbcModel model(si);
  // The stand-alone solver's defaults (cut generators, primal heuristics) via CbcMain0/1.
  CbcMain0(model);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);

  // A complete MILP point for given shares: Z = their support, y = OR of Z, all times; and its objective.
  auto column_point = [&](const std::vector<double>& shares, double& objective) {
    std::vector<double> x(static_cast<size_t>(ncols), 0.0);
    for (int i = 0; i < E; ++i)
      for (int c = 0; c < D; ++c) {
        const double v = shares[static_cast<size_t>(i) * D + c];
        x[P(i, c)] = v;
        x[Z(i, c)] = v > 0 ? 1.0 : 0.0;
      }
    for (int g = 0; g < G; ++g)
      for (int c = 0; c < D; ++c)
        for (int i : pb.groups.experts[g]) x[Y(g, c)] = std::max(x[Y(g, c)], x[Z(i, c)]);
    x[cTm] = evaluate(pb, shares).t_comm * us;
    objective = 2.0 * pb.gamma * x[cTm];
    for (int k = 0; k < S; ++k) {
      for (int c = 0; c < D; ++c) {
        double u = 0;
        for (int i = 0; i < E; ++i) u += x[P(i, c)] * pb.unit_compute(i, sc[k]) * us;
        x[cU + k * D + c] = u;
        x[cTc + k] = std::max(x[cTc + k], u);
        objective += kTieBreak / (D * S) * u;
      }
      objective += x[cTc + k] / S;
    }
    return x;
  };
  NodeBalanceResult res;
  const NodeBalanceEval warm_eval = evaluate(pb, warm);
  res.warm_objective = warm_eval.objective;
  // CBC starts from the better of EP and the rounded LP point.
  double start_obj = 0;
  std::vector<double> w = column_point(warm, start_obj);
  if (!lp_fix.empty()) {
    std::vector<double> shares(static_cast<size_t>(nP));
    for (int k = 0; k < nP; ++k) shares[k] = lp_fix[cP + k] > 1e-9 ? lp_fix[cP + k] : 0.0;
    double rounded_obj = 0;
    std::vector<double> r = column_point(shares, rounded_obj);
    if (rounded_obj < start_obj) {
      w = std::move(r);
      start_obj = rounded_obj;
    }
  }
  model.setBestSolution(w.data(), ncols, start_obj * (1 + 1e-9), true);
  const std::string seconds = std::to_string(std::max(0.1, time_limit_s));
  // CBC's preprocessing is off: in Debian's CBC 2.10 it overran the time limit many times over on
  // these models and crashed in CglPreProcess::postProcess on some. Branch and bound runs only on
  // instances small enough for its simplex root to respect the limit (docs/MODEL.md).
  const bool run_cbc = ncols <= kMaxCbcColumns;
  if (run_cbc) {
    const char* argv[] = {"nmpsim", "-log", "0", "-preprocess", "off", "-sec", seconds.c_str(), "-solve", "-quit"};
    CbcMain1(9, argv, model);
  }

  res.variables = ncols;
  res.constraints = static_cast<int>(rlb.size());
  res.workload_cap = cap;
  // Candidates: CBC's incumbent, the LP-and-fix solution, the EP warm start. Each is cleaned (numerical
  // dust removed, rows renormalised) and the best under the analytical model is returned.
  auto clean = [&](const double* x) {
    std::vector<double> P(static_cast<size_t>(nP));
    for (int k = 0; k < nP; ++k) P[k] = std::clamp(x[cP + k], 0.0, 1.0);
    for (int i = 0; i < E; ++i) {
      double sum = 0;
      for (int c = 0; c < D; ++c) {
        double& v = P[static_cast<size_t>(i) * D + c];
        if (v < 1e-7) v = 0;
        sum += v;
      }
      for (int c = 0; c < D; ++c) P[static_cast<size_t>(i) * D + c] /= sum;
    }
    return P;
  };
  std::vector<std::vector<double>> cands{warm};
  if (run_cbc && model.bestSolution()) cands.push_back(clean(model.bestSolution()));
  if (!lp_fix.empty()) cands.push_back(clean(lp_fix.data()));
  res.P = warm;
  res.eval = warm_eval;
  for (const auto& c : cands) {
    const NodeBalanceEval ev = evaluate(pb, c);
    if (ev.objective < res.eval.objective - 1e-15) {
      res.P = c;
      res.eval = ev;
    }
  }
  // Lower bound: the LP relaxation's objective, or CBC's (at least as tight). Both include the
  // tie-breaker, which is at most kTieBreak of the main objective, hence the division.
  double bound = relaxation_bound;
  if (run_cbc) bound = std::max(bound, model.getBestPossibleObjValue());
  res.best_bound = bound / (1 + kTieBreak) / us;
  res.optimal = run_cbc && model.isProvenOptimal();
  res.used_cbc = run_cbc;
  res.gap = res.eval.objective > 0 ? std::max(0.0, (res.eval.objective - res.best_bound) / res.eval.objective) : 0.0;
  res.branch_nodes = model.getNodeCount();
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

double prebroadcast_seconds(double alpha, double beta, double W, int D, int k, double c) {
  const double sd = std::sqrt(double(D));
  return alpha * (2 * sd + W / c) + k * beta * (W + 2 * c * sd);
}

double optimal_broadcast_chunk(double alpha, double beta, double W, int D, int k) {
  return std::sqrt(alpha * W / (2 * beta * k * std::sqrt(double(D))));
}

double prebroadcast_lower_bound(double alpha, double beta, double W, int D, int k) {
  const double sd = std::sqrt(double(D));
  return W * beta * k + 2 * alpha * sd + 2 * std::sqrt(2 * sd * beta * k * alpha * W);
}

LinearFit fit_through_origin(const std::vector<double>& x, const std::vector<double>& y) {
  LinearFit f;
  f.samples = static_cast<int>(x.size());
  double sxy = 0, sxx = 0, mean = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += x[i] * y[i];
    sxx += x[i] * x[i];
    mean += y[i];
  }
  if (x.empty() || sxx == 0) return f;
  mean /= x.size();
  f.gamma = sxy / sxx;
  double sse = 0, sst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sse += (y[i] - f.gamma * x[i]) * (y[i] - f.gamma * x[i]);
    sst += (y[i] - mean) * (y[i] - mean);
  }
  f.r2 = sst > 0 ? 1 - sse / sst : 1.0;
  return f;
}

}  // namespace nmpsim::methods::hdmoe
