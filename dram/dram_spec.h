// Parameters of a DRAM device: a hybrid-bonded bank under an NMP processing element, or an
// HBM-like stack beside a compute die. Units are in every name. docs/MODEL.md "DRAM" gives sources.
#pragma once

#include <cstdint>
#include <string>

namespace nmpsim::dram {

/// A label of the device (the timing fields make the difference): a hybrid-bonded bank or an HBM stack.
enum class DramKind { kHybridBonded, kHbm };
/// "hb-dram", "hbm".
const char* dram_kind_name(DramKind k);

struct DramSpec {
  DramKind kind = DramKind::kHybridBonded;
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
};

}  // namespace nmpsim::dram
