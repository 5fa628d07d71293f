#include "nmpsim/noc/network.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "nmpsim/base/ni_ports.h"
#include "nmpsim/base/slot_table.h"
#include "nmpsim/noc/flit_word.h"

namespace nmpsim::noc {

Network::Network(const NocConfig& cfg) : cfg_(cfg), geo_{cfg.width, cfg.height} {
  cfg_.validate();
  const int n = nodes();
  routers_.reserve(static_cast<size_t>(n));
  uint64_t max_delay = 2;
  for (int node = 0; node < n; ++node) {
    routers_.emplace_back(node, geo_, cfg_.vcs, cfg_.buffer_flits, cfg_.router_delay_cycles, cfg_.ni_ports);
    for (int dir = 0; dir < kNumMeshDirs; ++dir) {
      if (geo_.neighbour(node, dir) < 0) continue;
      const OutputLinkTiming t = OutputLinkTiming::from(cfg_.link(node, dir));
      routers_.back().set_output_link(dir, t);
      max_delay = std::max<uint64_t>(max_delay, t.latency_cycles + t.serialise_cycles + 1);
    }
  }
  nb_.assign(static_cast<size_t>(n) * kNumMeshDirs, -1);
  flit_cycles_.assign(nb_.size(), 0);
  credit_cycles_.assign(nb_.size(), 0);
  for (int node = 0; node < n; ++node)
    for (int dir = 0; dir < kNumMeshDirs; ++dir) {
      const int next = geo_.neighbour(node, dir);
      if (next < 0) continue;
      const size_t k = static_cast<size_t>(node) * kNumMeshDirs + static_cast<size_t>(dir);
      const OutputLinkTiming& t = routers_[static_cast<size_t>(node)].output_link(dir);
      nb_[k] = next;
      flit_cycles_[k] = t.latency_cycles + t.serialise_cycles;
      credit_cycles_[k] = routers_[static_cast<size_t>(next)].output_link(opposite_port(dir)).latency_cycles;
    }
  nis_.resize(static_cast<size_t>(n));
  for (int p = 0; p < cfg_.ni_ports; ++p)
    port_queues_[p] = (cfg_.ni_queue_count() - p + cfg_.ni_ports - 1) / cfg_.ni_ports;
  for (auto& ni : nis_) {
    ni.queues.resize(static_cast<size_t>(cfg_.ni_queue_count()));
    for (int v = 0; v < cfg_.vcs * cfg_.ni_ports; ++v) ni.credits[v] = static_cast<int16_t>(cfg_.buffer_flits);
  }
  size_t w = 1;
  while (w <= max_delay) w <<= 1;
  flit_wheel_.resize(w);
  credit_wheel_.resize(w);
  wheel_mask_ = w - 1;
  router_active_.assign(static_cast<size_t>(n), 0);
}

uint64_t Network::send(int src, int dst, uint64_t bytes, uint64_t cycle, uint64_t tag) {
  const uint64_t fb = cfg_.flit_bytes;
  const uint64_t flits = std::max<uint64_t>(1, (bytes + fb - 1) / fb);
  if (flits > std::numeric_limits<uint32_t>::max())
    throw std::out_of_range("noc: message of " + std::to_string(bytes) + " bytes is too large");
  return enqueue(src, dst, bytes, static_cast<uint32_t>(flits), static_cast<uint32_t>(cfg_.max_packet_flits), cycle,
                 tag);
}

uint64_t Network::send_flits(int src, int dst, uint32_t flits, uint64_t cycle, uint64_t tag) {
  if (flits < 1 || flits > 65535) throw std::out_of_range("noc: packet size must be 1..65535 flits");
  return enqueue(src, dst, uint64_t{flits} * cfg_.flit_bytes, flits, flits, cycle, tag);
}

uint64_t Network::enqueue(int src, int dst, uint64_t bytes, uint32_t flits, uint32_t packet_flits, uint64_t cycle,
                          uint64_t tag) {
  const int n = nodes();
  if (src < 0 || src >= n || dst < 0 || dst >= n)
    throw std::out_of_range("noc: message endpoints " + std::to_string(src) + "->" + std::to_string(dst) +
                            " outside the " + std::to_string(n) + "-node mesh");
  if (started_ && cycle <= cycle_) cycle = cycle_ + 1;  // the current cycle is already simulated
  const uint64_t id = next_message_id_++;
  if (replay_on_ && !resim_) {
    if (quiescent()) start_session(cycle);
    const SessionSend key = session_send(src, dst, bytes, flits, packet_flits, cycle);
    if (in_session_ && sess_sends_ == 0 && rsends_.empty() && !rec_ && !replaying_) pick_recording(key);
    if (replaying_ && replay_send(ReplaySend{key, id, tag, cycle})) return id;
    // Recorded with the key of when it was called (a failed replay may have re-simulated since).
    admit(id, src, dst, bytes, flits, packet_flits, cycle, tag, in_session_ ? &key : nullptr);
    return id;
  }
  admit(id, src, dst, bytes, flits, packet_flits, cycle, tag, nullptr);
  return id;
}

void Network::admit(uint64_t id, int src, int dst, uint64_t bytes, uint32_t flits, uint32_t packet_flits,
                    uint64_t cycle, uint64_t tag, const SessionSend* key) {
  if (idle()) last_progress_ = cycle;  // watchdog counts from when work appears
  const uint32_t ms = base::take_slot(messages_, free_messages_);
  MessageRec& m = messages_[ms];
  m.id = id;
  if (in_session_) {
    m.sess_index = sess_sends_++;
    if (rec_) rec_->sends.push_back(*key);
  }
  m.src = src;
  m.dst = dst;
  m.bytes = bytes;
  m.tag = tag;
  m.create_cycle = cycle;
  m.measured = measuring_ && cycle >= window_start_ && cycle < window_end_;
  if (src == dst) {
    m.packets_left = 0;
    local_pending_.push_back(ms);
    return;
  }
  const uint32_t packets = (flits + packet_flits - 1) / packet_flits;
  m.packets_left = packets;
  Ni& ni = nis_[src];
  // The whole message goes to the port with the fewest flits still to send, then to its queue with the
  // fewest (lowest index on ties; with one port: the queue with the fewest).
  NiQueue* q = &ni.queues[base::pick_ni_queue(ni.queues.size(), static_cast<size_t>(cfg_.ni_ports),
                                              [&ni](size_t k) { return ni.queues[k].flits; })];
  if (q->packets.empty()) ++ni.busy_queues;
  q->flits += flits;
  for (uint32_t p = 0; p < packets; ++p) {
    const uint32_t ps = base::take_slot(packets_, free_packets_);
    PacketRec& pr = packets_[ps];
    pr.message = ms;
    pr.dst = static_cast<uint32_t>(dst);
    pr.flits = static_cast<uint16_t>(std::min(packet_flits, flits - p * packet_flits));
    pr.received = 0;
    pr.create_cycle = cycle;
    pr.measured = m.measured;
    if (pr.measured) {
      offered_flits_ += pr.flits;
      ++measured_packets_;
    }
    q->packets.push(ps);
    ++live_packets_;
  }
  if (!ni.active) {
    ni.active = true;
    active_nis_.push_back(src);
  }
}

void Network::activate_router(int node) {
  if (!router_active_[node] && !external_router(node)) {
    router_active_[node] = 1;
    active_routers_.push_back(node);
  }
}

void Network::violation(const std::string& what) {
  if (violations_++ == 0) first_violation_ = "cycle " + std::to_string(cycle_) + ": " + what;
}

void Network::handle_flit(const FlitEvent& ev) {
  if (ev.to_ni) {
    eject(static_cast<int>(ev.node), ev.flit);
    return;
  }
  if (external_router(static_cast<int>(ev.node))) {
    ExternalRouter& x = ext_[ev.node];
    if (x.in.has_flit[ev.port])
      violation("two flits arrive on one port in one cycle at router " + geo_.coord(static_cast<int>(ev.node)));
    if (ev.flit.packet > kFlitWordMaxPacket)
      violation("packet id " + std::to_string(ev.flit.packet) + " does not fit the 26-bit pin flit format");
    x.in.flit[ev.port] = ev.flit;
    x.in.has_flit[ev.port] = true;
    pin_checks_.received(static_cast<int>(ev.node), ev.flit, cycle_);
    x.note(cycle_);
    ++ext_buffered_;
    if (++x.buffered > x.max_buffered) x.max_buffered = x.buffered;
    return;
  }
  if (!routers_[ev.node].accept_flit(ev.port, ev.flit, cycle_))
    violation("buffer overflow at router " + geo_.coord(static_cast<int>(ev.node)) + " port " + port_name(ev.port) +
              " vc" + std::to_string(ev.flit.vc));
  activate_router(static_cast<int>(ev.node));
}

void Network::handle_credit(const CreditEvent& ev) {
  if (ev.to_ni) {
    ++nis_[ev.node].credits[ev.vc];
    return;
  }
  if (external_router(static_cast<int>(ev.node))) {
    int& slot = ext_[ev.node].in.credit_vc[ev.port];
    if (slot >= 0)
      violation("two credits arrive on one port in one cycle at router " + geo_.coord(static_cast<int>(ev.node)));
    slot = ev.vc;
    if (const std::string broken = pin_checks_.credit_returned(static_cast<int>(ev.node), ev.port, ev.vc);
        !broken.empty())
      violation(broken);
    return;
  }
  routers_[ev.node].accept_credit(ev.port, ev.vc);
}

void Network::eject(int node, const Flit& f) {
  last_progress_ = cycle_;
  ++ejected_flits_;
  if (measuring_ && cycle_ >= window_start_ && cycle_ < window_end_) ++accepted_flits_;
  if (f.packet >= packets_.size()) {
    violation("ejected flit of unknown packet " + std::to_string(f.packet));
    return;
  }
  PacketRec& p = packets_[f.packet];
  if (f.dst != p.dst || static_cast<int>(f.dst) != node)
    violation("flit for " + geo_.coord(static_cast<int>(p.dst)) + " ejected at " + geo_.coord(node));
  if (f.seq != p.received)
    violation("packet " + std::to_string(f.packet) + " flit " + std::to_string(f.seq) + " arrived when " +
              std::to_string(p.received) + " was expected (out of order or duplicated)");
  const bool last = f.seq + 1 == p.flits;
  if (f.tail() != last) violation("tail flag wrong on packet " + std::to_string(f.packet));
  if (f.head() != (f.seq == 0)) violation("head flag wrong on packet " + std::to_string(f.packet));
  ++p.received;
  if (!f.tail()) return;
  if (p.measured) {
    packet_latencies_.push_back(static_cast<uint32_t>(cycle_ - p.create_cycle));
    ++measured_packets_done_;
  }
  const uint32_t ms = p.message;
  free_packets_.push_back(f.packet);
  --live_packets_;
  if (--messages_[ms].packets_left == 0) finish_message(ms, cycle_);
}

void Network::finish_message(uint32_t slot, uint64_t cycle) {
  const MessageRec m = messages_[slot];
  free_messages_.push_back(slot);
  ++delivered_messages_;
  if (in_session_) {
    if (rec_) {
      rec_->delivery_send.push_back(m.sess_index);
      rec_->delivery_step.push_back(sess_steps_ - 1);
    }
    ++sess_delivered_;
    if (resim_) {
      resim_delivered(m);
      return;
    }
  }
  if (m.measured) message_latencies_.push_back(static_cast<uint32_t>(cycle - m.create_cycle));
  if (on_delivery_) on_delivery_(Delivery{m.id, m.src, m.dst, m.bytes, m.tag, m.create_cycle, cycle});
}

void Network::inject(int node) {
  Ni& ni = nis_[node];
  for (int port = 0; port < cfg_.ni_ports; ++port) inject_port(ni, node, port);
}

void Network::inject_port(Ni& ni, int node, int port) {
  // The port sends at most one flit per cycle: of its queues (q = port, port + ni_ports, ...), the first
  // in round-robin order from its pointer whose front packet exists by now and has a VC of this port
  // with a free slot (its own, or a free VC for a new packet). Its pointer then moves past that queue.
  const int nq = static_cast<int>(ni.queues.size()), k = cfg_.ni_ports, V = cfg_.vcs;
  const unsigned bit = 1u << port;
  if (ni.busy_queues >= 2 && !(ni.rr_seen & bit)) {  // the pick can depend on the pointer
    ni.rr_seen |= bit;
    ni.rr_read |= bit;
    ni.rr_start[port] = static_cast<uint8_t>(ni.rr[port]);
  }
  const int mine = port_queues_[port];
  for (int i = 0, qi = ni.rr[port]; i < mine; ++i, qi = qi + k < nq ? qi + k : port) {
    NiQueue& q = ni.queues[static_cast<size_t>(qi)];
    if (q.packets.empty()) continue;
    const uint32_t ps = q.packets.front();
    const PacketRec& p = packets_[ps];
    if (p.create_cycle > cycle_) continue;
    int vc = q.cur_vc;  // index into ni.credits: port * V + VC
    if (vc < 0) {
      // A new packet takes the free VC of its port with the most free slots (lowest index on ties).
      for (int v = port * V; v < (port + 1) * V; ++v)
        if (ni.vc_owner[v] < 0 && (vc < 0 || ni.credits[v] > ni.credits[vc])) vc = v;
      if (vc < 0 || ni.credits[vc] <= 0) continue;
      q.cur_vc = vc;
      ni.vc_owner[vc] = static_cast<int8_t>(qi);
    } else if (ni.credits[vc] <= 0) {
      continue;
    }
    Flit f;
    f.packet = ps;
    f.dst = p.dst;
    f.seq = q.next_seq;
    f.vc = static_cast<uint8_t>(vc - port * V);
    f.flags = static_cast<uint8_t>((f.seq == 0 ? kHeadFlit : 0) | (f.seq + 1 == p.flits ? kTailFlit : 0));
    --ni.credits[vc];
    --q.flits;
    ++injected_flits_;
    last_progress_ = cycle_;
    schedule_flit(cycle_ + 1, f, static_cast<uint32_t>(node), static_cast<uint8_t>(kLocal + port), false);
    if (f.tail()) {
      q.packets.pop();
      if (q.packets.empty()) --ni.busy_queues;
      ni.vc_owner[vc] = -1;
      q.cur_vc = -1;
      q.next_seq = 0;
    } else {
      ++q.next_seq;
    }
    ni.rr[port] = qi + k < nq ? qi + k : port;
    ni.rr_seen |= bit;
    return;
  }
}

uint64_t Network::earliest_front(const Ni& ni) const {
  uint64_t c = kNever;
  for (const NiQueue& q : ni.queues)
    if (!q.packets.empty()) c = std::min(c, packets_[q.packets.front()].create_cycle);
  return c;
}

bool Network::step(uint64_t cycle) {
  if (stalled_) return false;
  begin_cycle(cycle);
  return end_cycle();
}

void Network::begin_cycle(uint64_t cycle) {
  enter_cycle(cycle);
  if (replaying_ && replay_cycle(cycle)) return;
  run_cycle(cycle, false);
}

void Network::enter_cycle(uint64_t cycle) {
  if (started_ && cycle <= cycle_)
    throw std::logic_error("noc: step(" + std::to_string(cycle) + ") after step(" + std::to_string(cycle_) + ")");
  started_ = true;
  cycle_ = cycle;
  ++steps_;
  if (stats_reset_pending_ && cycle >= window_start_) reset_router_stats(window_start_);
}

void Network::run_cycle(uint64_t cycle, bool admit_held_sends) {
  if (in_session_) {
    ++sess_steps_;
    if (rec_) {
      rec_->steps.push_back(cycle - sess_start_);
      if (rec_->steps.runs() + rec_->sends.size() + rec_->delivery_send.size() > SessionCache::kMaxSessionEvents)
        rec_.reset();
    }
  }
  in_step_ = true;
  arrive(cycle);
  in_step_ = false;
  if (admit_held_sends) resim_admit_rest();
  advance(cycle);
}

void Network::arrive(uint64_t cycle) {
  // 1. Everything the links deliver in this cycle.
  std::vector<FlitEvent>& flits = flit_wheel_[cycle & wheel_mask_];
  if (!flits.empty()) {
    wheel_events_ -= flits.size();
    for (const FlitEvent& ev : flits) handle_flit(ev);
    flits.clear();
  }
  std::vector<CreditEvent>& credits = credit_wheel_[cycle & wheel_mask_];
  if (!credits.empty()) {
    wheel_events_ -= credits.size();
    for (const CreditEvent& ev : credits) handle_credit(ev);
    credits.clear();
  }
  if (!local_pending_.empty()) {
    size_t keep = 0;
    for (size_t i = 0; i < local_pending_.size(); ++i) {
      const uint32_t ms = local_pending_[i];
      if (messages_[ms].create_cycle <= cycle)
        finish_message(ms, cycle);
      else
        local_pending_[keep++] = ms;
    }
    local_pending_.resize(keep);
  }
}

void Network::advance(uint64_t cycle) {
  // 2. Network interfaces inject at most one flit each.
  for (size_t i = 0; i < active_nis_.size();) {
    const int node = active_nis_[i];
    inject(node);
    if (nis_[node].busy_queues == 0) {
      nis_[node].active = false;
      active_nis_[i] = active_nis_.back();
      active_nis_.pop_back();
    } else {
      ++i;
    }
  }

  // 3. Routers that hold flits allocate and traverse.
  for (size_t i = 0; i < active_routers_.size();) {
    const int node = active_routers_[i];
    RouterSink sink{this, node};
    routers_[node].step(cycle, sink);
    if (routers_[node].buffered_flits() == 0) {
      router_active_[node] = 0;
      active_routers_[i] = active_routers_.back();
      active_routers_.pop_back();
    } else {
      ++i;
    }
  }
}

bool Network::end_cycle() {
  if (stalled_) return false;
  if (replaying_) {
    if (sess_steps_ == cands_.front()->steps.size()) finish_replay();
    return true;
  }
  if (in_session_ && live_packets_ == 0 && local_pending_.empty() && wheel_events_ == 0) end_session();
  const uint64_t cycle = cycle_;
  if (live_packets_ > 0 && cycle > last_progress_ + cfg_.watchdog_cycles) {
    // Only a stall if something could have moved: flits in flight, or a packet that was injectable.
    bool waiting = flits_in_flight() > 0;
    for (size_t i = 0; !waiting && i < active_nis_.size(); ++i)
      waiting = earliest_front(nis_[active_nis_[i]]) + cfg_.watchdog_cycles < cycle;
    if (waiting) {
      fire_watchdog();
    } else {
      last_progress_ = cycle;
    }
  }
  return !stalled_;
}

uint64_t Network::next_event_cycle(uint64_t cycle) const {
  if (stalled_) return kNever;
  if (replaying_) {
    // The next cycle the recordings evaluated (where they differ, a send of theirs woke the owner
    // earlier: a send of this run would do the same).
    uint64_t next = 0;
    for (const Session* s : cands_)
      if (sess_steps_ < s->steps.size()) next = std::max(next, sess_start_ + s->steps[sess_steps_]);
    return std::max(next, cycle + 1);
  }
  if (!active_routers_.empty() || ext_buffered_ > 0) return cycle + 1;
  uint64_t next = kNever;
  for (int node : active_nis_) next = std::min(next, std::max(cycle + 1, earliest_front(nis_[node])));
  for (uint32_t ms : local_pending_) next = std::min(next, std::max(cycle + 1, messages_[ms].create_cycle));
  if (wheel_events_ > 0) {
    for (uint64_t c = cycle + 1; c <= cycle + flit_wheel_.size() && c < next; ++c)
      if (!flit_wheel_[c & wheel_mask_].empty() || !credit_wheel_[c & wheel_mask_].empty()) {
        next = c;
        break;
      }
  }
  return next;
}

}  // namespace nmpsim::noc
