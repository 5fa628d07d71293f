// Modes chosen by name on the command line and in run specs, as enums (parse once, then switch).
#pragma once

#include <string>

namespace nmpsim::mapping {

/// How a run is simulated: the SystemC model with the cycle-level NoC, or the analytical flow model.
enum class Fidelity { kCycle, kFlow };

const char* fidelity_name(Fidelity f);
/// "cycle" or "flow"; anything else throws InputError naming `where`.
Fidelity parse_fidelity(const std::string& text, const std::string& where);

/// How a collective's reductions (a ring reduce-scatter's adds, the combine's sums) run: as compute
/// commands of their own, each paying the compute start-up, or fused into the receive, at the node's
/// FLOP rate without a start-up (docs/MODEL.md "Reductions and grouped experts").
enum class ReduceMode { kKernel, kFused };
const char* reduce_mode_name(ReduceMode m);

/// How a group's all-gather and reduce-scatter run: one way round its ring, half of every chunk each
/// way, 2D on the mesh rectangle the group fills, or the one of these whose closed form is smallest
/// (docs/MODEL.md "2D collectives and auto").
enum class RingAlgorithm { kOneWay, kBidirectional, k2d, kAuto };
const char* ring_algorithm_name(RingAlgorithm a);

}  // namespace nmpsim::mapping
