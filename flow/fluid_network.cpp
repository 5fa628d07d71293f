#include "nmpsim/flow/fluid_network.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "nmpsim/base/ni_ports.h"
#include "nmpsim/base/slot_table.h"

namespace nmpsim::flow {

namespace {

/// Latency cycles of a link as the cycle-level NoC rounds them (hw::HardwareSpec::noc_config).
double link_latency_cycles(const LinkParams& p, double clock_hz) {
  return std::max(1.0, std::round(p.latency_ns * 1e-9 * clock_hz));
}
}  // namespace

FluidEngine::FluidEngine(const AnalyticalHardware& hw)
    : hw_(hw),
      nodes_(hw.topology.nodes()),
      ni_queues_(std::max(1, hw.ni_queues)),
      ni_ports_(std::max(1, hw.ni_ports)),
      flit_bytes_(std::max(1.0, hw.flit_bytes)),
      flow_link_efficiency_(hw.flow_link_efficiency),
      vcs_(std::max(1, hw.vcs)),
      flow_resolve_fraction_(std::max(0.0, hw.flow_resolve_fraction)) {
  const Topology& t = hw.topology;
  const size_t n = static_cast<size_t>(nodes_), k = static_cast<size_t>(ni_ports_);
  inject_base_ = 4 * n;
  eject_base_ = inject_base_ + n * k;
  const size_t resources = eject_base_ + n * k;
  capacity_.assign(resources, 0.0);
  efficiency_.assign(resources, 1.0);
  hop_latency_.assign(4 * n, 0.0);
  const double cycle = 1.0 / hw.clock_hz;
  const double ni = flit_bytes_ * hw.clock_hz;  // one flit per cycle per port
  const double router_pipeline = (hw.router_delay_cycles - 1) * cycle;
  std::fill(capacity_.begin() + static_cast<long>(inject_base_), capacity_.end(), ni);
  for (int v = 0; v < nodes_; ++v) {
    for (int d = 0; d < 4; ++d) {
      const int to = neighbour(t, v, d);
      if (to < 0) continue;
      const LinkParams& p = t.link(v, to);
      // The cycle-level link moves at most one flit per cycle; a slower one takes ceil(1 / share)
      // cycles on the wire per flit.
      const double flits_per_cycle = std::min(1.0, p.gbytes_per_s * 1e9 / ni);
      const double serialise = std::ceil(1.0 / flits_per_cycle - 1e-9);
      const size_t link = static_cast<size_t>(v) * 4 + d;
      capacity_[link] = flits_per_cycle * ni;
      // The routers' allocation losses cost whole cycles of a link's turns; a link that needs several
      // cycles per flit loses that share of them only once per flit (docs/MODEL.md).
      efficiency_[link] = 1.0 - (1.0 - flow_link_efficiency_) * flits_per_cycle;
      hop_latency_[link] = router_pipeline + (link_latency_cycles(p, hw.clock_hz) + serialise) * cycle;
    }
  }
  // Outside the links: one cycle from the NI into the source router, the destination router's
  // pipeline, one cycle into the destination NI, less the cycle the fluid already counts for the
  // last flit (docs/MODEL.md "Flow-level network").
  end_latency_s_ = hw.router_delay_cycles * cycle;
  buffer_bytes_ = std::max(0, hw.buffer_flits) * flit_bytes_;
  queues_.resize(n * static_cast<size_t>(ni_queues_));
  local_.assign(resources, -1);
  residual_ = capacity_;
  crossing_now_.assign(resources, 0);
  free_at_.assign(resources, 0.0);
  fluid_done_.assign(resources, 0.0);
  input_slots_ = 4 + k;
  input_flows_.assign(resources * input_slots_, 0);
  busy_inputs_.assign(resources, 0);
  hop_bytes_ = buffer_bytes_;
}

void FluidEngine::reset() {
  for (Queue& q : queues_) {
    q.pending.clear();
    q.bytes_left = 0;  // exactly: sums of wire bytes leave rounding behind
    q.attached = -1;
  }
  if (!active_.empty()) {  // flows dropped in flight: every resource is free again
    std::fill(crossing_now_.begin(), crossing_now_.end(), 0);
    std::fill(input_flows_.begin(), input_flows_.end(), 0);
    std::fill(busy_inputs_.begin(), busy_inputs_.end(), 0);
    residual_ = capacity_;
  }
  flows_.clear();
  free_flows_.clear();
  active_.clear();
  events_.clear();
  paths_.clear();
  restart_.clear();
  if (!deliveries_.empty()) deliveries_ = {};  // (empty at a session's end: no reallocation then)
  delivery_seq_ = 0;
  now_ = 0;
  in_flight_ = 0;
  dirty_ = false;
  changes_ = 0;
  change_limit_ = 1;
  live_path_len_ = 0;
  reset_hops();
}

double FluidEngine::wire_bytes(double bytes) const {
  return std::max(1.0, std::ceil(bytes / flit_bytes_ - 1e-9)) * flit_bytes_;
}

void FluidEngine::add_link_bytes(int src, int dst, double bytes, std::vector<double>& link_bytes) const {
  if (src == dst) return;
  const double w = wire_bytes(bytes);
  walk_xy(hw_.topology, src, dst,
          [&](int from, int, int dir) { link_bytes[static_cast<size_t>(from) * 4 + dir] += w; });
}

double FluidEngine::latency_s(int src, int dst) const {
  if (src == dst) return 0.0;
  double s = end_latency_s_;
  walk_xy(hw_.topology, src, dst,
          [&](int from, int, int dir) { s += hop_latency_[static_cast<size_t>(from) * 4 + dir]; });
  return s;
}

uint32_t FluidEngine::append_path(const Message& m, int port, std::vector<int32_t>& out) const {
  // As the cycle-level network: queue q injects on port q mod ni_ports; the message ejects on the
  // local port base::eject_port gives the mesh input port it arrives on (opposite its last hop).
  const size_t k = static_cast<size_t>(ni_ports_);
  const size_t begin = out.size();
  out.push_back(static_cast<int32_t>(inject_base_ + static_cast<size_t>(m.src) * k + static_cast<size_t>(port)));
  int last_dir = 0;
  walk_xy(hw_.topology, m.src, m.dst, [&](int from, int, int dir) {
    out.push_back(from * 4 + dir);
    last_dir = dir;
  });
  const size_t eject_port = static_cast<size_t>(base::eject_port((last_dir + 2) % 4, ni_ports_));
  out.push_back(static_cast<int32_t>(eject_base_ + static_cast<size_t>(m.dst) * k + eject_port));
  return static_cast<uint32_t>(out.size() - begin);
}

void FluidEngine::compact_paths() {
  repack(paths_, live_path_len_, [&](auto&& keep) {
    for (int id : active_) keep(flows_[static_cast<size_t>(id)].path_begin, flows_[static_cast<size_t>(id)].path_len);
  });
}

void FluidEngine::start_next(int queue) {
  Queue& q = queues_[static_cast<size_t>(queue)];
  while (!q.pending.empty() && q.attached < 0) start_one(queue);
}

void FluidEngine::start_one(int queue) {
  Queue& q = queues_[static_cast<size_t>(queue)];
  if (paths_.size() > 4 * live_path_len_ + 4096) compact_paths();
  const int id = base::take_slot(flows_, free_flows_);
  Flow& f = flows_[static_cast<size_t>(id)];
  f = Flow{};
  f.m = q.pending.front();
  q.pending.pop_front();
  const int port = (queue % ni_queues_) % ni_ports_;
  if (hop_message(f.m)) {
    free_flows_.push_back(id);
    q.attached = kHopHolds;
    start_hops(f.m, queue, port);
    return;
  }
  f.remaining = f.m.wire_bytes;
  f.t_ref = now_;
  f.path_begin = static_cast<uint32_t>(paths_.size());
  f.path_len = append_path(f.m, port, paths_);
  // The NI moves on once the rest of the message fits in the buffer space its path gives it: one VC
  // buffer per router, or the flow's share of the port's VC buffers when more flows than VCs cross it.
  f.release_at = 0;
  for (uint32_t k = 0; k + 1 < f.path_len; ++k) {
    // The input port feeding router k holds `vcs` VC buffers, shared by the flows that cross it.
    const int sharing = crossing_now_[static_cast<size_t>(paths_[f.path_begin + k])] + 1;
    f.release_at += buffer_bytes_ * std::min(1.0, static_cast<double>(vcs_) / sharing);
  }
  live_path_len_ += f.path_len;
  if (active_pos_.size() < flows_.size()) active_pos_.resize(flows_.size());
  active_pos_[static_cast<size_t>(id)] = static_cast<int>(active_.size());
  active_.push_back(id);
  // The message counts on its queue's load until its last byte has left, as at cycle level.
  f.origin = queue;
  if (f.remaining > f.release_at) {
    f.queue = queue;
    q.attached = id;
  } else {
    f.queue = -1;  // fits in the buffers at once: the queue moves straight on
  }
  provisional_rate(f);
  push_event(id);
  note_change();
}

void FluidEngine::push_event(int id) {
  events_.push_back(Event{event_time(flows_[static_cast<size_t>(id)]), id});
  std::push_heap(events_.begin(), events_.end(), std::greater<Event>());
}

void FluidEngine::remove_active(int id) {
  const int at = active_pos_[static_cast<size_t>(id)];
  const int last = active_.back();
  active_[static_cast<size_t>(at)] = last;
  active_pos_[static_cast<size_t>(last)] = at;
  active_.pop_back();
}

double FluidEngine::event_time(const Flow& f) const {
  const double left = f.queue >= 0 ? std::max(0.0, f.remaining - f.release_at) : f.remaining;
  return f.t_ref + left / f.rate;
}

void FluidEngine::send(double now_s, int src, int dst, double bytes, uint64_t cookie) {
  if (src < 0 || dst < 0 || src >= nodes_ || dst >= nodes_)
    throw std::out_of_range("fluid network: message endpoints outside the mesh");
  if (now_s > now_) progress(now_s);
  ++in_flight_;
  if (src == dst) {
    deliveries_.push(Pending{now_, delivery_seq_++, cookie});
    return;
  }
  // As the cycle-level NI: the port with the fewest bytes still to send, then its queue with the fewest.
  const size_t base = static_cast<size_t>(src) * static_cast<size_t>(ni_queues_);
  const size_t best = base + base::pick_ni_queue(static_cast<size_t>(ni_queues_), static_cast<size_t>(ni_ports_),
                                                 [&](size_t k) { return queues_[base + k].bytes_left; });
  Queue& q = queues_[best];
  const Message m{src, dst, wire_bytes(bytes), cookie};
  q.pending.push_back(m);
  q.bytes_left += m.wire_bytes;
  if (q.attached < 0) start_next(static_cast<int>(best));
}

void FluidEngine::provisional_rate(Flow& f) {
  double rate = kNever;
  for (uint32_t k = 0; k < f.path_len; ++k) {
    const size_t r = static_cast<size_t>(paths_[f.path_begin + k]);
    const int n = ++crossing_now_[r];
    const double cap = capacity_for(r, n);
    rate = std::min(rate, std::max(residual_[r], cap / n));
  }
  f.rate = rate;
  for (uint32_t k = 0; k < f.path_len; ++k) residual_[static_cast<size_t>(paths_[f.path_begin + k])] -= rate;
  count_inputs(f, +1);
  note_fluid_done(f);
}

void FluidEngine::note_fluid_done(const Flow& f) {
  const double done = f.t_ref + f.remaining / f.rate;
  for (uint32_t k = 0; k < f.path_len; ++k) {
    double& d = fluid_done_[static_cast<size_t>(paths_[f.path_begin + k])];
    d = std::max(d, done);
  }
}

void FluidEngine::count_inputs(const Flow& f, int delta) {
  for (uint32_t k = 1; k < f.path_len; ++k) {
    const size_t r = static_cast<size_t>(paths_[f.path_begin + k]);
    int& n = input_flows_[r * input_slots_ + input_slot(paths_[f.path_begin + k - 1])];
    if (n == 0) ++busy_inputs_[r];
    n += delta;
    if (n == 0) --busy_inputs_[r];
  }
}

void FluidEngine::release_rate(const Flow& f) {
  count_inputs(f, -1);
  for (uint32_t k = 0; k < f.path_len; ++k) {
    const size_t r = static_cast<size_t>(paths_[f.path_begin + k]);
    residual_[r] = --crossing_now_[r] > 0 ? residual_[r] + f.rate : capacity_[r];
  }
}

void FluidEngine::note_change() {
  if (++changes_ >= change_limit_) dirty_ = true;
}

double FluidEngine::next_event_s() {
  if (dirty_) solve();
  const double d = deliveries_.empty() ? kNever : deliveries_.top().t;
  const double h = hop_events_.empty() ? kNever : hop_events_.top().t;
  return std::min({d, h, events_.empty() ? kNever : events_.front().t});
}

void FluidEngine::progress(double t_s) {
  if (dirty_) solve();
  now_ = std::max(now_, t_s);
}

void FluidEngine::handle_event(int id, double t_s) {
  Flow& f = flows_[static_cast<size_t>(id)];
  const double left = left_at(f, now_);
  const double eps = 1e-9 * f.m.wire_bytes + 1e-9;
  const bool finished = left <= eps || f.t_ref + f.remaining / f.rate <= t_s;
  if (f.queue >= 0) {
    // The rest fits in the buffers along the path: the queue starts its next message.
    queues_[static_cast<size_t>(f.queue)].attached = -1;
    restart_.push_back(f.queue);
    f.queue = -1;
  }
  if (!finished) {
    push_event(id);
    return;
  }
  queues_[static_cast<size_t>(f.origin)].bytes_left -= f.m.wire_bytes;
  deliveries_.push(Pending{now_ + latency_s(f.m.src, f.m.dst), delivery_seq_++, f.m.cookie});
  live_path_len_ -= f.path_len;
  release_rate(f);
  remove_active(id);
  free_flows_.push_back(id);
  note_change();
}

void FluidEngine::advance(double t_s, std::vector<Delivery>& delivered) {
  progress(t_s);
  // Flows whose event is due by now (up to rounding) finish or release their queue; the released
  // queues start their next messages once every due event is handled.
  while (!events_.empty()) {
    const Event e = events_.front();
    if (e.t > t_s) {
      const Flow& f = flows_[static_cast<size_t>(e.flow)];
      const double target = f.queue >= 0 ? f.release_at : 0.0;
      if (left_at(f, now_) > target + 1e-9 * f.m.wire_bytes + 1e-9) break;
    }
    std::pop_heap(events_.begin(), events_.end(), std::greater<Event>());
    events_.pop_back();
    handle_event(e.flow, t_s);
  }
  for (int queue : restart_) start_next(queue);
  restart_.clear();
  advance_hops(t_s);
  if (active_.empty()) {
    paths_.clear();  // no flow holds a path: start the buffer over
    events_.clear();
    dirty_ = false;
  }
  while (!deliveries_.empty() && deliveries_.top().t <= t_s) {
    delivered.push_back(Delivery{deliveries_.top().cookie, deliveries_.top().t});
    deliveries_.pop();
    --in_flight_;
  }
}

}  // namespace nmpsim::flow
