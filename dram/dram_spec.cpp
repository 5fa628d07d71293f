#include "nmpsim/dram/dram_spec.h"

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
  namespace r = dram_ranges;
  auto fail = [&](const std::string& field, const std::string& why) {
    throw std::invalid_argument(where + "." + field + ": " + why);
  };
  auto in = [&](double v, const base::NumberRange& range, const char* field) {
    if (!range.contains(v)) fail(field, range.violation(v));
  };
  if (kind != "hb-dram" && kind != "hbm") fail("kind", "must be \"hb-dram\" or \"hbm\", got \"" + kind + "\"");
  in(static_cast<double>(capacity_bytes), r::kCapacity, "capacity_bytes");
  in(peak_gbytes_per_s, r::kPeakGbps, "peak_gbytes_per_s");
  if (banks < 1 || banks > 4096) fail("banks", "must be in [1, 4096]");
  if (row_bytes < 64 || row_bytes > (1u << 20) || (row_bytes & (row_bytes - 1)))
    fail("row_bytes", "must be a power of two in [64, 1048576]");
  in(t_rcd_ns, r::kTimingNs, "t_rcd_ns");
  in(t_rp_ns, r::kTimingNs, "t_rp_ns");
  in(t_cl_ns, r::kTimingNs, "t_cl_ns");
  in(t_rc_ns, r::kRowCycleNs, "t_rc_ns");
  in(refresh_overhead, r::kRefresh, "refresh_overhead");
  in(array_pj_per_bit, r::kPjPerBit, "array_pj_per_bit");
  in(interface_pj_per_bit, r::kPjPerBit, "interface_pj_per_bit");
  in(activate_pj, r::kActivatePj, "activate_pj");
  if (queue_depth < 1 || queue_depth > 1024) fail("queue_depth", "must be in [1, 1024]");
}

}  // namespace nmpsim::dram
