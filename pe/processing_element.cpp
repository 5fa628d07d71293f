#include "nmpsim/pe/processing_element.h"

#include <algorithm>

namespace nmpsim::pe {

using sc_core::sc_time;

ProcessingElement::ProcessingElement(sc_core::sc_module_name name, int node, const PeSpec& spec, noc::MeshModule& mesh,
                                     uint64_t dram_capacity_bytes)
    : sc_module(name),
      dma("dma", spec.dma_chunk_bytes),
      node_(node),
      spec_(spec),
      mesh_(mesh),
      dram_capacity_(dram_capacity_bytes),
      busy_("busy") {
  dma.set_address_space(dram_capacity_bytes);
  SC_THREAD(run);
  SC_THREAD(run_background);
  SC_THREAD(run_reducer);
}

void ProcessingElement::submit_reducer(Command c) {
  red_queue_.push_back(std::move(c));
  red_command_.notify(sc_core::SC_ZERO_TIME);
}

void ProcessingElement::run_reducer() { serve(red_queue_, red_running_, red_command_, &ProcessingElement::reduce); }

void ProcessingElement::reduce(const Command& c) {
  if (c.flops > 0) wait(sc_time(c.flops / spec_.peak_flops, sc_core::SC_SEC));
  flops_ += c.flops;
}

void ProcessingElement::serve(std::deque<Command>& queue, bool& running, sc_core::sc_event& more,
                              void (ProcessingElement::*body)(const Command&)) {
  while (true) {
    while (queue.empty()) {
      running = false;
      idle_event_.notify(sc_core::SC_ZERO_TIME);
      wait(more);
    }
    running = true;
    const Command c = std::move(queue.front());
    queue.pop_front();
    const sc_time start = sc_core::sc_time_stamp();
    if (c.on_start) c.on_start();
    (this->*body)(c);
    if (logging_) log_.push_back(CommandRecord{c.kind, c.label, start, sc_core::sc_time_stamp()});
    if (c.on_done) c.on_done();
  }
}

void ProcessingElement::submit_background(Command c) {
  bg_queue_.push_back(std::move(c));
  bg_command_.notify(sc_core::SC_ZERO_TIME);
}

void ProcessingElement::run_background() { serve(bg_queue_, bg_running_, bg_command_, &ProcessingElement::execute); }

void ProcessingElement::do_broadcast(const Command& c) {
  if (c.chain.empty() || c.bytes == 0 || !registry_) return;
  const uint64_t chunk = c.chunk_bytes ? c.chunk_bytes : spec_.copy_chunk_bytes;
  const uint32_t window = spec_.broadcast_window_chunks;
  int chunks = 0;
  for (uint64_t off = 0; off < c.bytes; off += chunk) {
    while (window > 0 && bcast_unsent_[c.tag] >= window) wait(bcast_sent_event_);
    if (registry_->entries.at(c.tag).cancelled) break;
    const uint64_t len = std::min(chunk, c.bytes - off);
    dma.wait_done(dma.start(tlm::TLM_READ_COMMAND, c.dram_address + off, len));
    mesh_.send(node_, c.chain.front(), len, make_tag(MessageKind::kBcastChunk, c.tag));
    ++bcast_unsent_[c.tag];
    ++chunks;
  }
  while (acks_[c.tag] < chunks) wait(ack_event_);
  acks_.erase(c.tag);
  bcast_unsent_.erase(c.tag);
  registry_->entries.at(c.tag).done = true;
}

void ProcessingElement::submit(Command c) {
  queue_.push_back(std::move(c));
  new_command_.notify(sc_core::SC_ZERO_TIME);
}

uint64_t ProcessingElement::reserve_staging(uint64_t bytes) {
  const uint64_t addr = staging_address_;
  staging_address_ = (staging_address_ + bytes) % std::max<uint64_t>(dram_capacity_ - bytes + 1, 1);
  return addr;
}

void ProcessingElement::on_delivery(const noc::Delivery& d) {
  const MessageKind kind = tag_kind(d.tag);
  if (d.src == node_ && kind == MessageKind::kData) {
    if (kind == MessageKind::kData && sends_outstanding_ > 0 && --sends_outstanding_ == 0) sent_event_.notify();
  }
  if (d.src == node_ && kind == MessageKind::kBcastChunk) {
    // One of this PE's own chunks reached the first node of its chain: room for the next one.
    const auto it = bcast_unsent_.find(tag_low(d.tag));
    if (it != bcast_unsent_.end() && it->second > 0) {
      --it->second;
      bcast_sent_event_.notify();
    }
  }
  if (d.dst != node_) return;
  switch (kind) {
    case MessageKind::kData:
      ++inbox_[d.tag];
      inbox_event_.notify();
      break;
    case MessageKind::kCopyChunk: {
      // Write the chunk into the local DRAM, then acknowledge to the sender.
      const uint64_t addr = reserve_staging(d.bytes);
      const int src = d.src;
      const uint64_t copy_id = tag_low(d.tag);
      dma.start(tlm::TLM_WRITE_COMMAND, addr, d.bytes,
                [this, src, copy_id] { mesh_.send(node_, src, 0, make_tag(MessageKind::kCopyAck, copy_id)); });
      break;
    }
    case MessageKind::kCopyAck:
    case MessageKind::kBcastAck:
      ++acks_[tag_low(d.tag)];
      ack_event_.notify();
      break;
    case MessageKind::kTracked:
    case MessageKind::kPortRequest:
    case MessageKind::kPortResponse:
      break;
    case MessageKind::kBcastChunk: {
      // Forward at once (chunk-level cut-through), store locally; the last node acknowledges.
      const uint64_t id = tag_low(d.tag);
      const BroadcastRegistry::Entry& e = registry_->entries.at(id);
      const auto it = std::find(e.chain.begin(), e.chain.end(), node_);
      const bool last = it + 1 == e.chain.end();
      if (!last) mesh_.send(node_, *(it + 1), d.bytes, d.tag);
      const uint64_t addr = reserve_staging(d.bytes);
      const int source = e.source;
      dma.start(tlm::TLM_WRITE_COMMAND, addr, d.bytes, [this, last, source, id] {
        if (last) mesh_.send(node_, source, 0, make_tag(MessageKind::kBcastAck, id));
      });
      break;
    }
  }
}

void ProcessingElement::run() { serve(queue_, running_, new_command_, &ProcessingElement::execute); }

void ProcessingElement::do_compute(double flops, uint64_t bytes, uint64_t address, bool startup) {
  busy_.write(true);
  const sc_time t0 = sc_core::sc_time_stamp();
  if (startup) wait(sc_time(spec_.startup_ns, sc_core::SC_NS));
  const uint64_t job = dma.start(tlm::TLM_READ_COMMAND, address, bytes);
  if (flops > 0) wait(sc_time(flops / spec_.peak_flops, sc_core::SC_SEC));
  dma.wait_done(job);
  flops_ += flops;
  compute_busy_ += sc_core::sc_time_stamp() - t0;
  busy_.write(false);
}

void ProcessingElement::do_copy(const Command& c) {
  if (c.peer == node_ || c.bytes == 0) return;
  const uint64_t id = (static_cast<uint64_t>(node_) << 32) | copy_seq_++;
  const uint64_t chunk = spec_.copy_chunk_bytes;
  int chunks = 0;
  for (uint64_t off = 0; off < c.bytes; off += chunk) {
    const uint64_t len = std::min(chunk, c.bytes - off);
    const uint64_t job = dma.start(tlm::TLM_READ_COMMAND, c.dram_address + off, len);
    dma.wait_done(job);
    mesh_.send(node_, c.peer, len, make_tag(MessageKind::kCopyChunk, id));
    ++chunks;
  }
  while (acks_[id] < chunks) wait(ack_event_);
  acks_.erase(id);
}

void ProcessingElement::execute(const Command& c) {
  switch (c.kind) {
    case CommandKind::kCompute:
      do_compute(c.flops, c.dram_bytes, c.dram_address, c.startup);
      break;
    case CommandKind::kReduce: {
      const double elements = static_cast<double>(c.dram_bytes) / spec_.element_bytes;
      do_compute(elements, 0, 0);
      break;
    }
    case CommandKind::kSend:
      if (c.peer == node_) {  // local: no NoC, immediately in the inbox
        ++inbox_[c.tag];
        inbox_event_.notify();
      } else {
        ++sends_outstanding_;
        mesh_.send(node_, c.peer, c.bytes, make_tag(MessageKind::kData, c.tag));
      }
      break;
    case CommandKind::kRecv:
      while (inbox_[c.tag] < c.count) wait(inbox_event_);
      inbox_[c.tag] -= c.count;
      if (inbox_[c.tag] == 0) inbox_.erase(c.tag);
      break;
    case CommandKind::kWaitSends:
      while (sends_outstanding_ > 0) wait(sent_event_);
      break;
    case CommandKind::kCopyWeights:
      do_copy(c);
      break;
    case CommandKind::kDelay:
      wait(c.delay);
      break;
    case CommandKind::kBroadcast:
      do_broadcast(c);
      break;
  }
}

}  // namespace nmpsim::pe
