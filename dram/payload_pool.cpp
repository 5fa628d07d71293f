#include "nmpsim/dram/payload_pool.h"

namespace nmpsim::dram {

PayloadPool::~PayloadPool() {
  for (auto* p : all_) {
    p->set_mm(nullptr);  // so that deleting it does not call back into the pool
    delete p;
  }
}

unsigned char* PayloadPool::scratch(uint32_t bytes) {
  static std::vector<unsigned char> buf;
  if (buf.size() < bytes) buf.resize(bytes);
  return buf.data();
}

tlm::tlm_generic_payload* PayloadPool::acquire(tlm::tlm_command cmd, uint64_t address, uint32_t bytes) {
  tlm::tlm_generic_payload* p;
  if (free_.empty()) {
    p = new tlm::tlm_generic_payload(this);
    all_.push_back(p);
  } else {
    p = free_.back();
    free_.pop_back();
  }
  p->acquire();
  p->set_command(cmd);
  p->set_address(address);
  p->set_data_ptr(scratch(bytes));
  p->set_data_length(bytes);
  p->set_streaming_width(bytes);
  p->set_byte_enable_ptr(nullptr);
  p->set_dmi_allowed(false);
  p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  return p;
}

void PayloadPool::free(tlm::tlm_generic_payload* p) {
  p->reset();  // clears extensions; keeps the mm pointer
  free_.push_back(p);
}

}  // namespace nmpsim::dram
