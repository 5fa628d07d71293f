// MoEntwine's NI-Balancer, offline parts (Sec. V): which experts get shadow replicas where
// (Algorithm 1, topology-aware), the load predictor, and the migration trigger. Plain C++; the
// runtime policy that moves the weights builds on these. docs/MODEL.md "MoEntwine: balancer".
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "nmpsim/mapping/topology.h"

namespace nmpsim::methods::moentwine {

/// Where every expert of one layer has copies: its native device first, then shadow replicas.
struct ExpertCopies {
  std::vector<std::vector<int>> holders;  ///< per expert
  std::vector<int> free_shadow;           ///< per device: shadow slots still free
  /// Whether device d holds expert e (natively or as a replica).
  bool holds(int e, int d) const;
};
/// One native expert per device round-robin (expert e on device e mod devices), `slots` shadow slots each.
ExpertCopies native_copies(int experts, int devices, int slots);
/// The native copies of one layer's placement rows [expert][node]: every expert must sit whole on one
/// node (share 1; EP-like placements). Throws InputError naming `where` and the expert otherwise.
ExpertCopies copies_from_shares(const std::vector<std::vector<double>>& rows, int slots, const std::string& where);

/// Heat of every device: the sum over the experts it holds of their load / their number of copies
/// (tokens of a replicated expert split evenly among its holders).
std::vector<double> heats(const ExpertCopies& c, const std::vector<double>& load, int devices);

/// (max - mean) / mean of the heats (0 when the mean is 0): the paper's per-layer imbalance I_l.
double imbalance(const std::vector<double>& heat);

struct Move {
  int expert = 0, from = 0, to = 0;  ///< copy `expert` from the holder `from` into a shadow slot of `to`
};

/// Algorithm 1 (topology-aware): repeatedly, on the hottest device take its most popular expert that
/// can still be copied and copy it to the nearest device (Manhattan distance from the hottest device;
/// ties: lower id) that has a free shadow slot, does not hold it, and whose heat after the copy stays
/// below the current peak; the copy comes from the holder nearest to the target. Stops when no expert
/// of the hottest device qualifies. Updates `c` and returns the moves in order.
/// With `existing` (the replicas serving now), a qualifying device that already holds the expert there
/// comes first: nothing has to move (our addition, so that re-planning keeps what still serves).
std::vector<Move> topology_aware_balance(const mapping::Topology& t, ExpertCopies& c, const std::vector<double>& load,
                                         const ExpertCopies* existing = nullptr);

/// Greedy EPLB (the topology-unaware baseline): repeatedly give the expert of highest load per copy
/// one more copy on the coldest device (lowest heat; ties: lower id) that has a free shadow slot and
/// does not hold it, copied from its native holder; stops when no device qualifies or the expert has
/// no load. Updates `c` and returns the moves in order.
std::vector<Move> greedy_balance(ExpertCopies& c, const std::vector<double>& load);

/// One stage of a staged migration: the XY path from `src` to `dst` is a run of hops that all stay
/// inside one full token domain (local) or all cross between domains (global).
struct Stage {
  int src = 0, dst = 0, hops = 0;
  bool global = false;
};
/// Cuts the XY path from -> to into stages: a new stage starts wherever a hop's kind (both ends in one
/// domain or not, by `domain_of`; empty: one domain) changes. from == to gives no stage.
std::vector<Stage> migration_stages(const mapping::Topology& t, const std::vector<int>& domain_of, int from, int to);

/// One copy of a round in which every copy lands before inference goes on (paused migration).
struct Copy {
  int from = 0, to = 0;
  int after = -1;  ///< the copy of this round whose target `from` is (-1: `from` holds it already)
};
/// One stream of weights: from `src` through `nodes`, each storing the expert; starts when chain
/// `wait_for` (-1: none) is done.
struct CopyChain {
  int src = 0, wait_for = -1;
  std::vector<int> nodes;
};
/// Groups a round's copies into pipelined chains: a copy from the last node of a chain extends it;
/// a copy from any other node of a chain starts a new one that waits for it. Chains keep the copies'
/// order; copy i's `after` must be less than i.
std::vector<CopyChain> copy_chains(const std::vector<Copy>& copies);

/// Per layer, the expert loads predicted from history: the mean of the last `window` steps, or an
/// exponential moving average with weight `ema` on the newest step (ema > 0).
class LoadPredictor {
 public:
  LoadPredictor(int layers, int window = 8, double ema = 0);
  void observe(int layer, const std::vector<double>& load);
  /// Empty until the layer has been observed once.
  std::vector<double> predict(int layer) const;

 private:
  int window_;
  double ema_;
  std::vector<std::deque<std::vector<double>>> history_;
  std::vector<std::vector<double>> average_;
};

/// Eq. 2 (reconstructed): migrate when the sum over layers of I_l exceeds alpha and at least beta steps
/// have passed since the last migration (beta = 0: non-invasive, may migrate every step).
bool should_migrate(const std::vector<double>& imbalance_per_layer, double alpha, int steps_since_last, int beta);

}  // namespace nmpsim::methods::moentwine
