// Session replay of the cycle-level network (noc/session_cache.h, docs/MODEL.md "Session replay").
#include <algorithm>

#include "nmpsim/noc/network.h"

namespace nmpsim::noc {

void Network::set_session_replay(bool on) {
  if (on == replay_on_) return;
  if (!on) {
    if (replaying_) materialize(false);
    rec_.reset();
    in_session_ = false;
    replay_on_ = false;
    return;
  }
  // A link observer, a measurement window and external routers need every flit moved.
  if (!ext_.empty() || link_observer_ || measuring_ || stats_reset_pending_) return;
  replay_on_ = true;
}

SessionSend Network::session_send(int src, int dst, uint64_t bytes, uint32_t flits, uint32_t packet_flits,
                                  uint64_t cycle) const {
  SessionSend k;
  k.step = sess_steps_;
  k.delivered = sess_delivered_;
  k.in_step = in_step_;
  k.local = src == dst;
  k.rel_cycle = cycle - sess_start_;
  k.src = src;
  k.dst = dst;
  k.bytes = bytes;
  k.flits = flits;
  k.packet_flits = packet_flits;
  return k;
}

void Network::start_session(uint64_t cycle) {
  in_session_ = true;
  sess_start_ = cycle;
  sess_steps_ = sess_delivered_ = sess_sends_ = 0;
  sess_cycle0_ = cycle_;
  sess_steps0_ = steps_;
  sess_started0_ = started_;
  clear_replay();
  ++replay_counters_.sessions;
}

bool Network::preconditions_hold(const Session& s) const {
  for (const RrPointer& p : s.reads) {
    const int port = p.ni_port();
    const int v = port >= 0 ? nis_[p.node].rr[port] : routers_[p.node].rr_value(p.k);
    if (!(p.allowed >> v & 1)) return false;
  }
  return true;
}

void Network::pick_recording(const SessionSend& first) {
  cands_.clear();
  if (auto* bucket = cache_.find(first))
    for (auto& s : *bucket)
      if (s->sends.front() == first && preconditions_hold(*s)) cands_.push_back(s.get());
  if (!cands_.empty()) {
    replaying_ = true;
    return;
  }
  begin_recording();
}

void Network::begin_recording() {
  rec_ = std::make_unique<Session>();
  rec_base_.resize(routers_.size());
  for (size_t i = 0; i < routers_.size(); ++i) {
    Router& r = routers_[i];
    r.begin_session();
    for (int p = 0; p < kMaxPorts; ++p) rec_base_[i].flits_out[p] = r.flits_out(p);
    rec_base_[i].area = r.occupancy_area();
  }
  for (Ni& ni : nis_) ni.rr_seen = ni.rr_read = 0;
  rec_injected0_ = injected_flits_;
  rec_ejected0_ = ejected_flits_;
  rec_traversals0_ = flit_link_traversals_;
}

void Network::end_session() {
  in_session_ = false;
  if (!rec_) return;
  Session& s = *rec_;
  for (size_t i = 0; i < routers_.size(); ++i) {
    const Router& r = routers_[i];
    const uint32_t node = static_cast<uint32_t>(i);
    for (int k = 0; k < Router::kRrPointers; ++k) {
      const auto kk = static_cast<uint8_t>(k);
      if (r.rr_read_mask() >> k & 1) s.reads.push_back({node, kk, 0, r.rr_allowed(k)});
      if (r.rr_written_mask() >> k & 1) s.finals.push_back({node, kk, static_cast<uint8_t>(r.rr_value(k)), 0});
    }
    RouterDelta d;
    d.node = node;
    bool moved = false;
    for (int p = 0; p < kMaxPorts; ++p) {
      d.flits_out[p] = r.flits_out(p) - rec_base_[i].flits_out[p];
      moved = moved || d.flits_out[p] > 0;
    }
    d.area = r.occupancy_area() - rec_base_[i].area;
    d.peak = r.session_peak();
    if (moved || d.peak > 0) s.routers.push_back(d);
  }
  for (size_t i = 0; i < nis_.size(); ++i) {
    const Ni& ni = nis_[i];
    const uint32_t node = static_cast<uint32_t>(i);
    for (int port = 0; port < kMaxNiPorts; ++port) {
      const uint8_t k = RrPointer::ni_k(port);
      if (ni.rr_read >> port & 1) s.reads.push_back({node, k, 0, uint64_t{1} << ni.rr_start[port]});
      if (ni.rr_seen >> port & 1) s.finals.push_back({node, k, static_cast<uint8_t>(ni.rr[port]), 0});
    }
  }
  s.injected_flits = injected_flits_ - rec_injected0_;
  s.ejected_flits = ejected_flits_ - rec_ejected0_;
  s.link_traversals = flit_link_traversals_ - rec_traversals0_;
  s.sends.shrink_to_fit();
  s.steps.shrink_to_fit();
  s.delivery_send.shrink_to_fit();
  s.delivery_step.shrink_to_fit();
  cache_.insert(std::move(rec_));
  ++replay_counters_.recorded;
}

template <class Keep>
void Network::filter_candidates(Keep keep) {
  cands_.erase(std::remove_if(cands_.begin(), cands_.end(), [&](const Session* s) { return !keep(*s); }), cands_.end());
  if (applied_ && std::find(cands_.begin(), cands_.end(), applied_) == cands_.end()) {
    unapply_session_stats();
    apply_if_complete();
  }
}

void Network::apply_if_complete() {
  // A recording that agrees with the session so far and delivered its last message where the session
  // is now: its counters are the session's (any other complete candidate has the very same ones).
  for (const Session* s : cands_)
    if (s->delivery_send.size() == sess_delivered_) {
      apply_session_stats(*s);
      return;
    }
}

void Network::settle_counters() {
  // No recording agreeing so far ends here (the recordings went on with sends this run has not made,
  // and may never make): re-simulate the session so far, whose counters are then exact.
  if (replaying_ && !applied_ && !in_step_) materialize(false);
}

bool Network::replay_send(const ReplaySend& r) {
  if (!diverge_pending_) {
    const size_t m = rsends_.size();
    filter_candidates([&](const Session& s) { return m < s.sends.size() && s.sends[m] == r.key; });
    if (cands_.empty()) {
      if (!in_step_) {
        materialize(false);
        return false;
      }
      diverge_pending_ = true;  // re-simulated when this cycle's replayed deliveries are done
    }
  }
  rsends_.push_back(r);
  ++replay_pending_;
  return true;
}

bool Network::replay_cycle(uint64_t cycle) {
  const uint32_t n = sess_steps_;
  const size_t m = rsends_.size();
  // Every recorded send made before this cycle was made in this run too, and the recording evaluated
  // this very cycle next.
  filter_candidates([&](const Session& s) {
    return n < s.steps.size() && sess_start_ + s.steps[n] == cycle && (m >= s.sends.size() || s.sends[m].step > n);
  });
  if (cands_.empty()) {
    materialize(false);  // the engine is back where the replay was: this cycle runs on it
    return false;
  }
  ++sess_steps_;
  rsteps_.push_back(cycle);
  const Session& ref = *cands_.front();  // its deliveries this cycle do not depend on this cycle's sends
  in_step_ = true;
  for (size_t j = sess_delivered_; j < ref.delivery_step.size() && ref.delivery_step[j] == n; j = sess_delivered_)
    replay_delivery(ref, j, cycle);
  in_step_ = false;
  if (diverge_pending_) materialize(true);
  return true;
}

void Network::replay_delivery(const Session& ref, size_t j, uint64_t cycle) {
  const ReplaySend r = rsends_[ref.delivery_send[j]];
  --replay_pending_;
  ++sess_delivered_;
  ++delivered_messages_;
  last_progress_ = cycle;
  rdelivered_.push_back(r.id);
  // A candidate's last delivery: the counters are complete from here on (an owner may stop the clock).
  if (!applied_) apply_if_complete();
  replay_local_delivery_ = r.key.local;
  if (on_delivery_) on_delivery_(Delivery{r.id, r.key.src, r.key.dst, r.key.bytes, r.tag, r.cycle, cycle});
  replay_local_delivery_ = false;
}

void Network::apply_session_stats(const Session& s) {
  applied_ = &s;
  applied_peaks_.clear();
  for (const RouterDelta& d : s.routers) {
    Router& r = routers_[d.node];
    applied_peaks_.push_back(r.session_peak());
    r.add_session_stats(d.flits_out, d.area, d.peak);
  }
  injected_flits_ += s.injected_flits;
  ejected_flits_ += s.ejected_flits;
  flit_link_traversals_ += s.link_traversals;
}

void Network::unapply_session_stats() {
  const Session& s = *applied_;
  for (size_t i = 0; i < s.routers.size(); ++i) {
    const RouterDelta& d = s.routers[i];
    routers_[d.node].sub_session_stats(d.flits_out, d.area, applied_peaks_[i]);
  }
  injected_flits_ -= s.injected_flits;
  ejected_flits_ -= s.ejected_flits;
  flit_link_traversals_ -= s.link_traversals;
  applied_ = nullptr;
}

void Network::finish_replay() {
  Session& s = *cands_.front();
  if (applied_ != &s) {
    if (applied_) unapply_session_stats();
    apply_session_stats(s);
  }
  for (const RrPointer& p : s.finals) {
    if (const int port = p.ni_port(); port >= 0)
      nis_[p.node].rr[port] = p.value;
    else
      routers_[p.node].set_rr_value(p.k, p.value);
  }
  s.last_used = cache_.tick();
  ++replay_counters_.replayed;
  in_session_ = false;
  clear_replay();
}

void Network::clear_replay() {
  replaying_ = false;
  cands_.clear();
  rsends_.clear();
  rsteps_.clear();
  rdelivered_.clear();
  replay_pending_ = 0;
  diverge_pending_ = false;
  applied_ = nullptr;
}

void Network::materialize(bool partial) {
  ++replay_counters_.diverged;
  if (applied_) unapply_session_stats();
  replaying_ = false;
  cands_.clear();
  diverge_pending_ = false;
  delivered_messages_ -= rdelivered_.size();
  replay_pending_ = 0;
  const uint64_t cycle_in = cycle_, steps_in = steps_;
  cycle_ = sess_cycle0_;
  steps_ = sess_steps0_;
  started_ = sess_started0_;
  const std::vector<uint64_t> cycles = std::move(rsteps_);
  rsteps_.clear();
  sess_steps_ = sess_delivered_ = sess_sends_ = 0;
  begin_recording();  // the session is simulated from its start: it can be recorded after all
  resim_ = true;
  resim_next_ = resim_delivered_ = 0;
  for (size_t k = 0; k < cycles.size(); ++k) {
    resim_admit_until(static_cast<uint32_t>(k), false);
    enter_cycle(cycles[k]);
    const bool last = partial && k + 1 == cycles.size();
    run_cycle(cycles[k], last);  // the last, half-replayed cycle: the held sends join after its arrivals
    if (!last) end_cycle();
  }
  if (!partial) {
    resim_admit_until(static_cast<uint32_t>(cycles.size()), false);
    cycle_ = cycle_in;
    steps_ = steps_in;
  }
  if (resim_next_ != rsends_.size() || resim_delivered_ != rdelivered_.size())
    violation("session replay: the re-simulated session does not match the replayed one");
  resim_ = false;
  rsends_.clear();
  rdelivered_.clear();
}

void Network::resim_admit_until(uint32_t step, bool in_step) {
  while (resim_next_ < rsends_.size()) {
    const ReplaySend& r = rsends_[resim_next_];
    if (r.key.step != step || r.key.in_step != in_step || (in_step && r.key.delivered != sess_delivered_)) return;
    ++resim_next_;
    admit(r.id, r.key.src, r.key.dst, r.key.bytes, r.key.flits, r.key.packet_flits, r.cycle, r.tag, &r.key);
  }
}

void Network::resim_admit_rest() {
  while (resim_next_ < rsends_.size()) {
    const ReplaySend& r = rsends_[resim_next_++];
    admit(r.id, r.key.src, r.key.dst, r.key.bytes, r.key.flits, r.key.packet_flits, r.cycle, r.tag, &r.key);
  }
}

void Network::resim_delivered(const MessageRec& m) {
  if (resim_delivered_ >= rdelivered_.size() || rdelivered_[resim_delivered_] != m.id)
    violation("session replay: re-simulation delivered message " + std::to_string(m.id) + " out of the replayed order");
  ++resim_delivered_;
  resim_admit_until(sess_steps_, true);
}

}  // namespace nmpsim::noc
