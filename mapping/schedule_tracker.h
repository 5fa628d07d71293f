// The bookkeeping both back ends share when they execute layer schedules: which ops are ready, which
// are done and when, which phases have ended, and which schedules are still alive (background ops
// outlive their layer). Joins and external ops complete here, the moment their inputs are done; the
// back end only executes compute, transfer and stream ops. Plain C++.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "nmpsim/mapping/schedule.h"

namespace nmpsim::mapping {

struct OpTiming {
  double ready_s = -1;  ///< when its last dependency was done
  double start_s = -1;  ///< when the back end started it (compute and streams: when the PE took it up)
  double end_s = -1;    ///< when it was done
};

class ScheduleTracker {
 public:
  /// Called when the last op of a phase is done (the hook may add ops to the schedule; call refresh).
  using PhaseDone = std::function<void(uint64_t serial, int phase, double t)>;
  void set_phase_done(PhaseDone hook) { on_phase_done_ = std::move(hook); }

  /// Starts tracking a schedule at time `now` (validated against `nodes`); returns its serial number.
  uint64_t begin(std::shared_ptr<LayerSchedule> s, double now, int nodes);
  /// The serial number the next begin() will give.
  uint64_t next_serial() const { return next_serial_; }
  /// Indexes ops added to a running schedule (by a phase-done hook) at time `now`.
  void refresh(uint64_t serial, double now);
  /// Ops the back end must start, oldest first (compute, transfer and stream ops only).
  std::deque<OpRef>& ready() { return ready_; }
  /// Hands every ready op to `issue`, oldest first, including ops that issuing makes ready.
  template <class F>
  void drain_ready(F&& issue) {
    while (!ready_.empty()) {
      const OpRef r = ready_.front();
      ready_.pop_front();
      issue(r);
    }
  }
  void started(OpRef r, double t) { timing_mut(r).start_s = t; }
  /// Marks an op done at time t; what it unblocks joins the ready queue (joins complete at once).
  void complete(OpRef r, double t);

  bool done(OpRef r) const;
  /// Marks an op the back end will not execute (cancelled before it started: it sends nothing).
  void cancelled(OpRef r);
  bool was_cancelled(OpRef r) const;
  int foreground_left(uint64_t serial) const;
  int background_left() const;
  const LayerSchedule& schedule(uint64_t serial) const { return *live_.at(serial).s; }
  LayerSchedule& schedule(uint64_t serial) { return *live_.at(serial).s; }
  const Op& op(OpRef r) const { return live_.at(r.schedule).s->op(r.op); }
  const std::vector<OpTiming>& timings(uint64_t serial) const { return live_.at(serial).t; }
  double start_s(uint64_t serial) const { return live_.at(serial).start_s; }
  /// Forgets schedules older than `keep` whose ops are all done, except those held.
  void release_finished(uint64_t keep);
  /// Keeps schedule `serial` past release_finished until let_go(serial) (a caller that reads its
  /// timings once its background ops have ended).
  void hold(uint64_t serial) { held_.insert(serial); }
  void let_go(uint64_t serial) { held_.erase(serial); }

 private:
  struct Live {
    std::shared_ptr<LayerSchedule> s;
    std::vector<int> pending;  // dependencies not yet done
    // The ops waiting for each op, in the order their dependencies were indexed: a list per op
    // through one pool of links (head and tail by op; -1 when none), without an allocation per op.
    struct Link {
      OpId op;
      int next;
    };
    std::vector<int> head, tail;
    std::vector<Link> links;
    std::vector<char> done;
    std::vector<char> cancelled;
    std::vector<OpTiming> t;
    std::vector<int> phase_left;  // ops of each phase not yet done
    int fg_left = 0, bg_left = 0, indexed = 0;
    double start_s = 0;
  };
  OpTiming& timing_mut(OpRef r) { return live_.at(r.schedule).t[static_cast<size_t>(r.op)]; }
  void index_new_ops(uint64_t serial, double now);
  void make_ready(uint64_t serial, OpId op, double t, std::vector<OpRef>& instant);
  void finish(OpRef r, double t, std::vector<OpRef>& instant);
  void drain(std::vector<OpRef>& instant, double t);
  /// Scratch lists of ops that complete at once, reused (complete() can be re-entered from the
  /// phase hook, so each call takes its own).
  std::vector<OpRef> take_scratch();
  void give_back(std::vector<OpRef>&& v);
  std::vector<std::vector<OpRef>> scratch_;

  PhaseDone on_phase_done_;
  std::map<uint64_t, Live> live_;
  std::set<uint64_t> held_;
  uint64_t next_serial_ = 1;
  std::deque<OpRef> ready_;
  std::unordered_map<uint64_t, std::vector<OpRef>> waiters_;  // external ops waiting for an op
  std::vector<std::pair<uint64_t, int>> phases_ended_;
  bool in_hook_ = false;
};

}  // namespace nmpsim::mapping
