// FluidEngine's small messages: hop by hop through per-resource queues (flow/fluid_network.h).
#include <algorithm>

#include "nmpsim/base/ni_ports.h"
#include "nmpsim/base/slot_table.h"
#include "nmpsim/flow/fluid_network.h"

namespace nmpsim::flow {

void FluidEngine::start_hops(const Message& m, int queue, int port) {
  if (hop_paths_.size() > 4 * live_hop_path_len_ + 4096) compact_hop_paths();
  const int id = base::take_slot(hop_msgs_, free_hops_);
  HopMessage& h = hop_msgs_[static_cast<size_t>(id)];
  h = HopMessage{};
  h.m = m;
  h.queue = queue;
  // The path as a fluid flow's: injection port, XY links, ejection port.
  h.path_begin = static_cast<uint32_t>(hop_paths_.size());
  h.path_len = append_path(m, port, hop_paths_);
  h.end_prev = -kNever;
  h.live = true;
  live_hop_path_len_ += h.path_len;
  hop_events_.push(HopEvent{now_, hop_seq_++, id, -1, 0.0});
}

void FluidEngine::compact_hop_paths() {
  repack(hop_paths_, live_hop_path_len_, [&](auto&& keep) {
    for (HopMessage& h : hop_msgs_)
      if (h.live) keep(h.path_begin, h.path_len);
  });
}

void FluidEngine::ni_done(int queue, double wire_bytes) {
  // The message's last flit has left the NI: its queue's load drops and its next message may start.
  Queue& q = queues_[static_cast<size_t>(queue)];
  q.bytes_left -= wire_bytes;
  q.attached = -1;
  start_next(queue);
}

void FluidEngine::hop(int id, double t) {
  HopMessage& h = hop_msgs_[static_cast<size_t>(id)];
  const size_t r = static_cast<size_t>(hop_paths_[h.path_begin + h.at]);
  // Served after the hop messages ahead of it, at the resource's share beside the fluid flows on it.
  // Beside fluid flows it takes what they leave, or at least its input's turn among the inputs that
  // feed the resource (the first resource, the NI port, is shared with the flows on it).
  const int32_t prev = h.at > 0 ? hop_paths_[h.path_begin + h.at - 1] : -1;  // the resource before
  int others = crossing_now_[r];
  if (prev >= 0) others = busy_inputs_[r] - (input_flows_[r * input_slots_ + input_slot(prev)] > 0 ? 1 : 0);
  const bool waits = free_at_[r] > t;  // contended: the routers' allocation losses apply
  const double share = capacity_for(r, others + (waits ? 2 : 1)) / (others + 1);
  const double rate = others > 0 ? std::max(residual_[r], share) : share;
  const double start = std::max(t, free_at_[r]);
  const bool mesh_link = r < inject_base_;
  const double prev_latency = h.at >= 2 ? hop_latency_[static_cast<size_t>(prev)] : 0.0;  // a link
  // Beside fluid flows it has the rate above until the last of them finishes, then the whole resource.
  double served_end = start + h.m.wire_bytes / rate;
  if (others > 0 && served_end > fluid_done_[r]) {
    const double shared_s = std::max(0.0, fluid_done_[r] - start);
    served_end = start + shared_s + (h.m.wire_bytes - shared_s * rate) / capacity_for(r, 1);
  }
  const double end = std::max(served_end, h.end_prev + prev_latency);
  free_at_[r] = end;
  h.end_prev = end;
  if (h.at == 0)  // it holds its NI queue until its last flit has left the port
    hop_events_.push(HopEvent{end, hop_seq_++, -1, h.queue, h.m.wire_bytes});
  if (++h.at < h.path_len) {
    hop_events_.push(HopEvent{start + (mesh_link ? hop_latency_[r] : 0.0), hop_seq_++, id, -1, 0.0});
    return;
  }
  deliveries_.push(Pending{end + end_latency_s_, delivery_seq_++, h.m.cookie});
  h.live = false;
  live_hop_path_len_ -= h.path_len;
  free_hops_.push_back(id);
  if (live_hop_path_len_ == 0) hop_paths_.clear();
}

void FluidEngine::advance_hops(double t_s) {
  while (!hop_events_.empty() && hop_events_.top().t <= t_s) {
    const HopEvent e = hop_events_.top();
    hop_events_.pop();
    if (e.msg >= 0)
      hop(e.msg, e.t);
    else
      ni_done(e.queue, e.wire_bytes);
  }
}

void FluidEngine::reset_hops() {
  hop_msgs_.clear();
  free_hops_.clear();
  hop_paths_.clear();
  hop_events_ = {};
  hop_seq_ = 0;
  live_hop_path_len_ = 0;
  std::fill(free_at_.begin(), free_at_.end(), 0.0);
  std::fill(fluid_done_.begin(), fluid_done_.end(), 0.0);
}

}  // namespace nmpsim::flow
