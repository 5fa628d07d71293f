// Fuzz target: routing traces as they come from a file, gzip-compressed or not
// (base::gunzip_if_compressed, then mapping::trace_from_text): corrupt, truncated and multi-member
// gzip and garbage after it are one-line input errors; an accepted trace has every id in range.
#include "fuzz_common.h"
#include "nmpsim/base/input_file.h"
#include "nmpsim/mapping/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nmpsim;
  fuzz::expect_clean([&] {
    const std::string text = base::gunzip_if_compressed(fuzz::text(data, size), "t", size_t{64} << 20);
    const mapping::RoutingTrace t = mapping::trace_from_text(text, "t", 8, 2);
    for (int l = 0; l < t.layers(); ++l)
      for (size_t i = 0; i < t.tokens(); ++i)
        for (int k = 0; k < 2; ++k)
          if (t.experts_of(l, i)[k] >= 8) std::abort();
  });
  return 0;
}
