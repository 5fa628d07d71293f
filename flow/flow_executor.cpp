#include "nmpsim/flow/flow_executor.h"

#include <algorithm>
#include <stdexcept>

#include "nmpsim/base/slot_table.h"

namespace nmpsim::flow {

FlowExecutor::FlowExecutor(const AnalyticalHardware& hw)
    : hw_(hw),
      net_(hw),
      nodes_(static_cast<size_t>(hw.topology.nodes())),
      link_bytes_(static_cast<size_t>(hw.topology.nodes()) * 4, 0.0),
      node_flops_(static_cast<size_t>(hw.topology.nodes()), 0.0),
      node_dram_bytes_(static_cast<size_t>(hw.topology.nodes()), 0.0) {}

void FlowExecutor::timer(double t, TimerKind kind, int a) { timers_.push(Timer{t, seq_++, kind, a}); }

double FlowExecutor::dma_job(int node, double t, double bytes) {
  if (bytes <= 0) return t;                              // the DMA finishes an empty job at once
  node_dram_bytes_[static_cast<size_t>(node)] += bytes;  // weight reads, chunk reads and chunk writes
  double& free = nodes_[static_cast<size_t>(node)].dma_free;
  free = std::max(free, t) + hw_.memory_first_access_s + bytes / hw_.memory_bytes_per_s;
  return free;
}

void FlowExecutor::send(int src, int dst, const Msg& m) {
  const uint32_t cookie = base::take_slot(msgs_, free_msgs_);
  msgs_[cookie] = m;
  net_.add_link_bytes(src, dst, m.bytes, link_bytes_);
  net_.send(now_, src, dst, m.bytes, cookie);
}

void FlowExecutor::issue_ready() {
  tracker_.drain_ready([this](OpRef r) { issue(r); });
}

void FlowExecutor::issue(OpRef r) {
  const Op& op = tracker_.op(r);
  tracker_.started(r, now_);
  switch (op.kind) {
    case OpKind::kTransfer:
      if (op.node == op.peer) {
        tracker_.complete(r, now_);  // a node's message to itself needs no NoC
      } else {
        Msg m;
        m.kind = Msg::kTransfer;
        m.op = r;
        m.bytes = op.bytes;
        send(op.node.value(), op.peer.value(), m);
      }
      break;
    case OpKind::kCompute:
    case OpKind::kStream: {
      // Commands of the PE: compute and foreground streams on the foreground queue, background
      // streams on the background queue, fused reductions on the reducer.
      const int node = op.node.value();
      const int queue = op.reducer ? 2 : op.stream == kForeground ? 0 : 1;
      Node& n = nodes_[static_cast<size_t>(node)];
      n.queue[queue].push_back(r);
      if (!n.busy[queue]) start_next_command(node, queue);
      break;
    }
    default:
      throw std::logic_error("flow executor: joins and external ops complete in the tracker");
  }
}

void FlowExecutor::start_next_command(int node, int queue) {
  Node& n = nodes_[static_cast<size_t>(node)];
  if (n.queue[queue].empty()) {
    n.busy[queue] = false;
    return;
  }
  n.busy[queue] = true;
  const OpRef r = n.queue[queue].front();
  const Op& op = tracker_.op(r);
  tracker_.started(r, now_);  // the PE takes it up now (it was queued when it became ready)
  if (op.kind == OpKind::kStream) {
    start_stream(r, node, queue);
    return;
  }
  // Start-up, then the DRAM job and the FLOPs side by side (pe::ProcessingElement::do_compute).
  const double t0 = now_ + (op.startup ? hw_.startup_s : 0.0);
  const double done = std::max(t0 + op.flops / hw_.peak_flops, dma_job(node, t0, op.bytes));
  node_flops_[static_cast<size_t>(node)] += op.flops;
  timer(done, TimerKind::kCommandDone, node * kQueues + queue);
}

void FlowExecutor::command_done(int node, int queue) {
  Node& n = nodes_[static_cast<size_t>(node)];
  const OpRef r = n.queue[queue].front();
  n.queue[queue].pop_front();
  tracker_.complete(r, now_);
  start_next_command(node, queue);
}

void FlowExecutor::start_stream(OpRef r, int node, int queue) {
  const Op& op = tracker_.op(r);
  const auto& chain = tracker_.schedule(r.schedule).chains()[static_cast<size_t>(op.chain)];
  const double chunk = op.chunk_bytes > 0 ? op.chunk_bytes : hw_.copy_chunk_bytes;
  const double bytes = static_cast<double>(static_cast<uint64_t>(op.bytes));
  if (chain.empty() || bytes <= 0) {
    timer(now_, TimerKind::kCommandDone, node * kQueues + queue);
    return;
  }
  const int id = base::take_slot(streams_, free_streams_);
  Stream& s = streams_[static_cast<size_t>(id)];
  s = Stream{};
  s.op = r;
  s.src = node;
  s.queue = queue;
  for (PhysicalNode v : chain) s.chain.push_back(v.value());
  s.bytes = bytes;
  s.chunk = static_cast<double>(static_cast<uint64_t>(chunk));
  s.chunks = static_cast<int>(std::ceil(bytes / s.chunk));
  s.live = true;
  s.cancelled = cancelled_.erase(op_key(r)) > 0;
  stream_next(id);
}

void FlowExecutor::stream_next(int id) {
  Stream& s = streams_[static_cast<size_t>(id)];
  if (s.reading) return;
  const bool more = !s.cancelled && s.read < s.chunks;
  if (more && (hw_.broadcast_window_chunks <= 0 || s.unsent < hw_.broadcast_window_chunks)) {
    s.reading = true;
    timer(dma_job(s.src, now_, std::min(s.chunk, s.bytes - s.read * s.chunk)), TimerKind::kChunkRead, id);
  } else if (!more && s.acked == s.read) {
    const int node = s.src, queue = s.queue;
    s.live = false;
    free_streams_.push_back(id);
    command_done(node, queue);
  }
}

void FlowExecutor::chunk_read(int id) {
  Stream& s = streams_[static_cast<size_t>(id)];
  const double len = std::min(s.chunk, s.bytes - s.read * s.chunk);
  ++s.read;
  ++s.unsent;
  s.reading = false;
  Msg m;
  m.kind = Msg::kChunk;
  m.stream = id;
  m.hop = 0;
  m.bytes = len;
  send(s.src, s.chain.front(), m);
  stream_next(id);
}

void FlowExecutor::cancel(OpRef r) {
  for (size_t id = 0; id < streams_.size(); ++id) {
    Stream& s = streams_[id];
    if (!s.live || s.op.schedule != r.schedule || s.op.op != r.op) continue;
    s.cancelled = true;
    timer(now_, TimerKind::kStreamCheck, static_cast<int>(id));  // finishes it if nothing is on the way
    return;
  }
  if (!tracker_.done(r)) {  // not started yet: it will send nothing
    cancelled_.insert(op_key(r));
    tracker_.cancelled(r);
  }
}

void FlowExecutor::chunk_written(int id) {
  const Stream& s = streams_[static_cast<size_t>(id)];
  Msg ack;
  ack.kind = Msg::kAck;
  ack.stream = id;
  ack.bytes = 0;
  send(s.chain.back(), s.src, ack);
}

void FlowExecutor::on_delivery(uint64_t cookie) {
  const Msg m = msgs_[cookie];
  free_msgs_.push_back(static_cast<uint32_t>(cookie));
  switch (m.kind) {
    case Msg::kTransfer:
      tracker_.complete(m.op, now_);
      break;
    case Msg::kChunk: {
      // Forward at once, store locally; the last node acknowledges once the chunk is written.
      Stream& s = streams_[static_cast<size_t>(m.stream)];
      if (m.hop == 0) {
        --s.unsent;
        stream_next(m.stream);
      }
      const int here = s.chain[static_cast<size_t>(m.hop)];
      const bool last = m.hop + 1 == static_cast<int>(s.chain.size());
      if (!last) {
        Msg next = m;
        next.hop = m.hop + 1;
        send(here, s.chain[static_cast<size_t>(next.hop)], next);
      }
      const double written = dma_job(here, now_, m.bytes);
      if (last) timer(written, TimerKind::kChunkWritten, m.stream);
      break;
    }
    case Msg::kAck: {
      ++streams_[static_cast<size_t>(m.stream)].acked;
      stream_next(m.stream);
      break;
    }
  }
}

bool FlowExecutor::step() {
  const double tn = net_.next_event_s();
  const double tt = timers_.empty() ? FluidNetwork::kNever : timers_.top().t;
  const double t = std::min(tn, tt);
  if (t == FluidNetwork::kNever) return false;
  now_ = std::max(now_, t);
  delivered_.clear();
  net_.advance(t, delivered_);
  for (const FluidNetwork::Delivery& d : delivered_) on_delivery(d.cookie);
  while (!timers_.empty() && timers_.top().t <= t) {
    const Timer e = timers_.top();
    timers_.pop();
    switch (e.kind) {
      case TimerKind::kCommandDone:
        command_done(e.a / kQueues, e.a % kQueues);
        break;
      case TimerKind::kChunkRead:
        chunk_read(e.a);
        break;
      case TimerKind::kChunkWritten:
        chunk_written(e.a);
        break;
      case TimerKind::kStreamCheck:
        if (streams_[static_cast<size_t>(e.a)].live) stream_next(e.a);
        break;
    }
  }
  issue_ready();
  return true;
}

uint64_t FlowExecutor::execute(std::shared_ptr<LayerSchedule> s) {
  const uint64_t serial = tracker_.begin(std::move(s), now_, hw_.topology.nodes());
  issue_ready();
  while (tracker_.foreground_left(serial) > 0)
    if (!step()) throw std::logic_error("flow executor: foreground ops wait for something that never happens");
  tracker_.release_finished(serial);
  return serial;
}

void FlowExecutor::drain() {
  while (tracker_.background_left() > 0)
    if (!step()) throw std::logic_error("flow executor: background ops wait for something that never happens");
}

void record_sessions(mapping::StrategyResult& r, const FlowExecutor& ex) {
  const FluidNetwork::Stats& s = ex.network_sessions();
  r.simulator["noc_sessions"] = {
      {"sessions", s.sessions}, {"replayed", s.replayed}, {"resimulated", s.resimulated}, {"recorded", s.recorded}};
}

mapping::StrategyResult run_flow(const AnalyticalHardware& hw, const mapping::ModelSpec& m,
                                 const mapping::RoutingTrace& trace, const mapping::Placement& p,
                                 const mapping::RunConfig& cfg) {
  FlowExecutor ex(hw);
  mapping::PolicyList none;
  mapping::StrategyResult r = mapping::run_placement(ex, mapping::RunInputs{m, trace, hw, cfg}, p, none);
  record_sessions(r, ex);
  return r;
}

}  // namespace nmpsim::flow
