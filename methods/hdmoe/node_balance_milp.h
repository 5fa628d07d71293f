// The node-balance MILP of one layer as COIN-OR data: columns, rows, points (internal to
// node_balance.cpp; the model is described in node_balance.h). Columns exist only for the allowed
// (expert, node) pairs: all of them on small instances, a neighbourhood of the start points on large
// ones (docs/MODEL.md "HD-MoE node balance at full size").
#pragma once

#include <OsiClpSolverInterface.hpp>
#include <vector>

#include "nmpsim/methods/hdmoe/node_balance.h"

namespace nmpsim::methods::hdmoe::milp {

constexpr double kTieBreak = 1e-3;  ///< weight of the mean node time in the objective
constexpr double kUs = 1e6;         ///< the MILP's times are in microseconds (a well-conditioned LP)

/// Column layout: P[i][c] and Z[i][c] for allowed pairs, y[g][c] where a member of g is allowed on c,
/// t_comp[s] per scenario, t_comm, node compute time u[s][c]. -1 marks an absent column.
struct Columns {
  int E = 0, D = 0, G = 0, S = 0, ncols = 0, cTc = 0, cTm = 0, cU = 0, pairs = 0;
  std::vector<int> p, z, y;
  Columns(const NodeBalanceProblem& pb, int scenarios, const std::vector<char>& allowed);
  int P(int i, int c) const { return p[static_cast<size_t>(i) * D + c]; }
  int Z(int i, int c) const { return z[static_cast<size_t>(i) * D + c]; }
  int Y(int g, int c) const { return y[static_cast<size_t>(g) * D + c]; }
  bool full() const { return pairs == E * D; }
};

/// The objective (Eq. 11-12 plus the tie-breaker) and every constraint, loaded into `si`; returns the
/// number of rows.
int load(const NodeBalanceProblem& pb, const Columns& k, const std::vector<std::vector<double>>& sc, double cap,
         OsiClpSolverInterface& si);

/// A complete point for shares inside the allowed pairs (Z = support, y = OR, all times) and its objective.
std::vector<double> point(const NodeBalanceProblem& pb, const Columns& k, const std::vector<std::vector<double>>& sc,
                          const std::vector<double>& shares, double& objective);

/// A solver's shares ([expert * nodes + node]), cleaned: numerical dust removed, rows renormalised.
std::vector<double> shares(const Columns& k, const double* x);

}  // namespace nmpsim::methods::hdmoe::milp
