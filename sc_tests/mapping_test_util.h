// Helpers shared by the mapping-layer tests.
#pragma once

#include "mapping/moe_model.h"
#include "mapping/trace.h"

namespace nmpsim::mapping::testing {

/// A synthetic trace shaped like the model (its MoE layers, experts and top-k).
inline RoutingTrace trace_for(const ModelSpec& m, double skew, size_t tokens) {
  SyntheticTraceConfig c;
  c.layers = m.moe_layers;
  c.experts = m.experts;
  c.top_k = m.top_k;
  c.tokens = tokens;
  c.zipf_s = skew;
  return synthetic_trace(c);
}

}  // namespace nmpsim::mapping::testing
