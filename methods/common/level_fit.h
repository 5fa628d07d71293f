// Per-level alpha-beta costs of the hierarchical all-to-all kinds (HierMoE's, also used by HybridEP), fitted by least
// squares from microbenchmarks our own NoC model runs (as the paper fits its Fig. 9 from measurements): for each kind
// (the flat all-to-all, and per inter level i the Inter-level-i and Intra-level-i all-to-all), every group of that kind
// exchanges m bytes between every ordered pair of its members at once, at six message sizes, on the flow-level
// executor. n is the volume the paper's n counts for uniform traffic: P (P - 1) m for the flat and intra kinds (one
// group, Eq. 2 and 5), and that times the group size for an inter level, whose Eq. 4 counts the tokens bound for a
// group over all the positions that carry them (one exchange set per position). Plain C++.
#pragma once

#include <string>
#include <vector>

#include "nmpsim/flow/flow_model.h"
#include "nmpsim/methods/common/hierarchy.h"

namespace nmpsim::methods::common {

/// t = alpha + n beta (Eq. 1) of one kind of all-to-all.
struct LinkCost {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
  double seconds(double bytes) const { return alpha_s + bytes * beta_s_per_byte; }
};
/// Per level of a hierarchy: the flat all-to-all (HD1, "Intra(0)"), and per inter level i = 1..D-1
/// its Inter-level-i and Intra-level-i all-to-all.
struct HierarchyCosts {
  LinkCost flat;
  std::vector<LinkCost> inter, intra;  ///< [i - 1]
};

struct FitPoint {
  double bytes = 0;    ///< n
  double seconds = 0;  ///< the measured time
};
struct KindFit {
  std::string kind;  ///< "flat", "inter-<level>", "intra-<level>"
  int participants = 0;
  LinkCost cost;
  double r2 = 0;
  std::vector<FitPoint> points;
};
struct LevelFit {
  HierarchyCosts costs;
  std::vector<KindFit> kinds;  ///< flat, then inter and intra of every level
};

/// Least squares t = alpha + n beta over `points`, weighted by 1 / t^2 (relative error, so that alpha is
/// fitted where it shows); alpha clamped at 0; R^2 of the times.
LinkCost fit_line(const std::vector<FitPoint>& points, double* r2 = nullptr);
/// Runs the microbenchmarks and fits every kind. `sizes`: bytes per pair (default six from 512 B to 512 KiB).
LevelFit fit_levels(const mapping::AnalyticalHardware& hw, const Hierarchy& h, const std::vector<double>& sizes = {});
/// fit_levels at the default sizes, fitted once per process for each hardware and hierarchy (every
/// HierMoE strategy and run on the same hardware shares it; seconds on large systems).
HierarchyCosts fitted_costs(const mapping::AnalyticalHardware& hw, const Hierarchy& h);

}  // namespace nmpsim::methods::common
