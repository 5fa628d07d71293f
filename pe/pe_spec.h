// Parameters of a processing element (plain C++: hardware descriptions are read without SystemC).
#pragma once

#include <cstdint>

namespace nmpsim::pe {

struct PeSpec {
  double peak_flops = 5e12;             ///< FLOP/s
  double startup_ns = 50.0;             ///< fixed start-up of a compute or reduce command
  uint32_t dma_chunk_bytes = 1 << 20;   ///< largest DRAM transaction the DMA issues
  uint32_t copy_chunk_bytes = 1 << 18;  ///< weight copies move through the NoC in chunks of this size
  /// A broadcast reads its next chunk from DRAM only while fewer than this many of its chunks are on
  /// the way to the first node of its chain (the injection buffer it may fill; 0 = no limit).
  uint32_t broadcast_window_chunks = 2;
  uint32_t element_bytes = 2;  ///< bytes per element for Reduce (FP16)
  /// Query rows per attention tile: a prompt's attention streams the KV cache once per tile of this
  /// many queries (FlashAttention-2 order; mapping::Segment::kv_read_tokens).
  uint32_t attention_tile_tokens = 128;
  /// A node's expert pieces of one layer run as one grouped kernel (one command, one start-up)
  /// instead of one command per piece.
  bool grouped_experts = true;
  double pj_per_flop = 0.5;
  double static_w = 0.5;  ///< leakage and idle power of the compute die or PE, W (charged for the whole run)
};

}  // namespace nmpsim::pe
