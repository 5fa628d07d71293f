// Fuzz target: run spec JSON (apps::run_spec_from_json). An accepted spec survives a round trip.
#include "fuzz_common.h"
#include "nmpsim/apps/run_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nmpsim;
  fuzz::expect_clean([&] {
    const apps::RunSpec s = apps::run_spec_from_json(base::parse_json_text(fuzz::text(data, size), "s"), "s");
    const nlohmann::json j = apps::run_spec_to_json(s);
    if (apps::run_spec_to_json(apps::run_spec_from_json(j, "round trip")) != j) std::abort();
  });
  return 0;
}
