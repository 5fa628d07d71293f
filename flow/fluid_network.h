// The network of flow fidelity: an event-driven fluid model of the XY-routed mesh.
//
// Messages are queued at their source's network interface, which has `ni_queues` injection queues
// like the cycle-level NI (noc/network.h): a message goes whole to the queue with the fewest bytes
// still to send, each queue sends its messages one after another, and the front messages of all
// queues are in flight together. Every message in flight is a fluid flow over its resources: the
// source's injection channel, each directed link of its XY path and the destination's ejection
// channel. Flows share every resource by weighted max-min fairness (progressive filling, as
// SimGrid's LMM solver does for its network model; the weights stand for the routers' round-robin
// among input ports), and the rates are re-solved whenever a flow starts, finishes or releases its
// queue. A flow releases its queue once the rest of the message fits in the VC buffers along its
// path, so the next message starts while the tail drains, as in a wormhole network. A message is
// delivered its path's zero-load latency after its last byte leaves the source. A message counts on
// its queue's load until its last byte has left. A message that fits in one VC buffer is no fluid
// flow: it crosses its path hop by hop, waiting at each resource for the messages ahead of it there
// (virtual cut-through), so that short messages contend only where and when they meet.
//
// FluidEngine works in session time: mapping::FluidNetwork (flow/fluid_replay.h) starts it from
// reset() at every send to an idle network, so a session's results depend only on its own calls, and
// replays the sessions that repeat.
//
// Bytes are counted on the wire as the cycle-level NoC moves them: ceil(bytes / flit) flits of
// `flit_bytes` each (at least one), so both fidelities agree exactly on link bytes. Mesh links that
// more than one flow crosses carry only `flow_link_efficiency` of their bandwidth: the wormhole and
// allocator losses the cycle-level NoC shows under contention (docs/MODEL.md "Flow-level network").
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <queue>
#include <vector>

#include "nmpsim/flow/flow_model.h"

namespace nmpsim::flow {

using mapping::LinkParams;
using mapping::walk_xy;

class FluidEngine {
 public:
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  struct Delivery {
    uint64_t cookie = 0;
    double time_s = 0;
  };

  explicit FluidEngine(const AnalyticalHardware& hw);
  /// Back to the state of a new engine (time 0, nothing queued or in flight, no lazy-solve history).
  /// Only between sessions: every flow and delivery is dropped.
  void reset();

  /// Queues `bytes` from src to dst at time `now_s` (not before the last advance). A message to
  /// itself is delivered at once, without the network. `cookie` comes back with the delivery.
  void send(double now_s, int src, int dst, double bytes, uint64_t cookie);
  /// Time of the next thing that happens inside the network (a delivery, or a flow finishing and
  /// its queue's next message starting); kNever when idle.
  double next_event_s();
  /// Advances to `t_s` (at most next_event_s()) and appends the messages delivered by then.
  void advance(double t_s, std::vector<Delivery>& delivered);
  bool idle() const { return in_flight_ == 0; }
  int nodes() const { return nodes_; }

  /// Wire bytes of a message: whole flits, at least one.
  double wire_bytes(double bytes) const;
  /// Adds a message's wire bytes to every directed link of its XY path, [node * 4 + dir].
  void add_link_bytes(int src, int dst, double bytes, std::vector<double>& link_bytes) const;
  /// Zero-load latency from the last byte leaving src to its delivery at dst, seconds.
  double latency_s(int src, int dst) const;
  /// Full max-min solves so far (for the performance report).
  uint64_t solves() const { return solves_; }
  /// How many resources the filling's rounds look at, at least (default 128; 32 to 512 all within
  /// 7% on the 32x32 benchmark). Results do not depend on it: tests compare a small one with one
  /// that covers every resource, which is the plain scan of progressive filling.
  void set_near_size(size_t n) { near_size_ = std::max<size_t>(1, n); }

 private:
  struct Message {
    int src = 0, dst = 0;
    double wire_bytes = 0;
    uint64_t cookie = 0;
  };
  struct Queue {
    std::deque<Message> pending;  // not started yet
    double bytes_left = 0;        // wire bytes of its messages not yet sent to the last byte
    int attached = -1;            // the flow being injected from this queue, or kHopHolds while a hop
                                  // message's last flit has not left the NI port yet
  };
  struct Flow {
    Message m;
    int queue = -1;        // while attached: the queue it holds
    int origin = -1;       // the queue it came from (its bytes count there until it finishes)
    double remaining = 0;  // wire bytes still to send at t_ref
    double t_ref = 0;
    double rate = 0;
    double release_at = 0;                  // remaining bytes at which the rest fits in the path's buffers
    uint32_t path_begin = 0, path_len = 0;  // into paths_
  };

  /// Appends the resources of m's path from NI port `port` to `out`; returns how many.
  uint32_t append_path(const Message& m, int port, std::vector<int32_t>& out) const;
  /// Moves the paths still in use to the front of a fresh buffer: `each_live(keep)` calls
  /// keep(path_begin, path_len) for every path in use, and keep updates its path_begin.
  template <class EachLive>
  static void repack(std::vector<int32_t>& buf, size_t live_len, EachLive each_live) {
    std::vector<int32_t> kept;
    kept.reserve(live_len * 2);
    each_live([&](uint32_t& begin, uint32_t len) {
      const uint32_t at = static_cast<uint32_t>(kept.size());
      kept.insert(kept.end(), buf.begin() + begin, buf.begin() + begin + len);
      begin = at;
    });
    buf.swap(kept);
  }
  /// Starts the queue's pending messages until one holds it.
  void start_next(int queue);
  void start_one(int queue);
  /// The time flow f finishes or, while attached, releases its queue.
  double event_time(const Flow& f) const;
  double left_at(const Flow& f, double t) const { return f.remaining - f.rate * (t - f.t_ref); }
  void push_event(int id);
  void remove_active(int id);
  /// Releases the queue of, or finishes, the flow whose event is due by t_s.
  void handle_event(int id, double t_s);
  void compact_paths();
  /// Bytes/s resource r carries for `flows` flows: a contended one loses its efficiency share.
  double capacity_for(size_t r, int flows) const { return capacity_[r] * (flows > 1 ? efficiency_[r] : 1.0); }
  void solve();  // index_flows, set_capacities, set_weights, fill
  /// Between full solves: a new flow's provisional rate, and the bookkeeping of a change.
  void provisional_rate(Flow& f);
  void note_change();
  void release_rate(const Flow& f);
  void progress(double t_s);
  struct Event {
    double t;
    int flow;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : flow > o.flow; }
  };
  /// One entry per flow in flight: the time it finishes or releases its queue (rebuilt by a solve).
  std::vector<Event> events_;
  std::vector<int> active_pos_;  // index in active_ by flow id

  AnalyticalHardware hw_;
  int nodes_ = 0;
  int ni_queues_ = 1;
  int ni_ports_ = 1;  // per node, ni_ports_ inject and ni_ports_ eject resources
  double flit_bytes_ = 1;
  size_t inject_base_ = 0, eject_base_ = 0;  // resource of node v's port p: base + v * ni_ports_ + p
  std::vector<double> capacity_;             // bytes/s: links [node*4+dir], then inject, then eject ports
  std::vector<double> efficiency_;           // share of capacity_ left when flows contend (1 off the mesh)
  std::vector<double> hop_latency_;          // seconds per link [node*4+dir]
  double end_latency_s_ = 0;                 // latency outside the links: NI, routers' pipelines
  double flow_link_efficiency_ = 0;          // from the hardware (constructor)
  int vcs_ = 0;
  double buffer_bytes_ = 0;  // one VC buffer of one router

  std::vector<Queue> queues_;  // [node * ni_queues + q]
  std::vector<Flow> flows_;
  std::vector<int> active_;      // flow ids in flight
  std::vector<int> free_flows_;  // recycled flow ids
  std::vector<int32_t> paths_;   // resource ids, flow by flow (compacted when it grows)
  struct Pending {
    double t;
    uint64_t seq;
    uint64_t cookie;
    bool operator>(const Pending& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> deliveries_;
  uint64_t delivery_seq_ = 0;
  double now_ = 0;
  uint64_t in_flight_ = 0;  // messages queued, flowing or awaiting delivery
  bool dirty_ = false;      // a full solve is due
  // Lazy re-solving (docs/MODEL.md "Flow-level network"): a full solve once the flows started or
  // finished since the last one reach flow_resolve_fraction of the flows then in flight; in between a
  // finished flow's bandwidth stays idle and a new flow takes, on each resource of its path, the
  // larger of the residual and a fair share.
  double flow_resolve_fraction_ = 0;
  uint64_t changes_ = 0, change_limit_ = 1, solves_ = 0;
  std::vector<double> residual_;   // bytes/s by resource id, under the current rates
  std::vector<int> crossing_now_;  // flows in flight by resource id
  size_t live_path_len_ = 0;       // path entries of flows in flight
  std::vector<int> restart_;       // queues whose front message finished

  // Solver scratch: local_ by resource id; the rest by local resource index or by active flow.
  std::vector<int> local_, glob_, lpath_, lpath_begin_, crossing_, list_begin_, list_fill_, list_, unfrozen_, live_;
  std::vector<double> cap_, left_, share_, wsum_, weight_;
  /// The solve's steps: local numbering of the resources in use, their capacities for this set of
  /// flows, the flows' weights, weighted progressive filling.
  void index_flows();
  void set_capacities();
  void set_weights();
  void fill();
  /// Fixes flow fi's rate at `level` x its weight and takes it off its resources.
  void freeze(size_t fi, double level);
  std::vector<char> frozen_;
  /// fill's resources for the next rounds: those of live_ whose share is at most the returned
  /// threshold, plus a rounding slack of 2e-12 (every one of them when few are left); saturated ones
  /// leave live_.
  double choose_near();
  std::vector<int> near_;
  std::vector<double> scratch_;
  size_t near_size_ = 128;

  // Messages that fit in one VC buffer cross the mesh hop by hop (flow/fluid_hops.cpp): at each
  // resource of their path they wait for the messages ahead of them there, are served at its
  // bandwidth (shared with the fluid flows crossing it), and their head moves on after the hop's
  // latency (virtual cut-through; docs/MODEL.md "Flow-level network").
  static constexpr int kHopHolds = std::numeric_limits<int>::max();  // Queue::attached
  struct HopMessage {
    Message m;
    int queue = -1;                         // its NI queue, held until its last flit has left the port
    uint32_t path_begin = 0, path_len = 0;  // into hop_paths_
    uint32_t at = 0;                        // the resource its head reaches at its next event
    double end_prev = 0;                    // its last flit left the previous resource
    bool live = false;                      // in flight
  };
  /// The head of hop message `msg` reaching its next resource or, with msg -1, the last flit of a hop
  /// message of `wire_bytes` leaving the port of NI queue `queue`.
  struct HopEvent {
    double t;
    uint64_t seq;
    int msg, queue;
    double wire_bytes;
    bool operator>(const HopEvent& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  bool hop_message(const Message& m) const { return m.wire_bytes <= hop_bytes_; }
  void start_hops(const Message& m, int queue, int port);
  /// The head of hop message `id` reaches its next resource at t.
  void hop(int id, double t);
  void ni_done(int queue, double wire_bytes);
  void compact_hop_paths();
  void advance_hops(double t_s);
  void reset_hops();
  double hop_bytes_ = 0;  // wire bytes up to which a message goes hop by hop
  std::vector<HopMessage> hop_msgs_;
  std::vector<int> free_hops_;
  std::vector<int32_t> hop_paths_;
  std::priority_queue<HopEvent, std::vector<HopEvent>, std::greater<HopEvent>> hop_events_;
  uint64_t hop_seq_ = 0;
  size_t live_hop_path_len_ = 0;  // hop_paths_ entries of hop messages in flight
  std::vector<double> free_at_;   // by resource id: when the last hop message there has passed
  // By resource id: when the last fluid flow crossing it finishes at its current rate (set for every
  // flow by a solve, raised by a new flow's provisional rate; a finished flow's time is already past).
  std::vector<double> fluid_done_;
  void note_fluid_done(const Flow& f);
  // Fluid flows in flight by resource and the router input they enter it from, [r * input_slots_ +
  // slot], and how many inputs feed each resource: a router serves its inputs round robin.
  size_t input_slots_ = 0;
  std::vector<int> input_flows_, busy_inputs_;
  size_t input_slot(int32_t prev) const {
    const size_t p = static_cast<size_t>(prev);
    return p < inject_base_ ? p % 4 : 4 + (p - inject_base_) % static_cast<size_t>(ni_ports_);
  }
  void count_inputs(const Flow& f, int delta);
};

}  // namespace nmpsim::flow
