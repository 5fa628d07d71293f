#include "nmpsim/methods/hdmoe/node_balance.h"

#include <CbcHeuristic.hpp>
#include <CbcHeuristicLocal.hpp>
#include <CbcHeuristicRINS.hpp>
#include <CbcModel.hpp>
#include <CglFlowCover.hpp>
#include <CglMixedIntegerRounding2.hpp>
#include <ClpSolve.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "nmpsim/base/cleanup.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/methods/hdmoe/node_balance_milp.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

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

constexpr int kMaxFullColumns = 4000;  ///< larger instances get the neighbourhood model
constexpr int kExtraNodes = 2;         ///< least-loaded nodes every expert may also use there
constexpr double kCbcShare = 0.85;     ///< of the time left after the LP
constexpr double kTailLps = 2.5;       ///< CBC's work after its search stops, in LP solves

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

/// Each expert's mean time over the batches t_comp is taken over.
std::vector<double> mean_unit_times(const NodeBalanceProblem& pb) {
  const auto sc = pb.scenarios();
  std::vector<double> w(static_cast<size_t>(pb.experts), 0.0);
  for (const auto& f : sc)
    for (int i = 0; i < pb.experts; ++i) w[i] += pb.unit_compute(i, f) / sc.size();
  return w;
}

/// A placement the answer may come from, evaluated under the model once.
struct StartPoint {
  std::string name;
  std::vector<double> P;
  NodeBalanceEval eval;
};
using StartPoints = std::vector<StartPoint>;

/// The pairs the MILP gets columns for. Small instances: all. Large ones: the supports of the start
/// points, each support node's neighbours (c - 1, c + 1: where the wrap-around rule splits), and the
/// kExtraNodes nodes least loaded in their worst batch under `best`.
std::vector<char> allowed_pairs(const NodeBalanceProblem& pb, int scenarios, const StartPoints& starts,
                                const std::vector<double>& best) {
  const int E = pb.experts, D = pb.nodes, G = static_cast<int>(pb.groups.experts.size());
  std::vector<char> allowed(static_cast<size_t>(E) * D, 1);
  if (2 * E * D + G * D + scenarios * (D + 1) + 1 <= kMaxFullColumns) return allowed;
  std::fill(allowed.begin(), allowed.end(), 0);
  std::vector<double> worst(static_cast<size_t>(D), 0.0);
  for (const auto& f : pb.scenarios())
    for (int c = 0; c < D; ++c) {
      double u = 0;
      for (int i = 0; i < E; ++i) u += best[static_cast<size_t>(i) * D + c] * pb.unit_compute(i, f);
      worst[c] = std::max(worst[c], u);
    }
  std::vector<int> order(static_cast<size_t>(D));
  for (int c = 0; c < D; ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return worst[a] < worst[b]; });
  for (int i = 0; i < E; ++i) {
    for (int e = 0; e < std::min(kExtraNodes, D); ++e) allowed[static_cast<size_t>(i) * D + order[e]] = 1;
    for (const StartPoint& s : starts)
      for (int c = 0; c < D; ++c)
        if (s.P[static_cast<size_t>(i) * D + c] > 0)
          for (int d : {c - 1, c, c + 1}) allowed[static_cast<size_t>(i) * D + (d + D) % D] = 1;
  }
  return allowed;
}

/// Solves the LP relaxation in `si` itself (Clp's barrier, then crossover to an optimal basis) and
/// leaves `si` set to re-solve from that basis with the dual simplex and no presolve, so that CBC's
/// root solve takes no iterations. Returns the column values (empty if not solved) and sets the
/// objective. (The simplex from scratch took 10x longer on these degenerate LPs: docs/MODEL.md.)
std::vector<double> solve_relaxation(OsiClpSolverInterface& si, double& bound) {
  ClpSolve barrier;
  barrier.setSolveType(ClpSolve::useBarrier);
  si.messageHandler()->setLogLevel(0);
  si.setSolveOptions(barrier);
  {
    const base::cleanup::SignalsDeferred deferred;  // Clp's own SIGINT handler would swallow an interrupt
    si.initialSolve();
  }
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

/// Branch and bound from the start point `x0` (objective `x0_obj`, microseconds) within `seconds`,
/// configured by hand rather than by CbcMain1's defaults: those spent the whole limit (and more) in
/// the root node's cut loop and explored no node on 2000-column models (docs/MODEL.md). CBC's
/// preprocessing stays off: in Debian's CBC 2.10 it overran the limit and crashed in
/// CglPreProcess::postProcess on some of these models.
void branch_and_bound(CbcModel& model, const std::vector<double>& x0, double x0_obj, double seconds) {
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.solver()->messageHandler()->setLogLevel(0);
  model.setUseElapsedTime(true);
  model.setMaximumSeconds(std::max(0.01, seconds));
  model.setMaximumCutPassesAtRoot(4);
  model.setMaximumCutPasses(1);
  CglFlowCover flow;  // the Z >= P variable upper bounds are single-node flow structures
  CglMixedIntegerRounding2 mir;
  model.addCutGenerator(&flow, -1, "FlowCover");
  model.addCutGenerator(&mir, -1, "MixedIntegerRounding2");
  // No strong branching: on these degenerate LPs each trial cost as much as tens of nodes, and
  // pseudo-costs from the first branchings explored 5-10x more nodes in the same time with equal or
  // better incumbents (measured on DeepSeek-V2-Lite and Mixtral layers).
  model.setNumberStrong(0);
  model.setNumberBeforeTrust(0);
  CbcRounding rounding(model);
  CbcHeuristicLocal local(model);
  model.addHeuristic(&rounding);
  model.addHeuristic(&local);
  CbcHeuristicRINS rins(model);
  model.addHeuristic(&rins);
  // The start point is feasible by construction (milp::point); CBC's check would re-solve the LP.
  model.setBestSolution(x0.data(), static_cast<int>(x0.size()), x0_obj * (1 + 1e-9), false);
  {
    const base::cleanup::SignalsDeferred deferred;  // an interrupt ends the process after the solve
    model.branchAndBound();
  }
}

/// Index of the candidate with the lowest objective under the model (the first among equals).
size_t best_of(const StartPoints& cands) {
  size_t best = 0;
  for (size_t j = 1; j < cands.size(); ++j)
    if (cands[j].eval.objective < cands[best].eval.objective - 1e-15) best = j;
  return best;
}

double elapsed_s(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

double averaging_bound(const NodeBalanceProblem& pb) {
  double comp = 0;
  for (double w : mean_unit_times(pb)) comp += w;
  double mass = 0;
  for (double f : pb.groups.freq) mass += f;
  for (double r : pb.groups.residual) mass += r;
  const double comm = mass * pb.token_bytes * pb.batch / pb.link_bytes_per_s;
  return (comp + 2 * pb.gamma * comm) / pb.nodes;
}

std::vector<double> wrap_around_split(const NodeBalanceProblem& pb) {
  const int E = pb.experts, D = pb.nodes;
  const std::vector<double> w = mean_unit_times(pb);
  std::vector<int> by_time;
  for (int i = 0; i < E; ++i)
    if (w[i] > 0) by_time.push_back(i);
  std::stable_sort(by_time.begin(), by_time.end(), [&](int a, int b) { return w[a] > w[b]; });
  std::vector<int> order;  // heaviest, lightest, second heaviest, ...
  for (size_t lo = 0, hi = by_time.size(); lo < hi;) {
    order.push_back(by_time[lo++]);
    if (lo < hi) order.push_back(by_time[--hi]);
  }
  double total = 0, largest = 0;
  for (int i : order) {
    total += w[i];
    largest = std::max(largest, w[i]);
  }
  const double target = std::max(total / D, largest);
  std::vector<double> P(static_cast<size_t>(E) * D, 0.0), count(static_cast<size_t>(D), 0.0);
  int c = 0;
  double room = target;
  for (int i : order) {
    double left = 1.0;  // share of expert i still to place
    while (left > 1e-12) {
      if (c == D - 1 || room >= left * w[i] * (1 - 1e-9)) {  // the last node takes whatever remains
        P[static_cast<size_t>(i) * D + c] += left;
        room -= left * w[i];
        break;
      }
      const double part = room / w[i];
      if (part > 1e-6) P[static_cast<size_t>(i) * D + c] += part, left -= part;
      ++c;
      room = target;
    }
  }
  for (int ci = 0; ci < D; ++ci)
    for (int i = 0; i < E; ++i) count[ci] += P[static_cast<size_t>(i) * D + ci];
  for (int i = 0; i < E; ++i)
    if (w[i] <= 0) {
      const int to = static_cast<int>(std::min_element(count.begin(), count.end()) - count.begin());
      P[static_cast<size_t>(i) * D + to] = 1.0;
      count[to] += 1.0;
    }
  return P;
}

std::vector<double> apportioned_start(const NodeBalanceProblem& pb) {
  const int E = pb.experts, D = pb.nodes;
  const std::vector<double> w = mean_unit_times(pb);
  std::vector<double> P(static_cast<size_t>(E) * D, 0.0);
  if (D >= E) {
    std::vector<int> n(static_cast<size_t>(E), 1);  // nodes per expert: one each, then to the busiest per node
    for (int extra = D - E; extra > 0; --extra) {
      int most = 0;
      for (int i = 1; i < E; ++i)
        if (w[i] / n[i] > w[most] / n[most]) most = i;
      ++n[most];
    }
    for (int i = 0, c = 0; i < E; ++i)
      for (int k = 0; k < n[i]; ++k) P[static_cast<size_t>(i) * D + c++] = 1.0 / n[i];
    return P;
  }
  std::vector<int> order(static_cast<size_t>(E));  // whole experts, heaviest first, to the least-loaded node
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return w[a] > w[b]; });
  std::vector<double> load(static_cast<size_t>(D), 0.0);
  std::vector<int> held(static_cast<size_t>(D), 0);
  for (int i : order) {
    int to = -1;
    for (int c = 0; c < D; ++c)
      if (held[c] + 1 <= pb.max_shares_per_node + 1e-9 && (to < 0 || load[c] < load[to])) to = c;
    if (to < 0) return {};  // no room: memory allows no whole-expert packing
    P[static_cast<size_t>(i) * D + to] = 1.0;
    load[to] += w[i];
    ++held[to];
  }
  return P;
}

bool within_limits(const NodeBalanceProblem& pb, const std::vector<double>& P, double cap) {
  const int E = pb.experts, D = pb.nodes;
  for (int i = 0; i < E; ++i) {
    double sum = 0;
    for (int c = 0; c < D; ++c) sum += P[static_cast<size_t>(i) * D + c];
    if (std::abs(sum - 1) > 1e-9) return false;
  }
  for (int c = 0; c < D; ++c) {
    double shares = 0;
    for (int i = 0; i < E; ++i) shares += P[static_cast<size_t>(i) * D + c];
    if (shares > pb.max_shares_per_node + 1e-9) return false;
  }
  return !pb.workload_bound || max_load(pb, P) <= cap * (1 + 1e-9);
}

NodeBalanceResult solve_node_balance(const NodeBalanceProblem& pb, const std::vector<double>& warm,
                                     double time_limit_s) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto sc = pb.scenarios();
  NodeBalanceResult res;
  // Workload cap of Eq. 9, relaxed if the EP warm start exceeds it (so EP stays feasible).
  res.workload_cap = std::max(pb.workload_cap(), max_load(pb, warm));
  StartPoints cands;
  auto add = [&](const char* name, std::vector<double> P) {
    const NodeBalanceEval ev = evaluate(pb, P);
    cands.push_back(StartPoint{name, std::move(P), ev});
  };
  // Start points: EP, the wrap-around split and the apportionment (each if within the limits).
  add("ep", warm);
  res.warm_objective = cands[0].eval.objective;
  if (std::vector<double> wrap = wrap_around_split(pb); within_limits(pb, wrap, res.workload_cap))
    add("wrap", std::move(wrap));
  if (std::vector<double> ap = apportioned_start(pb); !ap.empty() && within_limits(pb, ap, res.workload_cap))
    add("apportion", std::move(ap));
  const milp::Columns k(pb, static_cast<int>(sc.size()),
                        allowed_pairs(pb, static_cast<int>(sc.size()), cands, cands[best_of(cands)].P));
  OsiClpSolverInterface si;
  res.constraints = milp::load(pb, k, sc, res.workload_cap, si);
  res.variables = k.ncols;
  res.full_model = k.full();
  double relaxation_bound = 0;
  const double before_lp_s = elapsed_s(t0);
  const std::vector<double> lp = solve_relaxation(si, relaxation_bound);
  // The LP point with Z = its support (LP-and-round) is a start too, if still within the limits
  // once its numerical dust is removed.
  if (std::vector<double> P = lp.empty() ? std::vector<double>{} : milp::shares(k, lp.data());
      !P.empty() && within_limits(pb, P, res.workload_cap))
    add("lp", std::move(P));
  double x0_obj = 0;
  const std::vector<double> x0 = milp::point(pb, k, sc, cands[best_of(cands)].P, x0_obj);
  CbcModel model(si);
  // CBC checks its clock between nodes; after its search ends it re-solves at its incumbent and runs
  // its heuristics once more, which took up to two LP solves (0.1-0.3 s here). It is given what is
  // left minus that tail and a margin for choosing among the candidates below.
  const double lp_s = elapsed_s(t0) - before_lp_s;
  const double left_s = kCbcShare * (time_limit_s - elapsed_s(t0)) - kTailLps * lp_s;
  res.used_cbc = left_s > 0;
  if (res.used_cbc) branch_and_bound(model, x0, x0_obj, left_s);
  if (res.used_cbc && model.bestSolution()) add("cbc", milp::shares(k, model.bestSolution()));
  // The best candidate under the model wins (EP first: ties keep it).
  const StartPoint& best = cands[best_of(cands)];
  res.P = best.P;
  res.eval = best.eval;
  res.start = best.name;
  // Lower bound: the closed-form relaxation; on the full model also the LP's and CBC's (at least as
  // tight; they include the tie-breaker, at most kTieBreak of the main objective, hence the division).
  double bound = averaging_bound(pb);
  if (res.full_model) {
    double lp_bound = relaxation_bound;
    if (res.used_cbc) lp_bound = std::max(lp_bound, model.getBestPossibleObjValue());
    bound = std::max(bound, lp_bound / (1 + milp::kTieBreak) / milp::kUs);
  }
  res.best_bound = bound;
  res.optimal = res.full_model && res.used_cbc && model.isProvenOptimal();
  res.gap = res.eval.objective > 0 ? std::max(0.0, (res.eval.objective - res.best_bound) / res.eval.objective) : 0.0;
  res.branch_nodes = model.getNodeCount();
  if (res.used_cbc && model.bestSolution()) {
    const double found = model.getObjValue(), proven = model.getBestPossibleObjValue();
    res.search_gap = found > 0 ? std::max(0.0, (found - proven) / found) : 0.0;
  }
  res.seconds = elapsed_s(t0);
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
