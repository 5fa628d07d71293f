// Flow fidelity: executes layer schedules event by event on analytical models of the same machine
// the cycle-level back end simulates (docs/MODEL.md "Flow fidelity").
//  - Each node has the processing element's two command queues (foreground, background), each
//    running one command at a time in issue order, and one DMA engine that serves DRAM jobs first come,
//    first served: a compute op takes start-up + max(FLOPs / peak, its DRAM job); a DRAM job takes the
//    first access + bytes / streaming bandwidth once the DMA reaches it.
//  - Transfers go on the network as soon as they are ready. Streams run like the PE's broadcast:
//    chunk by chunk read from DRAM, sent to the first node of the chain, forwarded by every node on
//    arrival and written into its DRAM; the last node acknowledges each chunk with a one-flit message;
//    the op is done at the last acknowledgement.
//  - The network is flow::FluidNetwork: every message in flight shares the links, injection and
//    ejection channels max-min fairly, with rates re-solved as flows start and finish; sessions that
//    repeat are replayed from a recording (flow/fluid_replay.h).
#pragma once

#include <deque>
#include <memory>
#include <queue>
#include <unordered_set>
#include <vector>

#include "nmpsim/flow/fluid_replay.h"
#include "nmpsim/mapping/executor.h"
#include "nmpsim/mapping/layer_runner.h"

namespace nmpsim::flow {

using mapping::compute_seconds;
using mapping::Executor;
using mapping::Fidelity;
using mapping::kForeground;
using mapping::LayerSchedule;
using mapping::Op;
using mapping::OpKind;
using mapping::OpRef;
using mapping::PhysicalNode;

class FlowExecutor : public Executor {
 public:
  explicit FlowExecutor(const AnalyticalHardware& hw);

  Fidelity fidelity() const override { return Fidelity::kFlow; }
  uint64_t execute(std::shared_ptr<LayerSchedule> s) override;
  void drain() override;
  void cancel(OpRef r) override;
  double now_s() const override { return now_; }
  std::vector<double> link_bytes() const override { return link_bytes_; }
  std::vector<double> node_flops() const override { return node_flops_; }
  std::vector<double> node_dram_bytes() const override { return node_dram_bytes_; }
  /// The network's sessions so far (session replay).
  const FluidNetwork::Stats& network_sessions() const { return net_.stats(); }

 private:
  enum class TimerKind : uint8_t { kCommandDone, kChunkRead, kChunkWritten, kStreamCheck };
  struct Timer {
    double t;
    uint64_t seq;
    TimerKind kind;
    int a;  // kCommandDone: node * kQueues + queue; kChunkRead: stream; kChunkWritten: stream
    bool operator>(const Timer& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  /// A stream op in progress (the PE's broadcast command).
  struct Stream {
    OpRef op;
    int src = 0, queue = 0;
    std::vector<int> chain;
    double bytes = 0, chunk = 0;
    int chunks = 0, read = 0, acked = 0;
    int unsent = 0;        ///< chunks on the way to the first node of the chain
    bool reading = false;  ///< a DRAM read of the next chunk is under way
    bool cancelled = false;
    bool live = false;
  };
  /// What a network message is, by cookie.
  struct Msg {
    enum Kind : uint8_t { kTransfer, kChunk, kAck } kind = kTransfer;
    OpRef op;        // kTransfer
    int stream = 0;  // kChunk, kAck
    int hop = 0;     // kChunk: index into the chain of the node it goes to
    double bytes = 0;
  };
  static constexpr int kQueues = 3;
  struct Node {
    // PE command queues: 0 foreground, 1 background, 2 the reducer (fused reductions)
    std::deque<OpRef> queue[3];
    bool busy[3] = {false, false, false};
    double dma_free = 0;  // when the DMA engine finishes its last job
  };

  void issue_ready();
  void issue(OpRef r);
  void start_next_command(int node, int queue);
  void command_done(int node, int queue);
  /// Submits a DRAM job of `bytes` to `node`'s DMA at time t; returns when it completes.
  double dma_job(int node, double t, double bytes);
  void timer(double t, TimerKind kind, int a);
  void send(int src, int dst, const Msg& m);
  void on_delivery(uint64_t cookie);
  void start_stream(OpRef r, int node, int queue);
  void chunk_read(int stream);
  void chunk_written(int stream);
  /// Starts reading the next chunk if the stream may (window, cancellation); finishes it when all is acknowledged.
  void stream_next(int stream);
  /// Processes the next instant at which anything happens; false if nothing is left.
  bool step();

  AnalyticalHardware hw_;
  FluidNetwork net_;
  double now_ = 0;
  uint64_t seq_ = 0;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  std::vector<Node> nodes_;
  std::vector<Stream> streams_;
  std::vector<int> free_streams_;
  std::unordered_set<uint64_t> cancelled_;  ///< cancelled stream ops that have not started
  std::vector<Msg> msgs_;
  std::vector<uint32_t> free_msgs_;
  std::vector<FluidNetwork::Delivery> delivered_;
  std::vector<double> link_bytes_, node_flops_, node_dram_bytes_;
};

/// The flow network's sessions (replayed, re-simulated, recorded) as `simulator.noc_sessions`.
void record_sessions(mapping::StrategyResult& r, const FlowExecutor& ex);

/// Flow fidelity: mapping::run_placement on a FlowExecutor, without runtime policies.
mapping::StrategyResult run_flow(const AnalyticalHardware& hw, const mapping::ModelSpec& m,
                                 const mapping::RoutingTrace& trace, const mapping::Placement& p,
                                 const mapping::RunConfig& cfg);

}  // namespace nmpsim::flow
