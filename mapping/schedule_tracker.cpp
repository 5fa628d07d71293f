#include "nmpsim/mapping/schedule_tracker.h"

#include <stdexcept>

namespace nmpsim::mapping {

uint64_t ScheduleTracker::begin(std::shared_ptr<LayerSchedule> s, double now, int nodes) {
  s->validate(nodes);
  const uint64_t serial = next_serial_++;
  Live& live = live_[serial];
  live.s = std::move(s);
  live.start_s = now;
  index_new_ops(serial, now);
  return serial;
}

void ScheduleTracker::refresh(uint64_t serial, double now) { index_new_ops(serial, now); }

void ScheduleTracker::index_new_ops(uint64_t serial, double now) {
  Live& L = live_.at(serial);
  const std::vector<Op>& ops = L.s->ops();
  const size_t n = ops.size(), first = static_cast<size_t>(L.indexed);
  if (first == n) return;
  L.pending.resize(n, 0);
  L.head.resize(n, -1);
  L.tail.resize(n, -1);
  L.done.resize(n, 0);
  L.cancelled.resize(n, 0);
  L.t.resize(n);
  L.phase_left.resize(L.s->phases().size(), 0);
  for (size_t i = first; i < n; ++i) {
    const Op& o = ops[i];
    ++L.phase_left[static_cast<size_t>(o.phase)];
    ++(o.stream == kForeground ? L.fg_left : L.bg_left);
    for (OpId d : o.deps) {
      if (d < 0 || static_cast<size_t>(d) >= n) throw std::logic_error("schedule: dependency on a missing op");
      if (L.done[static_cast<size_t>(d)]) continue;
      ++L.pending[i];
      const int link = static_cast<int>(L.links.size());
      L.links.push_back(Live::Link{static_cast<OpId>(i), -1});
      int& tail = L.tail[static_cast<size_t>(d)];
      (tail < 0 ? L.head[static_cast<size_t>(d)] : L.links[static_cast<size_t>(tail)].next) = link;
      tail = link;
    }
  }
  L.indexed = static_cast<int>(n);
  std::vector<OpRef> instant = take_scratch();
  for (size_t i = first; i < n; ++i)
    if (L.pending[i] == 0) make_ready(serial, static_cast<OpId>(i), now, instant);
  drain(instant, now);
  give_back(std::move(instant));
}

void ScheduleTracker::make_ready(uint64_t serial, OpId op, double t, std::vector<OpRef>& instant) {
  Live& L = live_.at(serial);
  L.t[static_cast<size_t>(op)].ready_s = t;
  const Op& o = L.s->op(op);
  const OpRef self{serial, op};
  if (o.kind == OpKind::kJoin) {
    instant.push_back(self);
  } else if (o.kind == OpKind::kExternal) {
    if (done(o.external))
      instant.push_back(self);
    else
      waiters_[op_key(o.external)].push_back(self);
  } else {
    ready_.push_back(self);
  }
}

void ScheduleTracker::finish(OpRef r, double t, std::vector<OpRef>& instant) {
  Live& L = live_.at(r.schedule);
  const size_t i = static_cast<size_t>(r.op);
  if (L.done[i]) throw std::logic_error("schedule: op completed twice");
  L.done[i] = 1;
  OpTiming& tm = L.t[i];
  if (tm.start_s < 0) tm.start_s = tm.ready_s;
  tm.end_s = t;
  const Op& o = L.s->op(r.op);
  if (--L.phase_left[static_cast<size_t>(o.phase)] == 0) phases_ended_.emplace_back(r.schedule, o.phase);
  --(o.stream == kForeground ? L.fg_left : L.bg_left);
  for (int k = L.head[i]; k >= 0; k = L.links[static_cast<size_t>(k)].next) {
    const OpId s = L.links[static_cast<size_t>(k)].op;
    if (--L.pending[static_cast<size_t>(s)] == 0) make_ready(r.schedule, s, t, instant);
  }
  const auto w = waiters_.find(op_key(r));
  if (w != waiters_.end()) {
    for (OpRef x : w->second) instant.push_back(x);
    waiters_.erase(w);
  }
}

void ScheduleTracker::complete(OpRef r, double t) {
  std::vector<OpRef> instant = take_scratch();
  instant.push_back(r);
  drain(instant, t);
  give_back(std::move(instant));
}

std::vector<OpRef> ScheduleTracker::take_scratch() {
  if (scratch_.empty()) return {};
  std::vector<OpRef> v = std::move(scratch_.back());
  scratch_.pop_back();
  return v;
}

void ScheduleTracker::give_back(std::vector<OpRef>&& v) {
  v.clear();
  scratch_.push_back(std::move(v));
}

void ScheduleTracker::drain(std::vector<OpRef>& instant, double t) {
  // Finish everything that completes now, then tell the hook about ended phases (which may add ops).
  while (!instant.empty() || (!phases_ended_.empty() && !in_hook_)) {
    while (!instant.empty()) {
      const OpRef x = instant.back();
      instant.pop_back();
      finish(x, t, instant);
    }
    if (in_hook_ || phases_ended_.empty()) continue;
    const auto [serial, phase] = phases_ended_.front();
    phases_ended_.erase(phases_ended_.begin());
    if (!on_phase_done_) continue;
    in_hook_ = true;
    on_phase_done_(serial, phase, t);
    in_hook_ = false;
    index_new_ops(serial, t);
  }
}

bool ScheduleTracker::done(OpRef r) const {
  const auto it = live_.find(r.schedule);
  if (it == live_.end()) return r.schedule > 0 && r.schedule < next_serial_;  // released: everything was done
  const Live& L = it->second;
  return r.op >= 0 && r.op < L.indexed && L.done[static_cast<size_t>(r.op)];
}

void ScheduleTracker::cancelled(OpRef r) {
  const auto it = live_.find(r.schedule);
  if (it != live_.end() && r.op >= 0 && r.op < it->second.indexed) it->second.cancelled[static_cast<size_t>(r.op)] = 1;
}

bool ScheduleTracker::was_cancelled(OpRef r) const {
  const auto it = live_.find(r.schedule);
  return it != live_.end() && r.op >= 0 && r.op < it->second.indexed && it->second.cancelled[static_cast<size_t>(r.op)];
}

int ScheduleTracker::foreground_left(uint64_t serial) const { return live_.at(serial).fg_left; }

int ScheduleTracker::background_left() const {
  int n = 0;
  for (const auto& [serial, L] : live_) n += L.bg_left;
  return n;
}

void ScheduleTracker::release_finished(uint64_t keep) {
  for (auto it = live_.begin(); it != live_.end();) {
    if (it->first < keep && it->second.fg_left == 0 && it->second.bg_left == 0 && !held_.count(it->first))
      it = live_.erase(it);
    else
      ++it;
  }
}

}  // namespace nmpsim::mapping
