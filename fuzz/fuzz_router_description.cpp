// Fuzz target: router description files (rtl::RouterDescription::parse): any text is refused with a
// one-line configuration error or gives fields inside the flit word.
#include "fuzz_common.h"
#include "nmpsim/noc/noc_config.h"
#include "nmpsim/rtl_checks/router_description.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nmpsim;
  fuzz::expect_clean<noc::ConfigError>([&] {
    const rtl::RouterDescription d = rtl::RouterDescription::parse("r", fuzz::text(data, size));
    for (const rtl::Field& f : {d.head, d.tail, d.dst_x, d.dst_y, d.lookahead_port, d.payload})
      if (f.width > 0 && (f.pos < 0 || f.pos + f.width > d.flit_bits || f.width > 64)) std::abort();
  });
  return 0;
}
