#include "nmpsim/dram/dram_target.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace nmpsim::dram {

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {

/// The model's own preconditions (a library user may fill a DramSpec by hand); a hardware
/// description's fields are checked against their documented ranges when it is read
/// (hw/hardware_fields.cpp).
const DramSpec& usable(const DramSpec& spec, const char* name) {
  const auto time_ok = [](double ns) { return std::isfinite(ns) && ns >= 0; };
  const bool ok = spec.banks >= 1 && spec.row_bytes > 0 && (spec.row_bytes & (spec.row_bytes - 1)) == 0 &&
                  spec.queue_depth >= 1 && time_ok(spec.t_rcd_ns) && time_ok(spec.t_rp_ns) && time_ok(spec.t_cl_ns) &&
                  spec.t_rc_ns > 0 && std::isfinite(spec.t_rc_ns) && spec.streaming_bytes_per_s() > 0 &&
                  std::isfinite(spec.streaming_bytes_per_s());
  if (!ok)
    throw std::invalid_argument(std::string(name) +
                                ": a DRAM needs banks >= 1, rows of a power of two bytes, queue_depth >= 1, "
                                "finite non-negative timings with t_rc_ns > 0 and a positive streaming bandwidth");
  return spec;
}

}  // namespace

DramTarget::DramTarget(sc_core::sc_module_name name, const DramSpec& spec)
    : sc_module(name),
      socket("socket"),
      spec_(usable(spec, name)),
      peq_(this, &DramTarget::peq_cb),
      ps_per_byte_(1e12 / spec.streaming_bytes_per_s()),
      t_rcd_(spec.t_rcd_ns, SC_NS),
      t_rp_(spec.t_rp_ns, SC_NS),
      t_cl_(spec.t_cl_ns, SC_NS),
      bank_request_(static_cast<size_t>(spec.banks), 0),
      requests_(1) {
  socket.register_nb_transport_fw(this, &DramTarget::nb_transport_fw);
  SC_METHOD(done_process);
  sensitive << done_event_;
  dont_initialize();
}

tlm::tlm_sync_enum DramTarget::nb_transport_fw(int id, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                               sc_time& delay) {
  // Both phases an initiator may send are handled at their annotated time through the PEQ.
  if (phase == tlm::BEGIN_REQ) initiator_[&p] = id;
  peq_.notify(p, phase, delay);
  delay = SC_ZERO_TIME;
  return tlm::TLM_ACCEPTED;
}

void DramTarget::peq_cb(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase) {
  if (phase == tlm::BEGIN_REQ) {
    p.acquire();  // held until the response phase ends
    if (in_service_ < spec_.queue_depth) {
      accept(p);
    } else {
      waiting_.push_back(&p);  // back-pressure: END_REQ withheld until a slot frees
      ++stats_.end_req_withheld;
    }
  } else if (phase == tlm::END_RESP) {
    resp_busy_ = false;
    initiator_.erase(&p);
    p.release();
    send_next_response();
  } else {
    SC_REPORT_ERROR(name(), "DRAM target received an unexpected phase");
  }
}

void DramTarget::accept(tlm::tlm_generic_payload& p) {
  ++in_service_;
  stats_.max_queue = std::max<uint64_t>(stats_.max_queue, static_cast<uint64_t>(in_service_));
  const sc_time end = service(p);
  completions_.emplace_back(end, &p);
  if (completions_.size() == 1) done_event_.notify(end - sc_core::sc_time_stamp());
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_time delay = SC_ZERO_TIME;
  backward(p, phase, delay);  // the initiator may return anything; END_REQ needs no answer
}

sc_time DramTarget::service(tlm::tlm_generic_payload& p) {
  const uint64_t addr = p.get_address();
  const uint64_t len = std::max<uint32_t>(1, p.get_data_length());
  const sc_time now = sc_core::sc_time_stamp();
  const uint64_t row_bytes = spec_.row_bytes;
  const uint64_t banks = static_cast<uint64_t>(spec_.banks);
  const uint64_t first_g = addr / row_bytes, last_g = (addr + len - 1) / row_bytes;
  const size_t bank = static_cast<size_t>(first_g % banks);
  const int64_t row = static_cast<int64_t>(first_g / banks);

  // First row: hit, miss (bank closed) or conflict (another row open). Later rows of a long
  // request are activated in other banks while earlier rows transfer (bank interleaving); their
  // rate limit is already in streaming_bytes_per_s().
  const BankUse first = bank_use(bank);
  sc_time ready = std::max(now, bank_free(first));
  if (first.row == row) {
    ++stats_.row_hits;
  } else {
    if (first.row < 0) {
      ++stats_.row_misses;
    } else {
      ++stats_.row_conflicts;
      ready += t_rp_;
    }
    ready += t_rcd_;
  }
  const uint64_t activations = (last_g - first_g) + (first.row == row ? 0 : 1);
  stats_.activations += activations;
  const sc_time transfer(static_cast<double>(len) * ps_per_byte_, sc_core::SC_PS);
  const sc_time start = std::max(ready + t_cl_, bus_free_);
  const sc_time end = start + transfer;
  bus_free_ = end;
  busy_ += transfer;
  // Open-page policy: every bank this request touched keeps its last row open, and is free again
  // once that row's part of the transfer is over (not at the end of the whole request).
  const uint64_t from = last_g - std::min<uint64_t>(last_g - first_g, banks - 1);
  // At most one request per bank is still referenced: renumbering keeps the table small (its cost,
  // O(banks + table), is spread over at least 3 * banks + 1024 requests).
  if (requests_.size() > 4 * bank_request_.size() + 1024) renumber_requests();
  const auto id = static_cast<uint32_t>(requests_.size());
  requests_.push_back(Request{from, addr, len, start});
  size_t b = static_cast<size_t>(from % banks);
  for (uint64_t g = from; g <= last_g; ++g) {
    bank_request_[b] = id;
    if (++b == banks) b = 0;
  }

  const double bits = 8.0 * static_cast<double>(len);
  stats_.array_pj += bits * spec_.array_pj_per_bit;
  stats_.interface_pj += bits * spec_.interface_pj_per_bit;
  stats_.activate_pj += static_cast<double>(activations) * spec_.activate_pj;
  if (p.is_write()) {
    ++stats_.writes;
    stats_.bytes_written += len;
  } else {
    ++stats_.reads;
    stats_.bytes_read += len;
  }
  if (addr + len > spec_.capacity_bytes) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  } else {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  return end;
}

DramTarget::BankUse DramTarget::bank_use(size_t bank) const {
  const uint32_t id = bank_request_[bank];
  if (id == 0) return BankUse{};
  const Request& q = requests_[id];
  const uint64_t banks = bank_request_.size();
  const uint64_t g = q.from + (bank + banks - q.from % banks) % banks;  // the request's row in `bank`
  return BankUse{static_cast<int64_t>(g / banks), q.start,
                 std::min((g + 1) * spec_.row_bytes, q.addr + q.len) - q.addr};
}

void DramTarget::renumber_requests() {
  std::vector<Request> kept(1);
  std::vector<uint32_t> new_id(requests_.size(), 0);
  for (uint32_t& id : bank_request_) {
    if (id == 0) continue;
    if (new_id[id] == 0) {
      new_id[id] = static_cast<uint32_t>(kept.size());
      kept.push_back(requests_[id]);
    }
    id = new_id[id];
  }
  requests_.swap(kept);
}

sc_time DramTarget::bank_free(const BankUse& u) const {
  return u.row_end ? u.start + sc_time(static_cast<double>(u.row_end) * ps_per_byte_, sc_core::SC_PS) : u.start;
}

void DramTarget::done_process() {
  const sc_time now = sc_core::sc_time_stamp();
  while (!completions_.empty() && completions_.front().first <= now) {
    responses_.push_back(completions_.front().second);
    completions_.pop_front();
    --in_service_;
  }
  if (!completions_.empty()) done_event_.notify(completions_.front().first - now);
  // A slot freed: the withheld request (if any) is accepted now.
  if (!waiting_.empty() && in_service_ < spec_.queue_depth) {
    tlm::tlm_generic_payload* p = waiting_.front();
    waiting_.pop_front();
    accept(*p);
  }
  send_next_response();
}

void DramTarget::send_next_response() {
  while (!resp_busy_ && !responses_.empty()) {
    tlm::tlm_generic_payload* p = responses_.front();
    responses_.pop_front();
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_time delay = SC_ZERO_TIME;
    const tlm::tlm_sync_enum r = backward(*p, phase, delay);
    if (r == tlm::TLM_COMPLETED || (r == tlm::TLM_UPDATED && phase == tlm::END_RESP)) {
      initiator_.erase(p);
      p->release();  // response phase over at once
    } else {
      resp_busy_ = true;  // END_RESP will arrive on the forward path
    }
  }
}

tlm::tlm_sync_enum DramTarget::backward(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_time& delay) {
  return socket[initiator_.at(&p)]->nb_transport_bw(p, phase, delay);
}

}  // namespace nmpsim::dram
