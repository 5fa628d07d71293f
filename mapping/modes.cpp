#include "nmpsim/mapping/modes.h"

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::mapping {

const char* fidelity_name(Fidelity f) { return f == Fidelity::kCycle ? "cycle" : "flow"; }

const char* reduce_mode_name(ReduceMode m) { return m == ReduceMode::kFused ? "fused" : "kernel"; }

const char* ring_algorithm_name(RingAlgorithm a) {
  switch (a) {
    case RingAlgorithm::kBidirectional:
      return "bidirectional";
    case RingAlgorithm::k2d:
      return "2d";
    case RingAlgorithm::kAuto:
      return "auto";
    default:
      return "ring";
  }
}

Fidelity parse_fidelity(const std::string& text, const std::string& where) {
  if (text == "cycle") return Fidelity::kCycle;
  if (text == "flow") return Fidelity::kFlow;
  throw InputError(where + ": expected cycle or flow, got '" + text + "'");
}

}  // namespace nmpsim::mapping
