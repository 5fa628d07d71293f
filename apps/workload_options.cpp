#include "apps/workload_options.h"

#include <limits>

#include "apps/cli_common.h"
#include "mapping/json_fields.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

void WorkloadOptions::add_to(po::options_description& desc) {
  // clang-format off
  desc.add_options()
    ("model", po::value(&model)->default_value(model),
     "model preset: mixtral-8x7b, deepseek-v2-lite, qwen2-57b-a14b, deepseek-v3, qwen3-235b-a22b, dbrx, mixtral-8x22b")
    ("trace", po::value(&trace)->default_value(trace),
     "routing trace: a JSON file (.json or .json.gz: layer -> token -> expert ids), a vendored MT-Bench trace (mtbench-math, mtbench-coding, ...: data/README.md) or 'synthetic'")
    ("weight-bytes", po::value(&weight_bytes)->default_value(0, "model's"), "bytes per weight (2 FP16, 1 INT8)")
    ("activation-bytes", po::value(&activation_bytes)->default_value(0, "model's"), "bytes per activation element")
    ("seed", po::value(&seed)->default_value(seed), "seed of the synthetic trace (and of randomised searches)")
    ("synthetic-tokens", po::value(&synthetic_tokens)->default_value(synthetic_tokens), "synthetic trace: tokens per layer")
    ("skew", po::value(&skew)->default_value(skew, "0.8"), "synthetic trace: Zipf exponent of expert popularity")
    ("coactivation", po::value(&coactivation)->default_value(coactivation, "0.3"),
     "synthetic trace: chance a token's next expert is its previous expert's partner")
    ("layer-correlation", po::value(&layer_correlation)->default_value(layer_correlation, "0.4"),
     "synthetic trace: chance a token's first expert follows from its previous layer's")
    ("scenarios", po::value(&scenarios)->default_value(scenarios), "synthetic trace: contiguous scenarios")
    ("drift", po::value(&drift)->default_value(drift, "0"), "synthetic trace: share of popularity ranks reshuffled per scenario");
  // clang-format on
}

mapping::ModelSpec WorkloadOptions::make_model() const {
  mapping::ModelSpec m = mapping::model_preset(model);
  if (weight_bytes != 0) m.weight_bytes = weight_bytes;
  if (activation_bytes != 0) m.activation_bytes = activation_bytes;
  m.validate("--model " + model);
  return m;
}

mapping::RoutingTrace WorkloadOptions::make_trace(const mapping::ModelSpec& m) const {
  if (trace == "synthetic") {
    mapping::SyntheticTraceConfig sc;
    sc.layers = m.moe_layers;
    sc.experts = m.experts;
    sc.top_k = m.top_k;
    sc.tokens = checked_count(synthetic_tokens, "synthetic-tokens", 1, 1 << 24);
    sc.zipf_s = skew;
    sc.coactivation = coactivation;
    sc.layer_correlation = layer_correlation;
    sc.scenarios = static_cast<int>(checked_count(scenarios, "scenarios", 1, 1 << 16));
    sc.drift = drift;
    sc.seed = checked_count(seed, "seed", 0, std::numeric_limits<long long>::max());
    return mapping::synthetic_trace(sc);
  }
  mapping::RoutingTrace t = mapping::load_trace(trace, m.experts, m.top_k);
  if (t.layers() < m.moe_layers)
    throw mapping::InputError(trace + ": has " + std::to_string(t.layers()) + " layers, model " + m.name + " has " +
                              std::to_string(m.moe_layers) + " MoE layers");
  return t;
}

}  // namespace nmpsim::apps
