// HD-MoE (Huang et al., 2025), Sec. IV-B and IV-C1: the analytical model and node balance by MILP.
//
// Per MoE layer, with P[i][c] the share of expert i on logical node c:
//   t_comp = max_c sum_i P[i][c] * max(f_i B F / comp, W / BW_mem)        (Eq. 1, see below)
//   t^comm = max_c (token_bytes B / BW) * sum_g f_g * OR_{i in g} Z[i][c]  (Eq. 2, 8)
//   minimise t_comp + 2 gamma t^comm                                       (Eq. 11-12)
//   s.t. Z >= P (5), sum_c P = 1 (6), the workload bound of Eq. 9-10, and memory capacity.
// f_i: activation frequency (tokens choosing i / tokens; sums to top-k), f_g: frequency of the
// co-activation group g (a token's set of experts), F: FLOPs per token through a whole expert,
// W: its weight bytes. Two deliberate departures from the paper, both documented in docs/MODEL.md:
// Eq. 1 takes each expert's roofline (on NMP, streaming weights from DRAM often bounds an expert,
// which pure FLOPs would miss); and Eq. 8's group indicator is the OR the paper describes in words
// (linearised with y[g][c] >= Z[i][c]), since the literal sum over i in g collapses to sum_i f_i Z.
// Large models have thousands of groups: the `max_groups` most frequent stay exact, the rest are
// folded into per-expert terms (a union bound: an upper bound on their traffic).
#pragma once

#include <string>
#include <vector>

#include "nmpsim/mapping/moe_model.h"
#include "nmpsim/mapping/trace.h"

namespace nmpsim::methods::hdmoe {

using mapping::ModelSpec;
using mapping::RoutingTrace;

struct CoactivationGroups {
  std::vector<std::vector<int>> experts;  ///< kept groups (sorted expert ids)
  std::vector<double> freq;               ///< their frequencies (share of tokens)
  std::vector<double> residual;           ///< per expert: frequency of the folded groups containing it
  size_t total_groups = 0;                ///< distinct groups in the profile
  double kept_mass = 0;                   ///< share of tokens whose group is kept
};
CoactivationGroups coactivation_groups(const RoutingTrace& t, int layer, size_t max_groups);

/// Everything the node-balance model of one layer needs.
struct NodeBalanceProblem {
  int experts = 0, nodes = 0, top_k = 1;
  double batch = 64;
  std::vector<double> freq;  ///< f_i
  /// Optional sampled batches: per batch, the share of its tokens choosing each expert. When given,
  /// t_comp is the mean over batches of the busiest node (the expected per-step maximum), not the
  /// busiest node under the average frequencies: batch-level fluctuation is what a static split pays.
  std::vector<std::vector<double>> batch_freq;
  CoactivationGroups groups;
  double expert_flops_per_token = 0, expert_bytes = 0, token_bytes = 0;
  double peak_flops = 5e12, memory_bytes_per_s = 593.75e9, link_bytes_per_s = 50e9;
  double gamma = 1.0;
  double max_shares_per_node = 1e9;  ///< memory: sum_i P[i][c] <= this (whole experts' worth)
  bool workload_bound = true;        ///< Eq. 9-10

  /// Seconds node c spends per unit share of expert i (under frequencies f, default the profile's).
  double unit_compute(int i) const { return unit_compute(i, freq); }
  double unit_compute(int i, const std::vector<double>& f) const;
  /// The frequency vectors t_comp is taken over: the sampled batches, or the profile.
  std::vector<std::vector<double>> scenarios() const {
    return batch_freq.empty() ? std::vector<std::vector<double>>{freq} : batch_freq;
  }
  /// Right side of Eq. 9: (1 / R_CC + 1) e / D.
  double workload_cap() const;
};

struct NodeBalanceEval {
  double t_comp = 0, t_comm = 0, objective = 0;
};
/// Evaluates a placement (P as [expert * nodes + node]) under the analytical model.
NodeBalanceEval evaluate(const NodeBalanceProblem& pb, const std::vector<double>& P);

struct NodeBalanceResult {
  std::vector<double> P;  ///< [expert * nodes + node]
  NodeBalanceEval eval;
  double warm_objective = 0;  ///< the EP warm start under the same model
  double best_bound = 0;      ///< solver's lower bound
  double gap = 0;             ///< (objective - bound) / objective
  double seconds = 0;
  bool optimal = false;
  bool used_cbc = false;     ///< branch and bound ran
  bool full_model = true;    ///< every (expert, node) pair was a column (else a neighbourhood of the starts)
  std::string start = "ep";  ///< where the answer came from: ep | wrap | lp | cbc
  double search_gap = 0;     ///< CBC's own gap on the model it searched (the neighbourhood if not full)
  int branch_nodes = 0;
  int variables = 0, constraints = 0;
  double workload_cap = 0;  ///< Eq. 9 bound used (relaxed to admit the EP warm start if needed)
};

/// The LP relaxation's optimum in closed form, a lower bound on every placement's objective: the
/// busiest node is at least the mean node, so t_comp >= mean over batches of (sum_i unit time) / D, and
/// since every expert and so every group reaches some node, t_comm >= (sum_g f_g + sum_i residual_i) x
/// token_bytes B / (BW D). Spreading every expert evenly (P = 1/D, Z = y = 1/D) attains it.
double averaging_bound(const NodeBalanceProblem& pb);
/// McNaughton's wrap-around rule on each expert's mean time over the batches: experts in order of time
/// (heaviest and lightest alternating, so shares per node stay even) fill node after node up to
/// max(total / D, largest); an expert crossing a node's end is split across the two. The mean batch is
/// balanced to the bound with at most D - 1 split experts. Experts no token chose go to the nodes with
/// the fewest shares.
std::vector<double> wrap_around_split(const NodeBalanceProblem& pb);
/// Every node holds one expert's share (D >= E) or whole experts only (D < E): with D >= E each expert
/// gets one node, and each further node goes to the expert with the largest mean time per node (the
/// greedy apportionment that minimises the largest time per node), experts in index order on
/// consecutive nodes, each split evenly over its nodes; with D < E the experts, heaviest first, go
/// whole to the least-loaded node with room (LPT). Empty if memory leaves no room. As few holders as EP
/// (no node touches two experts' groups when D >= E) with the compute nearly balanced.
std::vector<double> apportioned_start(const NodeBalanceProblem& pb);
/// Whether shares P respect (6) the row sums, (9) the workload `cap` (if enabled) and memory.
bool within_limits(const NodeBalanceProblem& pb, const std::vector<double>& P, double cap);

/// Solves one layer with COIN-OR CBC, warm-started from `warm` (EP), within `time_limit_s`.
NodeBalanceResult solve_node_balance(const NodeBalanceProblem& pb, const std::vector<double>& warm,
                                     double time_limit_s);

/// Sec. IV-D2: time to pre-broadcast k experts of W bytes over D nodes in chunks of c bytes
/// (Eq. 14-16: alpha per hop and message, beta per byte), and the chunk that minimises it (Eq. 18).
double prebroadcast_seconds(double alpha, double beta, double W, int D, int k, double chunk);
double optimal_broadcast_chunk(double alpha, double beta, double W, int D, int k);
/// Eq. 17: the minimum of prebroadcast_seconds over the chunk size.
double prebroadcast_lower_bound(double alpha, double beta, double W, int D, int k);

/// Least-squares slope through the origin of y against x, and R^2 of y = gamma x.
struct LinearFit {
  double gamma = 0, r2 = 0;
  int samples = 0;
};
LinearFit fit_through_origin(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace nmpsim::methods::hdmoe
