// Fuzz target: routing trace JSON (mapping::trace_from_json), for an 8-expert top-2 and a 64-expert
// top-6 model. An accepted trace has every id in range and survives a round trip.
#include "fuzz_common.h"
#include "nmpsim/mapping/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nmpsim;
  if (size < 1) return 0;
  const int experts = data[0] & 1 ? 64 : 8, top_k = data[0] & 1 ? 6 : 2;
  fuzz::expect_clean([&] {
    const nlohmann::json j = base::parse_json_text(fuzz::text(data + 1, size - 1), "t");
    const mapping::RoutingTrace t = mapping::trace_from_json(j, "t", experts, top_k);
    for (int l = 0; l < t.layers(); ++l)
      for (size_t i = 0; i < t.tokens(); ++i)
        for (int k = 0; k < top_k; ++k)
          if (t.experts_of(l, i)[k] >= experts) std::abort();
    (void)mapping::trace_from_json(mapping::trace_to_json(t), "round trip", experts, top_k);
  });
  return 0;
}
