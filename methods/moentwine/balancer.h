// MoEntwine's NI-Balancer, offline parts (Sec. V): which experts get shadow replicas where
// (Algorithm 1, topology-aware), the load predictor, and the migration trigger. Plain C++; the
// runtime policy that moves the weights builds on these. docs/MODEL.md "MoEntwine: balancer".
#pragma once

#include <deque>
#include <vector>

#include "mapping/topology.h"

namespace nmpsim::methods::moentwine {

/// Where every expert of one layer has copies: its native device first, then shadow replicas.
struct ExpertCopies {
  std::vector<std::vector<int>> holders;  ///< per expert
  std::vector<int> free_shadow;           ///< per device: shadow slots still free
};
/// One native expert per device round-robin (expert e on device e mod devices), `slots` shadow slots each.
ExpertCopies native_copies(int experts, int devices, int slots);

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
std::vector<Move> topology_aware_balance(const mapping::Topology& t, ExpertCopies& c, const std::vector<double>& load);

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
