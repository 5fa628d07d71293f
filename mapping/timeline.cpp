#include "nmpsim/mapping/timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace nmpsim::mapping {

namespace {

constexpr int kTidsPerNode = 100;             ///< compute, receive, then up to 98 network lanes
constexpr int kPhaseTid = 1000000;            ///< + micro-batch: the micro-batch's phases
constexpr int kBackgroundPhaseTid = 2000000;  ///< + row: background phases
constexpr int kMaxLanes = kTidsPerNode - 2;

int compute_tid(int node) { return node * kTidsPerNode; }
int receive_tid(int node) { return node * kTidsPerNode + 1; }
int lane_tid(int node, int lane) { return node * kTidsPerNode + 2 + lane; }

std::string thread_name(int tid) {
  if (tid >= kBackgroundPhaseTid) return "background phases " + std::to_string(tid - kBackgroundPhaseTid);
  if (tid >= kPhaseTid) return "micro-batch " + std::to_string(tid - kPhaseTid) + " phases";
  const int node = tid / kTidsPerNode, k = tid % kTidsPerNode;
  if (k == 0) return "node " + std::to_string(node) + " compute";
  if (k == 1) return "node " + std::to_string(node) + " receives and reduces";
  return "node " + std::to_string(node) + " network " + std::to_string(k - 2);
}

/// Microseconds rounded to the nanosecond (the file stays small; the cycle level's resolution).
double round_to_ns_us(double us) { return std::round(us * 1e3) / 1e3; }

nlohmann::json slice(const std::string& name, const char* cat, int tid, double ts_us, double dur_us,
                     nlohmann::json args) {
  ts_us = round_to_ns_us(ts_us);
  dur_us = round_to_ns_us(dur_us);
  return {{"name", name},           {"cat", cat}, {"ph", "X"}, {"tid", tid}, {"ts", ts_us}, {"dur", dur_us},
          {"args", std::move(args)}};
}

/// Network lanes of one node: the first lane whose last slice ended by `start`.
class Lanes {
 public:
  int take(int node, double start, double end) {
    std::vector<double>& ends = ends_[node];
    for (size_t k = 0; k < ends.size(); ++k)
      if (ends[k] <= start) {
        ends[k] = end;
        return static_cast<int>(k);
      }
    if (ends.size() < static_cast<size_t>(kMaxLanes)) ends.push_back(end);
    return static_cast<int>(ends.size()) - 1;  // beyond the last lane slices may overlap
  }

 private:
  std::map<int, std::vector<double>> ends_;
};

/// A schedule's op that ran, by its start.
struct Ran {
  double start_s;
  size_t schedule;  ///< index into the step's schedules
  OpId op;
};

/// The ops that ran (a background op still running: not yet) of every schedule, in order of their
/// start, so that the lanes fill from the earliest across layers: a layer's background ops may still
/// run beside the next layer's.
std::vector<Ran> ran_in_start_order(const ScheduleTracker& tr, const std::vector<std::pair<uint64_t, int>>& schedules) {
  std::vector<Ran> order;
  for (size_t k = 0; k < schedules.size(); ++k) {
    const uint64_t serial = schedules[k].first;
    const LayerSchedule& s = tr.schedule(serial);
    const std::vector<OpTiming>& t = tr.timings(serial);
    for (OpId i = 0; i < s.size(); ++i)
      if (t[static_cast<size_t>(i)].start_s >= 0 && t[static_cast<size_t>(i)].end_s >= 0 &&
          !tr.was_cancelled({serial, i}))
        order.push_back({t[static_cast<size_t>(i)].start_s, k, i});
  }
  std::stable_sort(order.begin(), order.end(), [](const Ran& a, const Ran& b) { return a.start_s < b.start_s; });
  return order;
}

/// Microseconds from the step's start, to the nanosecond.
struct StepClock {
  double origin_s;
  double operator()(double sec) const { return round_to_ns_us((sec - origin_s) * 1e6); }
};

/// Per (schedule, micro-batch, phase): the span of its ops.
using SpanMap = std::map<std::tuple<size_t, int, int>, std::pair<double, double>>;

/// The events of one op that ran: a compute slice, or a transfer or stream slice on one of its
/// node's lanes, and for a transfer the delivery and the arrow to it.
void append_op_events(nlohmann::json& events, Lanes& lanes, const Op& o, const OpTiming& ot, const std::string& phase,
                      int layer, const StepClock& us) {
  const nlohmann::json common = {{"layer", layer}, {"micro_batch", o.micro_batch}};
  if (o.kind == OpKind::kCompute) {
    nlohmann::json args = common;
    args["flops"] = o.flops;
    args["dram_bytes"] = o.bytes;
    // Fused reductions run on the node's reducer, beside its compute: on the receive track.
    const int tid = o.reducer ? receive_tid(o.node.value()) : compute_tid(o.node.value());
    events.push_back(slice(phase, "compute", tid, us(ot.start_s), us(ot.end_s) - us(ot.start_s), std::move(args)));
  } else if (o.kind == OpKind::kTransfer || o.kind == OpKind::kStream) {
    const int src = o.node.value(), lane = lanes.take(src, ot.start_s, ot.end_s);
    nlohmann::json args = common;
    args["bytes"] = o.bytes;
    if (o.kind == OpKind::kTransfer) args["to"] = o.peer.value();
    events.push_back(slice(phase, o.kind == OpKind::kTransfer ? "transfer" : "stream", lane_tid(src, lane),
                           us(ot.start_s), us(ot.end_s) - us(ot.start_s), std::move(args)));
    if (o.kind != OpKind::kTransfer) return;
    // A flow arrow from the send to a zero-length slice at the delivery.
    const int dst = o.peer.value();
    const uint64_t id = events.size();
    events.push_back(slice(phase, "receive", receive_tid(dst), us(ot.end_s), 0.0, {{"from", src}, {"layer", layer}}));
    events.push_back({{"name", "transfer"},
                      {"cat", "flow"},
                      {"ph", "s"},
                      {"id", id},
                      {"tid", lane_tid(src, lane)},
                      {"ts", us(ot.start_s)}});
    events.push_back({{"name", "transfer"},
                      {"cat", "flow"},
                      {"ph", "f"},
                      {"bp", "e"},
                      {"id", id},
                      {"tid", receive_tid(dst)},
                      {"ts", us(ot.end_s)}});
  }
}

/// The phases' slices: foreground phases on their micro-batch's row; background phases (stream >= 1:
/// a gradient synchronisation, a pre-broadcast), which overlap the next layers' phases, on rows of
/// their own, each on the first row whose last phase has ended.
void append_phase_events(nlohmann::json& events, const ScheduleTracker& tr,
                         const std::vector<std::pair<uint64_t, int>>& schedules, const SpanMap& spans,
                         const StepClock& us) {
  std::vector<std::tuple<double, double, size_t, int, int>> background;  // start, end, schedule, mb, phase
  for (const auto& [key, span] : spans) {
    const auto& [k, mb, ph] = key;
    if (span.second <= 0 || span.first > span.second) continue;
    const Phase& phase = tr.schedule(schedules[k].first).phases()[static_cast<size_t>(ph)];
    if (phase.stream != kForeground)
      background.emplace_back(span.first, span.second, k, mb, ph);
    else
      events.push_back(slice(phase.name, "phase", kPhaseTid + mb, us(span.first), us(span.second) - us(span.first),
                             {{"layer", schedules[k].second}}));
  }
  std::sort(background.begin(), background.end());
  Lanes rows;
  for (const auto& [from, to, k, mb, ph] : background)
    events.push_back(slice(tr.schedule(schedules[k].first).phases()[static_cast<size_t>(ph)].name, "phase",
                           kBackgroundPhaseTid + rows.take(0, from, to), us(from), us(to) - us(from),
                           {{"layer", schedules[k].second}, {"micro_batch", mb}}));
}

}  // namespace

void append_step_events(nlohmann::json& events, const ScheduleTracker& tr,
                        const std::vector<std::pair<uint64_t, int>>& schedules, double origin_s) {
  const StepClock us{origin_s};
  Lanes lanes;
  SpanMap spans;
  for (const Ran& ran : ran_in_start_order(tr, schedules)) {
    const uint64_t serial = schedules[ran.schedule].first;
    const LayerSchedule& s = tr.schedule(serial);
    const Op& o = s.op(ran.op);
    const OpTiming& ot = tr.timings(serial)[static_cast<size_t>(ran.op)];
    auto& span = spans.try_emplace({ran.schedule, o.micro_batch, o.phase}, std::numeric_limits<double>::infinity(), 0.0)
                     .first->second;
    if (o.kind != OpKind::kJoin && o.kind != OpKind::kExternal) {
      span.first = std::min(span.first, ot.start_s);
      span.second = std::max(span.second, ot.end_s);
    }
    append_op_events(events, lanes, o, ot, s.phases()[static_cast<size_t>(o.phase)].name,
                     schedules[ran.schedule].second, us);
  }
  append_phase_events(events, tr, schedules, spans, us);
}

nlohmann::json timeline_file(const std::vector<std::pair<std::string, const nlohmann::json*>>& strategies) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t k = 0; k < strategies.size(); ++k) {
    const int pid = static_cast<int>(k);
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", strategies[k].first}}}});
    std::map<int, bool> tids;
    for (nlohmann::json e : *strategies[k].second) {
      e["pid"] = pid;
      if (e.contains("id")) e["id"] = e["id"].get<uint64_t>() + (static_cast<uint64_t>(k) << 32);
      tids[e["tid"].get<int>()] = true;
      events.push_back(std::move(e));
    }
    for (const auto& [tid, used] : tids)
      events.push_back(
          {{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", thread_name(tid)}}}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}};
}

}  // namespace nmpsim::mapping
