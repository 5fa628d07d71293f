#include "nmpsim/methods/hdmoe/node_balance_milp.h"

#include <CoinPackedMatrix.hpp>
#include <algorithm>

namespace nmpsim::methods::hdmoe::milp {

namespace {
constexpr double kInf = 1e30;

struct Rows {
  CoinPackedMatrix m{false, 0, 0};
  std::vector<double> lb, ub;
  void add(const std::vector<int>& idx, const std::vector<double>& val, double lo, double hi) {
    m.appendRow(static_cast<int>(idx.size()), idx.data(), val.data());
    lb.push_back(lo);
    ub.push_back(hi);
  }
};

/// Rows of node c: its compute time per scenario (7), its communication (8) with the OR linearisation,
/// the workload cap (9) and memory.
void node_rows(const NodeBalanceProblem& pb, const Columns& k, const std::vector<std::vector<double>>& sc, int c,
               double cap, Rows& rows) {
  for (int s = 0; s < k.S; ++s) {
    std::vector<int> idx{k.cU + s * k.D + c};
    std::vector<double> val{1.0};
    for (int i = 0; i < k.E; ++i)
      if (k.P(i, c) >= 0) {
        idx.push_back(k.P(i, c));
        val.push_back(-pb.unit_compute(i, sc[s]) * kUs);
      }
    rows.add(idx, val, 0.0, kInf);                                      // u[s][c] >= node c's compute time in batch s
    rows.add({k.cTc + s, k.cU + s * k.D + c}, {1.0, -1.0}, 0.0, kInf);  // (7): t_comp[s] >= u[s][c]
  }
  const double comm_coef = pb.token_bytes * pb.batch / pb.link_bytes_per_s * kUs;
  std::vector<int> idx{k.cTm};
  std::vector<double> val{1.0};
  for (int g = 0; g < k.G; ++g)
    if (k.Y(g, c) >= 0) {
      idx.push_back(k.Y(g, c));
      val.push_back(-pb.groups.freq[g] * comm_coef);
    }
  for (int i = 0; i < k.E; ++i)
    if (pb.groups.residual[i] > 0 && k.Z(i, c) >= 0) {
      idx.push_back(k.Z(i, c));
      val.push_back(-pb.groups.residual[i] * comm_coef);
    }
  rows.add(idx, val, 0.0, kInf);  // (8)
  for (int g = 0; g < k.G; ++g)
    for (int i : pb.groups.experts[g])
      if (k.Z(i, c) >= 0) rows.add({k.Y(g, c), k.Z(i, c)}, {1.0, -1.0}, 0.0, kInf);  // OR linearisation
  idx.clear();
  val.clear();
  for (int i = 0; i < k.E; ++i)
    if (k.P(i, c) >= 0) {
      idx.push_back(k.P(i, c));
      val.push_back(pb.freq[i]);
    }
  if (idx.empty()) return;
  if (pb.workload_bound) rows.add(idx, val, 0.0, cap);                               // (9)
  rows.add(idx, std::vector<double>(idx.size(), 1.0), 0.0, pb.max_shares_per_node);  // memory
}
}  // namespace

Columns::Columns(const NodeBalanceProblem& pb, int scenarios, const std::vector<char>& allowed)
    : E(pb.experts), D(pb.nodes), G(static_cast<int>(pb.groups.experts.size())), S(scenarios) {
  p.assign(static_cast<size_t>(E) * D, -1);
  z = p;
  y.assign(static_cast<size_t>(G) * D, -1);
  for (size_t j = 0; j < p.size(); ++j)
    if (allowed[j]) {
      p[j] = ncols++;
      z[j] = ncols++;
      ++pairs;
    }
  for (int g = 0; g < G; ++g)
    for (int c = 0; c < D; ++c) {
      bool any = false;
      for (int i : pb.groups.experts[g]) any = any || Z(i, c) >= 0;
      if (any) y[static_cast<size_t>(g) * D + c] = ncols++;
    }
  cTc = ncols;
  cTm = cTc + S;
  cU = cTm + 1;
  ncols = cU + S * D;
}

int load(const NodeBalanceProblem& pb, const Columns& k, const std::vector<std::vector<double>>& sc, double cap,
         OsiClpSolverInterface& si) {
  std::vector<double> collb(static_cast<size_t>(k.ncols), 0.0), colub(static_cast<size_t>(k.ncols), 1.0),
      obj(static_cast<size_t>(k.ncols), 0.0);
  for (int c = k.cTc; c < k.ncols; ++c) colub[c] = kInf;
  for (int s = 0; s < k.S; ++s) obj[k.cTc + s] = 1.0 / k.S;  // mean over batches of the busiest node
  obj[k.cTm] = 2.0 * pb.gamma;
  // Tie-breaker: the objective only sees the busiest node, so among equal optima prefer the one that
  // also balances the others (1e-3 of the mean node time).
  for (int u = 0; u < k.S * k.D; ++u) obj[k.cU + u] = kTieBreak / (k.D * k.S);
  Rows rows;
  rows.m.setDimensions(0, k.ncols);
  for (int i = 0; i < k.E; ++i)
    for (int c = 0; c < k.D; ++c)
      if (k.P(i, c) >= 0) rows.add({k.Z(i, c), k.P(i, c)}, {1.0, -1.0}, 0.0, kInf);  // (5)
  for (int i = 0; i < k.E; ++i) {                                                    // (6)
    std::vector<int> idx;
    for (int c = 0; c < k.D; ++c)
      if (k.P(i, c) >= 0) idx.push_back(k.P(i, c));
    rows.add(idx, std::vector<double>(idx.size(), 1.0), 1.0, 1.0);
  }
  for (int c = 0; c < k.D; ++c) node_rows(pb, k, sc, c, cap, rows);
  si.loadProblem(rows.m, collb.data(), colub.data(), obj.data(), rows.lb.data(), rows.ub.data());
  for (int j = 0; j < k.E * k.D; ++j)
    if (k.z[j] >= 0) si.setInteger(k.z[j]);
  si.messageHandler()->setLogLevel(0);
  return static_cast<int>(rows.lb.size());
}

std::vector<double> point(const NodeBalanceProblem& pb, const Columns& k, const std::vector<std::vector<double>>& sc,
                          const std::vector<double>& shares, double& objective) {
  std::vector<double> x(static_cast<size_t>(k.ncols), 0.0);
  for (int i = 0; i < k.E; ++i)
    for (int c = 0; c < k.D; ++c)
      if (k.P(i, c) >= 0) {
        const double v = shares[static_cast<size_t>(i) * k.D + c];
        x[k.P(i, c)] = v;
        x[k.Z(i, c)] = v > 0 ? 1.0 : 0.0;
      }
  for (int g = 0; g < k.G; ++g)
    for (int c = 0; c < k.D; ++c)
      for (int i : pb.groups.experts[g])
        if (k.Z(i, c) >= 0) x[k.Y(g, c)] = std::max(x[k.Y(g, c)], x[k.Z(i, c)]);
  x[k.cTm] = evaluate(pb, shares).t_comm * kUs;
  objective = 2.0 * pb.gamma * x[k.cTm];
  for (int s = 0; s < k.S; ++s) {
    for (int c = 0; c < k.D; ++c) {
      double u = 0;
      for (int i = 0; i < k.E; ++i) u += shares[static_cast<size_t>(i) * k.D + c] * pb.unit_compute(i, sc[s]) * kUs;
      x[k.cU + s * k.D + c] = u;
      x[k.cTc + s] = std::max(x[k.cTc + s], u);
      objective += kTieBreak / (k.D * k.S) * u;
    }
    objective += x[k.cTc + s] / k.S;
  }
  return x;
}

std::vector<double> shares(const Columns& k, const double* x) {
  std::vector<double> P(static_cast<size_t>(k.E) * k.D, 0.0);
  for (int i = 0; i < k.E; ++i) {
    double sum = 0;
    for (int c = 0; c < k.D; ++c) {
      if (k.P(i, c) < 0) continue;
      double& v = P[static_cast<size_t>(i) * k.D + c];
      v = std::clamp(x[k.P(i, c)], 0.0, 1.0);
      if (v < 1e-7) v = 0;
      sum += v;
    }
    for (int c = 0; c < k.D; ++c) P[static_cast<size_t>(i) * k.D + c] /= sum;
  }
  return P;
}

}  // namespace nmpsim::methods::hdmoe::milp
