#include "dram/dram_spec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nmpsim::dram {

double DramSpec::streaming_bytes_per_s() const {
  const double peak = peak_gbytes_per_s * 1e9;
  const double activation_limit = static_cast<double>(banks) * row_bytes / (t_rc_ns * 1e-9);
  return std::min(peak, activation_limit) * (1.0 - refresh_overhead);
}

void DramSpec::validate(const std::string& where) const {
  auto fail = [&](const std::string& field, const std::string& why) {
    throw std::invalid_argument(where + "." + field + ": " + why);
  };
  auto positive = [&](double v, const char* field) {
    if (!(std::isfinite(v) && v > 0)) fail(field, "must be a positive number");
  };
  auto non_negative = [&](double v, const char* field) {
    if (!(std::isfinite(v) && v >= 0)) fail(field, "must be zero or positive");
  };
  if (kind != "hb-dram" && kind != "hbm") fail("kind", "must be \"hb-dram\" or \"hbm\", got \"" + kind + "\"");
  if (capacity_bytes == 0) fail("capacity_bytes", "must be positive");
  positive(peak_gbytes_per_s, "peak_gbytes_per_s");
  if (banks < 1 || banks > 4096) fail("banks", "must be in [1, 4096]");
  if (row_bytes < 64 || (row_bytes & (row_bytes - 1))) fail("row_bytes", "must be a power of two >= 64");
  non_negative(t_rcd_ns, "t_rcd_ns");
  non_negative(t_rp_ns, "t_rp_ns");
  non_negative(t_cl_ns, "t_cl_ns");
  positive(t_rc_ns, "t_rc_ns");
  if (!(refresh_overhead >= 0 && refresh_overhead < 1)) fail("refresh_overhead", "must be in [0, 1)");
  non_negative(array_pj_per_bit, "array_pj_per_bit");
  non_negative(interface_pj_per_bit, "interface_pj_per_bit");
  non_negative(activate_pj, "activate_pj");
  if (queue_depth < 1 || queue_depth > 1024) fail("queue_depth", "must be in [1, 1024]");
}

}  // namespace nmpsim::dram
