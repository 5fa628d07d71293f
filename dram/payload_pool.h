// A TLM-2.0 memory manager: generic payloads are recycled through a free list, so the DMA does no
// new/delete per transaction. Timing-only model: payloads point at one shared scratch buffer
// large enough for the biggest transaction; the DRAM targets never read or write it.
#pragma once

#include <cstdint>
#include <tlm>
#include <vector>

namespace nmpsim::dram {

class PayloadPool : public tlm::tlm_mm_interface {
 public:
  PayloadPool() = default;
  PayloadPool(const PayloadPool&) = delete;
  PayloadPool& operator=(const PayloadPool&) = delete;
  ~PayloadPool() override;

  /// A payload with reference count 1, set up for a read or write of `bytes` at `address`.
  tlm::tlm_generic_payload* acquire(tlm::tlm_command cmd, uint64_t address, uint32_t bytes);
  /// Called by the payload when its reference count drops to zero.
  void free(tlm::tlm_generic_payload* p) override;

  size_t allocated() const { return all_.size(); }
  size_t available() const { return free_.size(); }

 private:
  static unsigned char* scratch(uint32_t bytes);
  std::vector<tlm::tlm_generic_payload*> all_;
  std::vector<tlm::tlm_generic_payload*> free_;
};

}  // namespace nmpsim::dram
