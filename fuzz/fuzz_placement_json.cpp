// Fuzz target: placement JSON (mapping::placement_from_json). An accepted placement is valid and
// survives a round trip.
#include "fuzz_common.h"
#include "nmpsim/mapping/placement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nmpsim;
  fuzz::expect_clean([&] {
    const mapping::Placement p = mapping::placement_from_json(base::parse_json_text(fuzz::text(data, size), "p"), "p");
    const mapping::Placement again = mapping::placement_from_json(mapping::placement_to_json(p), "round trip");
    if (again.share != p.share || again.node_map != p.node_map) std::abort();
  });
  return 0;
}
