#include "nmpsim/dram/dram_spec.h"

#include <algorithm>
#include <cmath>

namespace nmpsim::dram {

double DramSpec::streaming_bytes_per_s() const {
  const double peak = peak_gbytes_per_s * 1e9;
  const double activation_limit = static_cast<double>(banks) * row_bytes / (t_rc_ns * 1e-9);
  return std::min(peak, activation_limit) * (1.0 - refresh_overhead);
}

const char* dram_kind_name(DramKind k) { return k == DramKind::kHbm ? "hbm" : "hb-dram"; }

}  // namespace nmpsim::dram
