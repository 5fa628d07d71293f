// DMA engine: a TLM-2.0 AT initiator that streams a transfer to/from its DRAM in chunks.
// Obeys the base protocol: one BEGIN_REQ outstanding until END_REQ (so the target's
// back-pressure stalls it), answers BEGIN_RESP with TLM_COMPLETED. Payloads come from a pool.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <systemc>
#include <tlm>
#include <unordered_map>

#include "nmpsim/dram/payload_pool.h"

namespace nmpsim::pe {

class Dma : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Dma);
  Dma(sc_core::sc_module_name name, uint32_t chunk_bytes);

  tlm_utils::simple_initiator_socket<Dma> socket;

  /// Queues a transfer of `bytes` at `address`; returns its job id. Jobs are served in order.
  /// `on_done` (optional) runs when the last response arrives.
  uint64_t start(tlm::tlm_command cmd, uint64_t address, uint64_t bytes, std::function<void()> on_done = {});
  /// Addresses wrap modulo `bytes` (0: no wrap): a job longer than the memory, such as an optimizer
  /// pass reading and writing several arrays, touches addresses inside it (docs/MODEL.md "Training step").
  void set_address_space(uint64_t bytes) { address_space_ = bytes; }
  bool finished(uint64_t job) const;
  /// Blocks the calling SC_THREAD until the job is finished.
  void wait_done(uint64_t job);

  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }
  const dram::PayloadPool& pool() const { return pool_; }

 private:
  struct Job {
    tlm::tlm_command cmd;
    uint64_t address, bytes, issued = 0, completed = 0;
    bool finished = false;
    std::function<void()> on_done;
  };
  void issue_thread();
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void complete(tlm::tlm_generic_payload& p);
  Job& job(uint64_t id) { return jobs_[id - base_]; }

  uint32_t chunk_bytes_;
  uint64_t address_space_ = 0;
  dram::PayloadPool pool_;
  std::deque<Job> jobs_;  // ids base_ .. base_ + size - 1
  uint64_t base_ = 0;
  uint64_t next_issue_ = 0;
  std::unordered_map<tlm::tlm_generic_payload*, uint64_t> in_flight_;
  sc_core::sc_event new_job_, end_req_, job_done_;
  bool waiting_end_req_ = false;
  uint64_t bytes_read_ = 0, bytes_written_ = 0;
};

}  // namespace nmpsim::pe
