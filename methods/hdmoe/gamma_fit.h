// Eq. 3's gamma: the slope, through the origin, of measured dispatch times against the Eq. 2 estimate,
// over sampled placements (TP, EP, CB and random sparse ones) x 3 batches. Measured at flow fidelity
// (the link-load bound) or cycle fidelity (one layer through the SystemC model per sample).
#pragma once

#include "nmpsim/mapping/executor.h"
#include "nmpsim/mapping/modes.h"
#include "nmpsim/methods/hdmoe/hdmoe_strategy.h"

namespace nmpsim::methods::hdmoe {

struct GammaFitResult {
  LinearFit fit;
  int placements = 0;  ///< sampled placements (each measured on 3 batches)
};

/// At cycle fidelity each sample runs one layer on a fresh executor of `cycle`.
GammaFitResult fit_gamma(const mapping::ModelSpec& m, const mapping::AnalyticalHardware& hw,
                         const mapping::RoutingTrace& trace, const HdmoeOptions& opt, mapping::Fidelity fidelity,
                         const mapping::ExecutorFactory& cycle);

/// Best link-balance cost after each evaluation for BO, annealing and random search from the same
/// node-balance placement, as CSV (`nmpsim place --convergence`).
std::string convergence_csv(const mapping::ModelSpec& m, const mapping::AnalyticalHardware& hw,
                            const mapping::RoutingTrace& profile, const mapping::Placement& node_balanced,
                            const HdmoeOptions& opt);

}  // namespace nmpsim::methods::hdmoe
