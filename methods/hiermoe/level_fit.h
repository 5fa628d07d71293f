// Per-level alpha-beta costs of HierMoE's all-to-all kinds, fitted by least squares from
// microbenchmarks our own NoC model runs (as the paper fits its Fig. 9 from measurements): for each
// kind (the flat all-to-all, and per inter level i the Inter-level-i and Intra-level-i all-to-all),
// every group of that kind exchanges m bytes between every ordered pair of its members at once, at
// six message sizes, on the flow-level executor. n is the volume the paper's n counts for uniform
// traffic: P (P - 1) m for the flat and intra kinds (one group, Eq. 2 and 5), and that times the
// group size for an inter level, whose Eq. 4 counts the tokens bound for a group over all the positions
// that carry them (one exchange set per position). Plain C++.
#pragma once

#include <string>
#include <vector>

#include "mapping/flow_model.h"
#include "mapping/hierarchy.h"
#include "methods/hiermoe/dedup.h"

namespace nmpsim::methods::hiermoe {

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
LevelFit fit_levels(const mapping::AnalyticalHardware& hw, const mapping::Hierarchy& h,
                    const std::vector<double>& sizes = {});
/// fit_levels at the default sizes, fitted once per process for each hardware and hierarchy (every
/// HierMoE strategy and run on the same hardware shares it; seconds on large systems).
HierarchyCosts fitted_costs(const mapping::AnalyticalHardware& hw, const mapping::Hierarchy& h);

}  // namespace nmpsim::methods::hiermoe
