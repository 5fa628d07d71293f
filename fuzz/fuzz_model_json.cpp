// Fuzz target: model JSON (mapping::model_from_json). An accepted model must survive a round trip and
// give finite sizes.
#include <cmath>

#include "fuzz_common.h"
#include "nmpsim/mapping/moe_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nmpsim;
  fuzz::expect_clean([&] {
    const mapping::ModelSpec m = mapping::model_from_json(base::parse_json_text(fuzz::text(data, size), "m"), "m");
    const mapping::ModelSpec again = mapping::model_from_json(mapping::model_to_json(m), "round trip");
    if (!std::isfinite(m.moe_layer_bytes()) || !std::isfinite(m.attention_flops_per_token(1 << 20)) ||
        again.expert_bytes() != m.expert_bytes())
      std::abort();
  });
  return 0;
}
