#include "nmpsim/hw/network_port.h"

#include <algorithm>
#include <cstring>

#include "nmpsim/pe/processing_element.h"

namespace nmpsim::hw {

namespace {
constexpr uint64_t kPage = 4096;
uint64_t page_key(int node, uint64_t page) { return (uint64_t(node) << 28) | page; }
}  // namespace

void PortDirectory::write(int node, uint64_t offset, const unsigned char* src, size_t len) {
  for (size_t done = 0; done < len;) {
    const uint64_t at = offset + done, in_page = at % kPage;
    const size_t n = std::min<size_t>(len - done, kPage - in_page);
    std::vector<unsigned char>& page = pages[page_key(node, at / kPage)];
    page.resize(kPage, 0);
    std::memcpy(page.data() + in_page, src + done, n);
    done += n;
  }
}

void PortDirectory::read(int node, uint64_t offset, unsigned char* dst, size_t len) const {
  for (size_t done = 0; done < len;) {
    const uint64_t at = offset + done, in_page = at % kPage;
    const size_t n = std::min<size_t>(len - done, kPage - in_page);
    const auto it = pages.find(page_key(node, at / kPage));
    if (it == pages.end())
      std::memset(dst + done, 0, n);
    else
      std::memcpy(dst + done, it->second.data() + in_page, n);
    done += n;
  }
}

bool is_port_message(uint64_t tag) {
  const pe::MessageKind k = pe::tag_kind(tag);
  return k == pe::MessageKind::kPortRequest || k == pe::MessageKind::kPortResponse;
}

NetworkPort::NetworkPort(sc_core::sc_module_name name, int node, int nodes, uint64_t capacity_bytes,
                         uint32_t dma_chunk_bytes, noc::MeshModule& mesh, PortDirectory& directory)
    : sc_module(name),
      target("target"),
      dma("dma", dma_chunk_bytes),
      device("device"),
      node_(node),
      nodes_(nodes),
      capacity_(capacity_bytes),
      mesh_(mesh),
      dir_(directory) {
  target.register_b_transport(this, &NetworkPort::b_transport);
  SC_THREAD(server_thread);
}

void NetworkPort::b_transport(int /*initiator*/, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  ++stats_.transactions;
  sc_core::wait(delay);  // run at the initiator's local time
  delay = sc_core::SC_ZERO_TIME;
  const uint64_t addr = p.get_address(), len = p.get_data_length();
  const uint64_t node = addr >> kNodeShift, offset = addr & ((uint64_t{1} << kNodeShift) - 1);
  if (p.get_byte_enable_ptr()) {
    p.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  if (p.get_streaming_width() < len) {
    p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  if (node >= static_cast<uint64_t>(nodes_) || offset + len > capacity_ || offset + len < offset) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (p.get_command() == tlm::TLM_IGNORE_COMMAND || len == 0) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  const bool write = p.get_command() == tlm::TLM_WRITE_COMMAND;
  const uint64_t id = dir_.next_id++;
  sc_core::sc_event answered;
  PortDirectory::Request& r = dir_.requests[id];
  r.src = node_;
  r.dst = static_cast<int>(node);
  r.cmd = p.get_command();
  r.offset = offset;
  r.len = len;
  r.answered = &answered;
  if (write) r.data.assign(p.get_data_ptr(), p.get_data_ptr() + len);
  if (r.dst == node_) {
    inbox_.push_back(id);  // the local bank: no NoC message
    inbox_event_.notify(sc_core::SC_ZERO_TIME);
  } else {
    mesh_.send(node_, r.dst, kPortHeaderBytes + (write ? len : 0), pe::make_tag(pe::MessageKind::kPortRequest, id));
  }
  while (!dir_.requests.at(id).done) sc_core::wait(answered);
  PortDirectory::Request& done = dir_.requests.at(id);
  const tlm::tlm_response_status status = done.status;
  if (!write && status == tlm::TLM_OK_RESPONSE) std::memcpy(p.get_data_ptr(), done.data.data(), len);
  (write ? stats_.bytes_written : stats_.bytes_read) += len;
  dir_.requests.erase(id);
  p.set_dmi_allowed(false);
  p.set_response_status(status);
}

void NetworkPort::on_delivery(const noc::Delivery& d) {
  const uint64_t id = pe::tag_low(d.tag);
  if (pe::tag_kind(d.tag) == pe::MessageKind::kPortRequest) {
    inbox_.push_back(id);
    inbox_event_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  PortDirectory::Request& r = dir_.requests.at(id);  // a response back at the requester
  r.done = true;
  r.answered->notify(sc_core::SC_ZERO_TIME);
}

void NetworkPort::server_thread() {
  for (;;) {
    while (inbox_.empty()) sc_core::wait(inbox_event_);
    const uint64_t id = inbox_.front();
    inbox_.pop_front();
    PortDirectory::Request& r = dir_.requests.at(id);
    if (device.get_base_port().size() > 0) {
      // A user's target at this node: one blocking transaction at a time, its data and status.
      if (r.cmd == tlm::TLM_READ_COMMAND) r.data.assign(r.len, 0);
      tlm::tlm_generic_payload p;
      p.set_command(r.cmd);
      p.set_address(r.offset);
      p.set_data_ptr(r.data.data());
      p.set_data_length(static_cast<unsigned>(r.len));
      p.set_streaming_width(static_cast<unsigned>(r.len));
      p.set_byte_enable_ptr(nullptr);
      p.set_dmi_allowed(false);
      p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      device->b_transport(p, delay);
      sc_core::wait(delay);
      r.status = p.get_response_status();
      respond(id);
      continue;
    }
    // The bank access with its DRAM timing (the DMA pipelines successive requests); the data itself
    // lives in the directory.
    dma.start(r.cmd, r.offset, r.len, [this, id] { answer(id); });
  }
}

void NetworkPort::answer(uint64_t id) {
  PortDirectory::Request& r = dir_.requests.at(id);
  ++stats_.served;
  if (r.cmd == tlm::TLM_WRITE_COMMAND) {
    dir_.write(node_, r.offset, r.data.data(), r.len);
    r.data.clear();
  } else {
    r.data.resize(r.len);
    dir_.read(node_, r.offset, r.data.data(), r.len);
  }
  respond(id);
}

void NetworkPort::respond(uint64_t id) {
  PortDirectory::Request& r = dir_.requests.at(id);
  if (r.cmd == tlm::TLM_WRITE_COMMAND) r.data.clear();  // a write's answer carries no data
  if (r.src == node_) {
    r.done = true;
    r.answered->notify(sc_core::SC_ZERO_TIME);
    return;
  }
  mesh_.send(node_, r.src, kPortHeaderBytes + r.data.size(), pe::make_tag(pe::MessageKind::kPortResponse, id));
}

}  // namespace nmpsim::hw
