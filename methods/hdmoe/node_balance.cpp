#include "methods/hdmoe/node_balance.h"

#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <ClpSolve.hpp>
#include <CoinPackedMatrix.hpp>
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

namespace {

/// Column layout of the node-balance MILP: P[i][c], Z[i][c], y[g][c], t_comp[s] per scenario, t_comm,
/// node compute time u[s][c]. Times are in microseconds so the LP is well conditioned.
struct MilpColumns {
  int E, D, G, S, nP, cP, cZ, cY, cTc, cTm, cU, ncols;
  MilpColumns(const NodeBalanceProblem& pb, int scenarios)
      : E(pb.experts),
        D(pb.nodes),
        G(static_cast<int>(pb.groups.experts.size())),
        S(scenarios),
        nP(E * D),
        cP(0),
        cZ(nP),
        cY(2 * nP),
        cTc(2 * nP + G * D),
        cTm(cTc + S),
        cU(cTm + 1),
        ncols(cU + S * D) {}
  int P(int i, int c) const { return cP + i * D + c; }
  int Z(int i, int c) const { return cZ + i * D + c; }
  int Y(int g, int c) const { return cY + g * D + c; }
};
constexpr double kUs = 1e6;
constexpr double kInf = 1e30;

struct MilpRows {
  CoinPackedMatrix m{false, 0, 0};
  std::vector<double> lb, ub;
  void add(const std::vector<int>& idx, const std::vector<double>& val, double lo, double hi) {
    m.appendRow(static_cast<int>(idx.size()), idx.data(), val.data());
    lb.push_back(lo);
    ub.push_back(hi);
  }
};

/// The largest node load (sum of shares x frequency) of a placement: Eq. 9's left side.
double max_load(const NodeBalanceProblem& pb, const std::vector<double>& P) {
  double most = 0;
  for (int c = 0; c < pb.nodes; ++c) {
    double load = 0;
    for (int i = 0; i < pb.experts; ++i) load += P[static_cast<size_t>(i) * pb.nodes + c] * pb.freq[i];
    most = std::max(most, load);
  }
  return most;
}

/// Rows of node c: its compute time per scenario (7), its communication (8) with the OR linearisation,
/// the workload cap (9) and memory.
void node_rows(const NodeBalanceProblem& pb, const MilpColumns& k, const std::vector<std::vector<double>>& sc, int c,
               double cap, MilpRows& rows) {
  for (int s = 0; s < k.S; ++s) {
    std::vector<int> idx{k.cU + s * k.D + c};
    std::vector<double> val{1.0};
    for (int i = 0; i < k.E; ++i) {
      idx.push_back(k.P(i, c));
      val.push_back(-pb.unit_compute(i, sc[s]) * kUs);
    }
    rows.add(idx, val, 0.0, kInf);                                      // u[s][c] >= node c's compute time in batch s
    rows.add({k.cTc + s, k.cU + s * k.D + c}, {1.0, -1.0}, 0.0, kInf);  // (7): t_comp[s] >= u[s][c]
  }
  const double comm_coef = pb.token_bytes * pb.batch / pb.link_bytes_per_s * kUs;
  std::vector<int> idx{k.cTm};
  std::vector<double> val{1.0};
  for (int g = 0; g < k.G; ++g) {
    idx.push_back(k.Y(g, c));
    val.push_back(-pb.groups.freq[g] * comm_coef);
  }
  for (int i = 0; i < k.E; ++i)
    if (pb.groups.residual[i] > 0) {
      idx.push_back(k.Z(i, c));
      val.push_back(-pb.groups.residual[i] * comm_coef);
    }
  rows.add(idx, val, 0.0, kInf);  // (8)
  for (int g = 0; g < k.G; ++g)
    for (int i : pb.groups.experts[g]) rows.add({k.Y(g, c), k.Z(i, c)}, {1.0, -1.0}, 0.0, kInf);  // OR linearisation
  idx.clear();
  val.clear();
  for (int i = 0; i < k.E; ++i) {
    idx.push_back(k.P(i, c));
    val.push_back(pb.freq[i]);
  }
  if (pb.workload_bound) rows.add(idx, val, 0.0, cap);                               // (9)
  rows.add(idx, std::vector<double>(idx.size(), 1.0), 0.0, pb.max_shares_per_node);  // memory
}

/// The objective (Eq. 11-12 plus a tie-breaker) and every constraint, loaded into a solver.
void load_milp(const NodeBalanceProblem& pb, const MilpColumns& k, const std::vector<std::vector<double>>& sc,
               double cap, OsiClpSolverInterface& si, int& constraints) {
  std::vector<double> collb(static_cast<size_t>(k.ncols), 0.0), colub(static_cast<size_t>(k.ncols), 1.0),
      obj(static_cast<size_t>(k.ncols), 0.0);
  for (int c = k.cTc; c < k.ncols; ++c) colub[c] = kInf;
  for (int s = 0; s < k.S; ++s) obj[k.cTc + s] = 1.0 / k.S;  // mean over batches of the busiest node
  obj[k.cTm] = 2.0 * pb.gamma;
  // Tie-breaker: the objective only sees the busiest node, so among equal optima prefer the one that
  // also balances the others (1e-3 of the mean node time).
  for (int u = 0; u < k.S * k.D; ++u) obj[k.cU + u] = kTieBreak / (k.D * k.S);
  MilpRows rows;
  rows.m.setDimensions(0, k.ncols);
  for (int i = 0; i < k.E; ++i)
    for (int c = 0; c < k.D; ++c) rows.add({k.Z(i, c), k.P(i, c)}, {1.0, -1.0}, 0.0, kInf);  // (5)
  for (int i = 0; i < k.E; ++i) {                                                            // (6)
    std::vector<int> idx;
    for (int c = 0; c < k.D; ++c) idx.push_back(k.P(i, c));
    rows.add(idx, std::vector<double>(idx.size(), 1.0), 1.0, 1.0);
  }
  for (int c = 0; c < k.D; ++c) node_rows(pb, k, sc, c, cap, rows);
  si.loadProblem(rows.m, collb.data(), colub.data(), obj.data(), rows.lb.data(), rows.ub.data());
  for (int i = 0; i < k.E; ++i)
    for (int c = 0; c < k.D; ++c) si.setInteger(k.Z(i, c));
  si.messageHandler()->setLogLevel(0);
  constraints = static_cast<int>(rows.lb.size());
}

/// LP-and-round heuristic: solve the relaxation (Clp's barrier: on these degenerate LPs the simplex
/// took 10x longer). Its shares P with Z = their support (and y = OR of Z) are feasible for the MILP.
/// Returns the relaxation's column values (empty if not solved) and sets its objective (a lower bound).
/// Solves the LP relaxation in `si` itself (barrier, then crossover to an optimal basis), and leaves
/// `si` set to re-solve from that basis with the dual simplex and no presolve: CBC's root solve
/// then takes no iterations. (From scratch, Clp's primal simplex took 8-13 s on a DeepSeek-V2-Lite
/// layer, and CBC's check of the warm start as long again: both overran the time limit; docs/MODEL.md.)
std::vector<double> solve_relaxation(OsiClpSolverInterface& si, double& bound) {
  ClpSolve barrier;
  barrier.setSolveType(ClpSolve::useBarrier);
  si.messageHandler()->setLogLevel(0);
  si.setSolveOptions(barrier);
  si.initialSolve();
  ClpSolve dual;
  dual.setSolveType(ClpSolve::useDual);
  dual.setPresolveType(ClpSolve::presolveOff);
  si.setSolveOptions(dual);
  si.setHintParam(OsiDoPresolveInInitial, false, OsiHintDo);
  si.setHintParam(OsiDoPresolveInResolve, false, OsiHintDo);
  if (!si.isProvenOptimal()) return {};
  bound = si.getObjValue();
  return std::vector<double>(si.getColSolution(), si.getColSolution() + si.getNumCols());
}

/// A complete MILP point for given shares: Z = their support, y = OR of Z, all times; and its objective.
std::vector<double> column_point(const NodeBalanceProblem& pb, const MilpColumns& k,
                                 const std::vector<std::vector<double>>& sc, const std::vector<double>& shares,
                                 double& objective) {
  std::vector<double> x(static_cast<size_t>(k.ncols), 0.0);
  for (int i = 0; i < k.E; ++i)
    for (int c = 0; c < k.D; ++c) {
      const double v = shares[static_cast<size_t>(i) * k.D + c];
      x[k.P(i, c)] = v;
      x[k.Z(i, c)] = v > 0 ? 1.0 : 0.0;
    }
  for (int g = 0; g < k.G; ++g)
    for (int c = 0; c < k.D; ++c)
      for (int i : pb.groups.experts[g]) x[k.Y(g, c)] = std::max(x[k.Y(g, c)], x[k.Z(i, c)]);
  x[k.cTm] = evaluate(pb, shares).t_comm * kUs;
  objective = 2.0 * pb.gamma * x[k.cTm];
  for (int s = 0; s < k.S; ++s) {
    for (int c = 0; c < k.D; ++c) {
      double u = 0;
      for (int i = 0; i < k.E; ++i) u += x[k.P(i, c)] * pb.unit_compute(i, sc[s]) * kUs;
      x[k.cU + s * k.D + c] = u;
      x[k.cTc + s] = std::max(x[k.cTc + s], u);
      objective += kTieBreak / (k.D * k.S) * u;
    }
    objective += x[k.cTc + s] / k.S;
  }
  return x;
}

/// A solver's shares, cleaned: numerical dust removed, rows renormalised.
std::vector<double> clean_shares(const MilpColumns& k, const double* x) {
  std::vector<double> P(static_cast<size_t>(k.nP));
  for (int j = 0; j < k.nP; ++j) P[j] = std::clamp(x[k.cP + j], 0.0, 1.0);
  for (int i = 0; i < k.E; ++i) {
    double sum = 0;
    for (int c = 0; c < k.D; ++c) {
      double& v = P[static_cast<size_t>(i) * k.D + c];
      if (v < 1e-7) v = 0;
      sum += v;
    }
    for (int c = 0; c < k.D; ++c) P[static_cast<size_t>(i) * k.D + c] /= sum;
  }
  return P;
}

/// CBC's start: the better of EP and the rounded LP point.
std::vector<double> start_point(const NodeBalanceProblem& pb, const MilpColumns& k,
                                const std::vector<std::vector<double>>& sc, const std::vector<double>& warm,
                                const std::vector<double>& lp, double& start_obj) {
  std::vector<double> w = column_point(pb, k, sc, warm, start_obj);
  if (lp.empty()) return w;
  std::vector<double> shares(static_cast<size_t>(k.nP));
  for (int j = 0; j < k.nP; ++j) shares[j] = lp[k.cP + j] > 1e-9 ? lp[k.cP + j] : 0.0;
  double rounded_obj = 0;
  std::vector<double> r = column_point(pb, k, sc, shares, rounded_obj);
  if (rounded_obj < start_obj) {
    start_obj = rounded_obj;
    return r;
  }
  return w;
}

}  // namespace

NodeBalanceResult solve_node_balance(const NodeBalanceProblem& pb, const std::vector<double>& warm,
                                     double time_limit_s) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto sc = pb.scenarios();
  const MilpColumns k(pb, static_cast<int>(sc.size()));
  NodeBalanceResult res;
  // Workload cap of Eq. 9, relaxed if the EP warm start exceeds it (so EP stays feasible).
  res.workload_cap = std::max(pb.workload_cap(), max_load(pb, warm));
  OsiClpSolverInterface si;
  load_milp(pb, k, sc, res.workload_cap, si, res.constraints);
  res.variables = k.ncols;
  double relaxation_bound = 0;
  const std::vector<double> lp = solve_relaxation(si, relaxation_bound);
  CbcModel model(si);
  CbcMain0(model);  // the stand-alone solver's defaults (cut generators, primal heuristics)
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  const NodeBalanceEval warm_eval = evaluate(pb, warm);
  res.warm_objective = warm_eval.objective;
  double start_obj = 0;
  const std::vector<double> w = start_point(pb, k, sc, warm, lp, start_obj);
  // The start point is feasible by construction (start_point); CBC's check would re-solve the LP.
  model.setBestSolution(w.data(), k.ncols, start_obj * (1 + 1e-9), false);
  const std::string seconds = std::to_string(std::max(0.1, time_limit_s));
  // CBC's preprocessing is off: in Debian's CBC 2.10 it overran the time limit many times over on
  // these models and crashed in CglPreProcess::postProcess on some. Branch and bound runs only on
  // instances small enough for its simplex root to respect the limit (docs/MODEL.md).
  const bool run_cbc = k.ncols <= kMaxCbcColumns;
  if (run_cbc) {
    const char* argv[] = {"nmpsim", "-log", "0", "-preprocess", "off", "-sec", seconds.c_str(), "-solve", "-quit"};
    CbcMain1(9, argv, model);
  }
  // Candidates: CBC's incumbent, the LP-and-fix solution, the EP warm start; the best under the model wins.
  std::vector<std::vector<double>> cands{warm};
  if (run_cbc && model.bestSolution()) cands.push_back(clean_shares(k, model.bestSolution()));
  if (!lp.empty()) cands.push_back(clean_shares(k, lp.data()));
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
  res.best_bound = bound / (1 + kTieBreak) / kUs;
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
