#include "nmpsim/flow/fluid_replay.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace nmpsim::flow {

double FluidNetwork::quantise(double seconds) { return std::ldexp(std::nearbyint(std::ldexp(seconds, 40)), -40); }

FluidNetwork::FluidNetwork(const AnalyticalHardware& hw) : engine_(hw), replay_enabled_(hw.replay_sessions) {}

uint64_t FluidNetwork::key(int src, int dst, double bytes) {
  uint64_t b = 0;
  std::memcpy(&b, &bytes, sizeof b);
  return base::session_key({uint64_t(uint32_t(src)), uint64_t(uint32_t(dst)), b});
}

double FluidNetwork::to_rel(double abs_s) const {
  // The answer first: when two session times round to one absolute time, the answer is the later one,
  // and advancing to it must reach it.
  if (has_next_ && abs_s == next_abs_) return next_rel_;
  if (abs_s == now_abs_) return now_rel_;
  return std::max(now_rel_, quantise(abs_s - origin_));
}

void FluidNetwork::start_session(double now_s, int src, int dst, double bytes) {
  ++stats_.sessions;
  origin_ = now_s;
  now_abs_ = now_s;
  now_rel_ = 0;
  has_next_ = false;
  cookies_.clear();
  engine_sends_ = 0;
  key_ = key(src, dst, bytes);
  candidates_.clear();
  if (auto* bucket = replay_enabled_ ? cache_.find(key_) : nullptr)
    for (auto& s : *bucket) candidates_.push_back(s.get());
  mode_ = candidates_.empty() ? Mode::kRecord : Mode::kReplay;
  pos_ = 0;
  replay_delivered_ = 0;
  if (mode_ == Mode::kRecord && replay_enabled_) rec_ = std::make_unique<FluidSession>();
}

void FluidNetwork::end_session() {
  if (mode_ == Mode::kReplay) {
    ++stats_.replayed;
    candidates_.front()->last_used = cache_.tick();
  } else {
    if (rec_) {
      ++stats_.recorded;
      cache_.insert(key_, std::move(rec_));
    }
    engine_.reset();
  }
  rec_.reset();
  candidates_.clear();
  mode_ = Mode::kIdle;
}

bool FluidNetwork::replay_matches(const FluidCall& c) {
  FluidSession* any = candidates_.front();
  size_t keep = 0;
  for (FluidSession* s : candidates_)
    if (pos_ < s->calls.size() && s->calls[pos_].same_input(c)) candidates_[keep++] = s;
  candidates_.resize(keep);
  if (keep > 0) return true;
  resimulate(*any, pos_);
  return false;
}

void FluidNetwork::resimulate(const FluidSession& s, size_t calls) {
  ++stats_.resimulated;
  mode_ = Mode::kRecord;
  rec_ = std::make_unique<FluidSession>();
  for (size_t i = 0; i < calls; ++i) {
    const FluidCall& c = s.calls[i];
    if (c.kind == FluidCall::kSend) run_send(c);
    if (c.kind == FluidCall::kAdvance) run_advance(c.t, nullptr);
    // The engine is deterministic: its answers are the recorded ones.
    if (c.kind == FluidCall::kQuery && run_query() != c.t)
      throw std::logic_error("fluid network: a re-simulated session answered differently from its recording");
  }
  candidates_.clear();  // (`s` was one of them; none is read again in this session)
}

void FluidNetwork::run_send(const FluidCall& c) {
  engine_.send(c.t, c.src, c.dst, c.bytes, engine_sends_++);
  record(c);
}

void FluidNetwork::record(const FluidCall& c) {
  if (!rec_) return;
  rec_->calls.push_back(c);
  if (rec_->calls.size() > kMaxSessionCalls) rec_.reset();  // too long to keep: simulated every time
}

double FluidNetwork::run_query() {
  FluidCall c;
  c.kind = FluidCall::kQuery;
  c.t = engine_.next_event_s();
  record(c);
  return c.t;
}

void FluidNetwork::run_advance(double t_rel, std::vector<Delivery>* out) {
  scratch_.clear();
  engine_.advance(t_rel, scratch_);
  for (const Delivery& d : scratch_) {
    if (rec_) rec_->deliveries.emplace_back(static_cast<uint32_t>(d.cookie), d.time_s);
    if (out) out->push_back(Delivery{cookies_[d.cookie], origin_ + d.time_s});
  }
  if (!rec_) return;
  FluidCall c;
  c.kind = FluidCall::kAdvance;
  c.t = t_rel;
  c.delivered_end = static_cast<uint32_t>(rec_->deliveries.size());
  record(c);
}

void FluidNetwork::send(double now_s, int src, int dst, double bytes, uint64_t cookie) {
  if (src < 0 || dst < 0 || src >= engine_.nodes() || dst >= engine_.nodes())
    throw std::out_of_range("fluid network: message endpoints outside the mesh");
  if (mode_ == Mode::kIdle) start_session(now_s, src, dst, bytes);
  FluidCall c;
  c.kind = FluidCall::kSend;
  c.src = src;
  c.dst = dst;
  c.bytes = bytes;
  c.t = to_rel(now_s);
  now_abs_ = now_s;
  now_rel_ = c.t;
  cookies_.push_back(cookie);
  if (mode_ == Mode::kReplay && replay_matches(c)) {
    ++pos_;
    return;
  }
  run_send(c);
}

double FluidNetwork::next_event_s() {
  if (mode_ == Mode::kIdle) return kNever;
  FluidCall c;
  c.kind = FluidCall::kQuery;
  double t = 0;
  if (mode_ == Mode::kReplay && replay_matches(c))
    t = candidates_.front()->calls[pos_++].t;
  else
    t = run_query();
  if (t == kNever) return kNever;
  next_rel_ = t;
  next_abs_ = origin_ + t;
  has_next_ = true;
  return next_abs_;
}

void FluidNetwork::advance(double t_s, std::vector<Delivery>& delivered) {
  if (mode_ == Mode::kIdle) return;
  FluidCall c;
  c.kind = FluidCall::kAdvance;
  c.t = to_rel(t_s);
  now_abs_ = t_s;
  now_rel_ = c.t;
  if (mode_ == Mode::kReplay && replay_matches(c)) {
    const FluidSession& s = *candidates_.front();
    const uint32_t end = s.calls[pos_++].delivered_end;
    for (; replay_delivered_ < end; ++replay_delivered_) {
      const auto& d = s.deliveries[replay_delivered_];
      delivered.push_back(Delivery{cookies_[d.first], origin_ + d.second});
    }
    if (pos_ == s.calls.size()) end_session();  // recordings end when the network is idle
    return;
  }
  run_advance(c.t, &delivered);
  if (engine_.idle()) end_session();
}

}  // namespace nmpsim::flow
