// Parameters of a DRAM device: a hybrid-bonded bank under an NMP processing element, or an
// HBM-like stack beside a compute die. Units are in every name. docs/MODEL.md "DRAM" gives sources.
#pragma once

#include <cstdint>
#include <string>

#include "nmpsim/base/json_fields.h"

namespace nmpsim::dram {

/// Accepted ranges of the DRAM fields (docs/FORMATS.md): physical bounds wide enough for any device.
namespace dram_ranges {
inline constexpr base::NumberRange kCapacity{1 << 20, double(1ULL << 50), "bytes"};
inline constexpr base::NumberRange kPeakGbps{1e-3, 1e6, "GB/s"};
inline constexpr base::NumberRange kTimingNs{0, 1e4, "ns"};
inline constexpr base::NumberRange kRowCycleNs{1e-3, 1e4, "ns"};
inline constexpr base::NumberRange kRefresh{0, 0.9, ""};
inline constexpr base::NumberRange kPjPerBit{0, 1e3, "pJ/bit"};
inline constexpr base::NumberRange kActivatePj{0, 1e7, "pJ"};
}  // namespace dram_ranges

struct DramSpec {
  std::string kind = "hb-dram";  ///< "hb-dram" (hybrid-bonded bank) or "hbm" (stack)
  uint64_t capacity_bytes = 8ULL << 30;
  double peak_gbytes_per_s = 625.0;    ///< peak data bandwidth of the device (1 GB = 1e9 bytes)
  int banks = 32;                      ///< independent row buffers (banks across all channels)
  uint32_t row_bytes = 2048;           ///< row (page) size per bank
  double t_rcd_ns = 14.0;              ///< activate -> column command
  double t_rp_ns = 14.0;               ///< precharge
  double t_cl_ns = 14.0;               ///< column command -> first data
  double t_rc_ns = 45.0;               ///< activate -> activate, same bank (row cycle)
  double refresh_overhead = 0.05;      ///< fraction of time the device refreshes (tRFC / tREFI)
  double array_pj_per_bit = 1.0;       ///< DRAM array access energy
  double interface_pj_per_bit = 0.88;  ///< logic-to-DRAM interface energy (hybrid bond: 0.88)
  double activate_pj = 900.0;          ///< energy of one row activation + precharge
  double background_w = 0.3;           ///< background and refresh power of the node's memory, W
  int queue_depth = 8;                 ///< requests accepted before END_REQ is withheld

  /// Sustained bandwidth of a long sequential stream (bytes/s): the peak, derated by refresh and,
  /// when the banks cannot activate rows fast enough, by the activation rate banks*row/tRC.
  double streaming_bytes_per_s() const;
  /// Throws std::invalid_argument with a one-line message naming the field (prefixed by `where`).
  void validate(const std::string& where) const;
};

}  // namespace nmpsim::dram
