#include "mapping/flow_executor.h"

#include <algorithm>
#include <stdexcept>

namespace nmpsim::mapping {

FlowExecutor::FlowExecutor(const AnalyticalHardware& hw, std::unique_ptr<NetworkModel> network)
    : hw_(hw),
      net_(std::move(network)),
      link_bytes_(static_cast<size_t>(hw.topology.nodes()) * 4, 0.0),
      node_flops_(static_cast<size_t>(hw.topology.nodes()), 0.0) {}

FlowExecutor::FlowExecutor(const AnalyticalHardware& hw) : FlowExecutor(hw, std::make_unique<LinkLoadBound>(hw)) {}

void FlowExecutor::messages_of(OpRef r, std::vector<Message>& out) const {
  const Op& op = tracker_.op(r);
  if (op.kind == OpKind::kTransfer) out.push_back(Message{op.node.value(), op.peer.value(), op.bytes});
  if (op.kind != OpKind::kStream) return;
  int from = op.node.value();
  for (PhysicalNode to : tracker_.schedule(r.schedule).chains()[static_cast<size_t>(op.chain)]) {
    out.push_back(Message{from, to.value(), op.bytes});
    from = to.value();
  }
}

double FlowExecutor::stream_read_seconds(const Op& op) const {
  return op.bytes > 0 ? hw_.memory_first_access_s + op.bytes / hw_.memory_bytes_per_s : 0.0;
}

void FlowExecutor::account(OpRef r) {
  const Op& op = tracker_.op(r);
  if (op.kind == OpKind::kCompute) node_flops_[static_cast<size_t>(op.node.value())] += op.flops;
  scratch_.clear();
  messages_of(r, scratch_);
  for (const Message& m : scratch_) net_->add_link_bytes(m, link_bytes_);
}

void FlowExecutor::schedule_completion(double t, OpRef r) { events_.push(Event{t, seq_++, r}); }

void FlowExecutor::start_background(OpRef r) {
  const Op& op = tracker_.op(r);
  tracker_.started(r, now_);
  account(r);  // fills scratch_ with the op's messages
  double seconds = net_->seconds(scratch_);
  if (op.kind == OpKind::kStream) seconds = std::max(seconds, stream_read_seconds(op));
  schedule_completion(now_ + seconds, r);
}

void FlowExecutor::take_ready(std::vector<OpRef>& wave) {
  auto& ready = tracker_.ready();
  while (!ready.empty()) {
    const OpRef r = ready.front();
    ready.pop_front();
    if (tracker_.op(r).stream == kForeground)
      wave.push_back(r);
    else
      start_background(r);
  }
}

int FlowExecutor::start_wave(std::vector<OpRef>& wave) {
  // Op order within a node sets the order of its compute ops (the order the schedule lists them).
  std::sort(wave.begin(), wave.end(),
            [](OpRef a, OpRef b) { return a.schedule != b.schedule ? a.schedule < b.schedule : a.op < b.op; });
  wave_messages_.clear();
  for (OpRef r : wave) messages_of(r, wave_messages_);
  const double net_s = net_->seconds(wave_messages_);
  node_busy_.assign(static_cast<size_t>(hw_.topology.nodes()), 0.0);
  for (OpRef r : wave) {
    const Op& op = tracker_.op(r);
    tracker_.started(r, now_);
    account(r);
    double end = now_ + net_s;
    if (op.kind == OpKind::kCompute) {
      double& busy = node_busy_[static_cast<size_t>(op.node.value())];
      busy += compute_seconds(hw_, op.flops, op.bytes);
      end = now_ + busy;
    } else if (op.kind == OpKind::kStream) {
      end = now_ + std::max(net_s, stream_read_seconds(op));
    }
    schedule_completion(end, r);
  }
  const int started = static_cast<int>(wave.size());
  wave.clear();
  return started;
}

bool FlowExecutor::step() {
  if (events_.empty()) return false;
  const Event e = events_.top();
  events_.pop();
  now_ = e.t;
  if (tracker_.op(e.op).stream == kForeground) --wave_left_;
  tracker_.complete(e.op, e.t);
  return true;
}

uint64_t FlowExecutor::execute(std::shared_ptr<LayerSchedule> s) {
  const uint64_t serial = tracker_.begin(std::move(s), now_, hw_.topology.nodes());
  std::vector<OpRef> wave;
  while (tracker_.foreground_left(serial) > 0) {
    take_ready(wave);
    if (wave_left_ == 0 && !wave.empty()) wave_left_ = start_wave(wave);
    if (!step()) throw std::logic_error("flow executor: foreground ops wait for something that never happens");
  }
  take_ready(wave);  // background ops the last completions made ready start now
  if (!wave.empty() || wave_left_ != 0) throw std::logic_error("flow executor: foreground work outlived its layer");
  tracker_.release_finished(serial);
  return serial;
}

void FlowExecutor::drain() {
  std::vector<OpRef> wave;
  while (tracker_.background_left() > 0) {
    take_ready(wave);
    if (!wave.empty()) throw std::logic_error("flow executor: foreground work outside a layer");
    if (!step()) throw std::logic_error("flow executor: background ops wait for something that never happens");
  }
}

}  // namespace nmpsim::mapping
