// Command-line options shared by `nmpsim run` and `nmpsim place`: the model and its routing trace.
#pragma once

#include <boost/program_options.hpp>

#include <string>

#include "mapping/moe_model.h"
#include "mapping/trace.h"

namespace nmpsim::apps {

struct WorkloadOptions {
  std::string model = "mixtral-8x7b";
  std::string trace = "synthetic";
  double weight_bytes = 0, activation_bytes = 0;
  long long seed = 1, synthetic_tokens = 4096, scenarios = 1;
  double skew = 0.8, coactivation = 0.3, layer_correlation = 0.4, drift = 0.0;

  void add_to(boost::program_options::options_description& desc);
  /// The model preset with --weight-bytes / --activation-bytes applied.
  mapping::ModelSpec make_model() const;
  /// The trace file, or the synthetic trace, checked against the model.
  mapping::RoutingTrace make_trace(const mapping::ModelSpec& m) const;
};

}  // namespace nmpsim::apps
