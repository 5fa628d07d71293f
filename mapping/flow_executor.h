// Flow fidelity: executes layer schedules on the analytical models, in waves.
//  - Foreground: every foreground op that is ready when a wave starts runs in it. Compute ops take
//    compute_seconds() and run one after another per node (in op order); transfers and stream hops of
//    the wave share the network as one concurrent set (NetworkModel::seconds). The wave ends when its
//    last op does; ops that become ready meanwhile start in the next wave. With phase barriers this is
//    exactly "a phase lasts as long as its slowest node / its busiest link", and a ring collective is
//    its steps in sequence.
//  - Background ops start as soon as they are ready and take the time they would take alone: the
//    link-load bound does not model their contention with the foreground (docs/MODEL.md).
#pragma once

#include <memory>
#include <queue>
#include <vector>

#include "mapping/executor.h"
#include "mapping/network_model.h"

namespace nmpsim::mapping {

class FlowExecutor : public Executor {
 public:
  FlowExecutor(const AnalyticalHardware& hw, std::unique_ptr<NetworkModel> network);
  /// With the link-load bound as the network model.
  explicit FlowExecutor(const AnalyticalHardware& hw);

  Fidelity fidelity() const override { return Fidelity::kFlow; }
  uint64_t execute(std::shared_ptr<LayerSchedule> s) override;
  void drain() override;
  double now_s() const override { return now_; }
  std::vector<double> link_bytes() const override { return link_bytes_; }
  std::vector<double> node_flops() const override { return node_flops_; }

 private:
  struct Event {
    double t;
    uint64_t seq;
    OpRef op;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  /// Moves the ready queue into `wave` (foreground) or starts it alone (background).
  void take_ready(std::vector<OpRef>& wave);
  /// Starts every op of `wave` at now_; returns how many completions were scheduled.
  int start_wave(std::vector<OpRef>& wave);
  void start_background(OpRef r);
  /// Appends the network messages an op puts on the mesh (a stream: one per chain hop) to `out`.
  void messages_of(OpRef r, std::vector<Message>& out) const;
  double stream_read_seconds(const Op& op) const;
  void schedule_completion(double t, OpRef r);
  void account(OpRef r);
  /// Pops the earliest completion; returns false if nothing is in flight.
  bool step();

  AnalyticalHardware hw_;
  std::unique_ptr<NetworkModel> net_;
  double now_ = 0;
  uint64_t seq_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  int wave_left_ = 0;  // foreground completions of the running wave still to come
  std::vector<double> link_bytes_, node_flops_;
  std::vector<Message> scratch_, wave_messages_;
  std::vector<double> node_busy_;
};

}  // namespace nmpsim::mapping
