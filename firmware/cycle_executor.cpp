#include "nmpsim/firmware/cycle_executor.h"

#include <stdexcept>

#include "nmpsim/base/model_failure.h"
#include "nmpsim/noc/pin_mesh.h"

namespace nmpsim::firmware {

using mapping::Op;
using mapping::OpKind;
using mapping::OpRef;

CycleExecutor::CycleExecutor(hw::System& sys)
    : sys_(sys), t0_s_(sc_core::sc_time_stamp().to_seconds()), weight_cursor_(static_cast<size_t>(sys.nodes()), 0) {
  links0_ = link_bytes();  // counters so far (links0_ is still empty)
  flops0_ = node_flops();
  for (int v = 0; v < sys_.nodes(); ++v)
    if (sys_.has_pe(v)) sys_.pe(v).set_logging(false);
  sys_.set_pause_when_foreground_idle(false);
  sys_.set_firmware([this] { pump(); });
  sys_.set_delivery_observer([this](const noc::Delivery& d) { on_delivery(d); });
}

CycleExecutor::~CycleExecutor() {
  sys_.set_firmware(nullptr);
  sys_.set_delivery_observer(nullptr);
  sys_.set_pause_when_foreground_idle(true);
  for (int v = 0; v < sys_.nodes(); ++v)
    if (sys_.has_pe(v)) sys_.pe(v).set_logging(true);
}

double CycleExecutor::now_s() const { return sc_core::sc_time_stamp().to_seconds() - t0_s_; }

std::vector<double> CycleExecutor::link_bytes() const {
  sys_.mesh().network().settle_counters();  // the clock stopped: a replayed session may be under way
  const noc::Network& net = sys_.mesh().network();
  const double flit = net.config().flit_bytes;
  std::vector<double> out(static_cast<size_t>(sys_.nodes()) * 4, 0.0);
  for (int v = 0; v < sys_.nodes(); ++v)
    for (int d = 0; d < 4; ++d) out[static_cast<size_t>(v) * 4 + d] = net.router(v).flits_out(d) * flit;
  if (!links0_.empty())
    for (size_t i = 0; i < out.size(); ++i) out[i] -= links0_[i];
  return out;
}

std::vector<double> CycleExecutor::node_flops() const {
  std::vector<double> out(static_cast<size_t>(sys_.nodes()));
  for (int v = 0; v < sys_.nodes(); ++v)
    if (sys_.has_pe(v)) out[static_cast<size_t>(v)] = sys_.pe(v).flops_done();
  if (!flops0_.empty())
    for (size_t v = 0; v < out.size(); ++v) out[v] -= flops0_[v];
  return out;
}

void CycleExecutor::completed(OpRef r) {
  tracker_.complete(r, now_s());
  sys_.wake_firmware();
}

void CycleExecutor::on_delivery(const noc::Delivery& d) {
  if (pe::tag_kind(d.tag) != pe::MessageKind::kTracked) return;
  const auto it = in_flight_.find(d.tag);
  if (it == in_flight_.end()) return;
  const OpRef r = it->second;
  in_flight_.erase(it);
  completed(r);
}

void CycleExecutor::issue_compute(OpRef r, const Op& op) {
  const uint64_t bytes = static_cast<uint64_t>(op.bytes);
  uint64_t address = 0;
  if (op.own_weights) {
    // Each own-weight read gets the next addresses of the node's DRAM, so row-buffer state is honest.
    uint64_t& cursor = weight_cursor_[static_cast<size_t>(op.node.value())];
    if (cursor + bytes > sys_.spec().memory.capacity_bytes) cursor = 0;
    address = cursor;
    cursor += bytes;
  }
  pe::Command c = pe::Command::compute(op.flops, bytes, {}, address);
  c.startup = op.startup;
  c.on_start = [this, r] { tracker_.started(r, now_s()); };
  c.on_done = [this, r] { completed(r); };
  if (op.reducer)
    sys_.pe(op.node.value()).submit_reducer(std::move(c));
  else
    sys_.pe(op.node.value()).submit(std::move(c));
}

void CycleExecutor::issue_stream(OpRef r, const Op& op) {
  std::vector<int> chain;
  for (mapping::PhysicalNode v : tracker_.schedule(r.schedule).chains()[static_cast<size_t>(op.chain)])
    chain.push_back(v.value());
  const uint64_t tag = next_tag_++;
  const int src = op.node.value();
  sys_.broadcasts().entries[tag] = pe::BroadcastRegistry::Entry{src, chain, false, cancelled_.erase(op_key(r)) > 0};
  stream_tags_[op_key(r)] = tag;
  pe::Command c = pe::Command::broadcast(chain, static_cast<uint64_t>(op.bytes), tag);
  c.chunk_bytes = static_cast<uint64_t>(op.chunk_bytes);
  c.on_start = [this, r] { tracker_.started(r, now_s()); };
  c.on_done = [this, r, tag] {
    sys_.broadcasts().entries.erase(tag);
    stream_tags_.erase(op_key(r));
    completed(r);
  };
  if (op.stream == mapping::kForeground)
    sys_.pe(src).submit(std::move(c));
  else
    sys_.pe(src).submit_background(std::move(c));
}

void CycleExecutor::issue(OpRef r) {
  const Op& op = tracker_.op(r);
  tracker_.started(r, now_s());
  switch (op.kind) {
    case OpKind::kCompute:
      issue_compute(r, op);
      break;
    case OpKind::kTransfer:
      if (op.node == op.peer) {
        tracker_.complete(r, now_s());  // a node's message to itself needs no NoC
      } else {
        const uint64_t tag = pe::make_tag(pe::MessageKind::kTracked, next_tag_++);
        in_flight_[tag] = r;
        sys_.mesh().send(op.node.value(), op.peer.value(), static_cast<uint64_t>(op.bytes), tag);
      }
      break;
    case OpKind::kStream:
      issue_stream(r, op);
      break;
    default:
      throw std::logic_error("cycle executor: joins and external ops complete in the tracker");
  }
}

void CycleExecutor::issue_ready() {
  tracker_.drain_ready([this](OpRef r) { issue(r); });
}

void CycleExecutor::pump() {
  issue_ready();
  const bool done = draining_ ? tracker_.background_left() == 0 : tracker_.foreground_left(awaited_) == 0;
  if (done) sc_core::sc_pause();
}

template <class Done>
void CycleExecutor::run_until(Done done, const char* what) {
  const noc::Network& net = sys_.mesh().network();
  while (!done()) {
    if (!sc_core::sc_pending_activity())
      throw std::runtime_error(std::string("firmware: ") + what + " never finished (nothing left to simulate)");
    sc_core::sc_start();
    if (net.stalled()) {
      // A pin-level router's own error (a forged flit, a combinational path) comes before the stall it caused.
      const noc::PinMesh* pins = sys_.mesh().pin_mesh();
      const std::string own =
          pins && !pins->router_error().empty() ? "NoC router error: " + pins->router_error() + "; then " : "";
      throw base::ModelFailure(own + net.stall_report());
    }
  }
}

uint64_t CycleExecutor::execute(std::shared_ptr<mapping::LayerSchedule> s) {
  // A node built without a PE (a user's module in its place) takes no work.
  for (mapping::OpId i = 0; i < s->size(); ++i) {
    const mapping::Op& op = s->op(i);
    const bool pe_work = op.kind == mapping::OpKind::kCompute || op.kind == mapping::OpKind::kTransfer ||
                         op.kind == mapping::OpKind::kStream;
    auto check = [&](int node) {
      if (!sys_.has_pe(node))
        throw std::invalid_argument("layer schedule: op " + std::to_string(i) + " uses node " + std::to_string(node) +
                                    ", which has no PE (a user's module takes its place)");
    };
    if (!pe_work) continue;
    check(op.node.value());
    if (op.kind == mapping::OpKind::kTransfer) check(op.peer.value());
    if (op.kind == mapping::OpKind::kStream)
      for (mapping::PhysicalNode v : s->chains()[static_cast<size_t>(op.chain)]) check(v.value());
  }
  const uint64_t serial = tracker_.begin(std::move(s), now_s(), sys_.nodes());
  awaited_ = serial;
  issue_ready();  // what is ready at the start goes out at the current simulated time
  run_until([&] { return tracker_.foreground_left(serial) == 0; }, "a layer");
  tracker_.release_finished(serial);
  return serial;
}

void CycleExecutor::cancel(OpRef r) {
  const auto it = stream_tags_.find(op_key(r));
  if (it != stream_tags_.end()) {
    sys_.broadcasts().entries.at(it->second).cancelled = true;  // the PE checks before every chunk
  } else if (!tracker_.done(r)) {
    cancelled_.insert(op_key(r));  // not issued yet: it will send nothing
    tracker_.cancelled(r);
  }
}

void CycleExecutor::drain() {
  draining_ = true;
  run_until([&] { return tracker_.background_left() == 0; }, "background work");
  draining_ = false;
}

mapping::StrategyResult run_cycle(hw::System& sys, const mapping::ModelSpec& m, const mapping::RoutingTrace& trace,
                                  const mapping::Placement& p, const mapping::RunConfig& cfg,
                                  mapping::PolicyList* policies) {
  const mapping::AnalyticalHardware ah = to_analytical(sys.spec());
  CycleExecutor ex(sys);
  mapping::PolicyList none;
  return mapping::run_placement(ex, mapping::RunInputs{m, trace, ah, cfg}, p, policies ? *policies : none);
}

}  // namespace nmpsim::firmware
