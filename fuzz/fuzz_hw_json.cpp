// Fuzz target: hardware description JSON (hw::hardware_from_json). An accepted description must
// describe itself and survive a round trip through to_json.
#include "fuzz_common.h"
#include "nmpsim/hw/hardware_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nmpsim;
  fuzz::expect_clean([&] {
    const hw::HardwareSpec s = hw::hardware_from_json(base::parse_json_text(fuzz::text(data, size), "hw"), "hw");
    (void)s.describe();
    const hw::HardwareSpec again = hw::hardware_from_json(hw::to_json(s), "round trip");
    if (again.flit_bytes() != s.flit_bytes() || again.topology.nodes() != s.topology.nodes()) std::abort();
  });
  return 0;
}
