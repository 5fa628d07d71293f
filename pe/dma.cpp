#include "nmpsim/pe/dma.h"

#include <algorithm>

namespace nmpsim::pe {

using sc_core::sc_time;

Dma::Dma(sc_core::sc_module_name name, uint32_t chunk_bytes)
    : sc_module(name), socket("socket"), chunk_bytes_(std::max<uint32_t>(1, chunk_bytes)) {
  socket.register_nb_transport_bw(this, &Dma::nb_transport_bw);
  SC_THREAD(issue_thread);
}

uint64_t Dma::start(tlm::tlm_command cmd, uint64_t address, uint64_t bytes, std::function<void()> on_done) {
  const uint64_t id = base_ + jobs_.size();
  jobs_.push_back(Job{cmd, address, bytes, 0, 0, bytes == 0, std::move(on_done)});
  if (bytes == 0) {
    if (jobs_.back().on_done) jobs_.back().on_done();
    job_done_.notify(sc_core::SC_ZERO_TIME);
  }
  new_job_.notify(sc_core::SC_ZERO_TIME);
  return id;
}

bool Dma::finished(uint64_t id) const { return id < base_ || jobs_[id - base_].finished; }

void Dma::wait_done(uint64_t id) {
  while (!finished(id)) wait(job_done_);
}

void Dma::issue_thread() {
  while (true) {
    while (next_issue_ >= base_ + jobs_.size()) wait(new_job_);
    Job* j = &job(next_issue_);
    while (j->issued < j->bytes) {
      uint64_t address = j->address + j->issued, most = std::min<uint64_t>(chunk_bytes_, j->bytes - j->issued);
      if (address_space_ > 0) {
        address %= address_space_;
        most = std::min(most, address_space_ - address);
      }
      const auto len = static_cast<uint32_t>(most);
      tlm::tlm_generic_payload* p = pool_.acquire(j->cmd, address, len);
      in_flight_[p] = next_issue_;
      j->issued += len;
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      waiting_end_req_ = true;
      const tlm::tlm_sync_enum r = socket->nb_transport_fw(*p, phase, delay);
      if (r == tlm::TLM_COMPLETED) {
        waiting_end_req_ = false;
        complete(*p);
      } else if (r == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
        waiting_end_req_ = false;
      } else if (r == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP) {
        waiting_end_req_ = false;
        complete(*p);
      }
      if (waiting_end_req_) wait(end_req_);  // request exclusion: next BEGIN_REQ only after END_REQ
      j = &job(next_issue_);                 // jobs_ may have grown (deque keeps references, but be safe)
    }
    ++next_issue_;
  }
}

tlm::tlm_sync_enum Dma::nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_time& delay) {
  if (phase == tlm::END_REQ) {
    waiting_end_req_ = false;
    end_req_.notify(delay);
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::BEGIN_RESP) {
    if (waiting_end_req_) {  // BEGIN_RESP implies END_REQ
      waiting_end_req_ = false;
      end_req_.notify(delay);
    }
    complete(p);
    return tlm::TLM_COMPLETED;
  }
  SC_REPORT_ERROR(name(), "DMA received an unexpected phase");
  return tlm::TLM_COMPLETED;
}

void Dma::complete(tlm::tlm_generic_payload& p) {
  if (p.is_response_error())
    SC_REPORT_ERROR(
        name(),
        ("DRAM access failed: " + p.get_response_string() + " at address " + std::to_string(p.get_address())).c_str());
  auto it = in_flight_.find(&p);
  const uint64_t id = it->second;
  in_flight_.erase(it);
  Job& j = job(id);
  j.completed += p.get_data_length();
  (p.is_write() ? bytes_written_ : bytes_read_) += p.get_data_length();
  p.release();
  if (j.completed == j.bytes && !j.finished) {
    j.finished = true;
    if (j.on_done) j.on_done();
    job_done_.notify(sc_core::SC_ZERO_TIME);
    // Retire finished jobs at the front once they are fully issued.
    while (!jobs_.empty() && jobs_.front().finished && base_ < next_issue_) {
      jobs_.pop_front();
      ++base_;
    }
  }
}

}  // namespace nmpsim::pe
