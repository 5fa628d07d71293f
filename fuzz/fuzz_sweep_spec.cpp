// Fuzz target: sweep specs (apps::sweep_from_json and expand): any JSON text is refused with a one-line
// input error or expands into at most 100000 points, each a valid run spec.
#include "fuzz_common.h"
#include "nmpsim/apps/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nmpsim;
  fuzz::expect_clean([&] {
    const apps::SweepSpec s = apps::sweep_from_json(base::parse_json_text(fuzz::text(data, size), "s"), "s");
    const std::vector<apps::SweepPoint> points = apps::expand(s);
    if (points.size() > apps::kMaxSweepPoints) std::abort();
    (void)apps::sweep_from_json(apps::sweep_to_json(s), "round trip");
  });
  return 0;
}
