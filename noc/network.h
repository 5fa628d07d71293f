// The cycle-level mesh network: routers, network interfaces (messages <-> packets <-> flits),
// links as a timing wheel, statistics, flit-conservation checks and a stall watchdog.
//
// Plain C++, deterministic, stepped one cycle at a time by its owner (noc::MeshModule in
// SystemC, or a test). Only routers that hold flits and interfaces that have flits to send do
// work in a cycle, and next_event_cycle() lets the owner skip cycles in which nothing happens.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "nmpsim/noc/flit.h"
#include "nmpsim/noc/noc_config.h"
#include "nmpsim/noc/pin_checks.h"
#include "nmpsim/noc/ring_queue.h"
#include "nmpsim/noc/router.h"
#include "nmpsim/noc/session_cache.h"

namespace nmpsim::noc {

inline constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

/// Reported when the last flit of a message reaches its destination's network interface.
struct Delivery {
  uint64_t message_id = 0;
  int src = 0;
  int dst = 0;
  uint64_t bytes = 0;
  uint64_t tag = 0;            ///< caller's cookie
  uint64_t create_cycle = 0;   ///< first cycle the source interface could inject it
  uint64_t deliver_cycle = 0;  ///< cycle its last flit was ejected
};

struct LatencySummary {
  uint64_t count = 0;
  double avg = 0.0;
  double p50 = 0.0;
  double p99 = 0.0;
  double max = 0.0;
  static LatencySummary of(std::vector<uint32_t> samples);  // by value: sorts a copy
};

struct LinkStat {
  int from = 0;
  int to = 0;
  int dir = 0;
  uint64_t flits = 0;
  double utilisation = 0.0;  ///< fraction of the link's capacity used over the window
};

struct RouterStat {
  int node = 0;
  double avg_buffered_flits = 0.0;
  int max_buffered_flits = 0;
};

/// Statistics over the measurement window [window_start, window_end).
struct NocStats {
  uint64_t window_cycles = 0;
  LatencySummary packet_latency_cycles;   ///< packets created in the window, creation -> tail ejected
  LatencySummary message_latency_cycles;  ///< messages created in the window
  uint64_t offered_flits = 0;             ///< flits of packets created in the window
  uint64_t accepted_flits = 0;            ///< flits ejected during the window
  uint64_t measured_packets_undelivered = 0;
  double offered_flits_per_node_cycle = 0.0;
  double accepted_flits_per_node_cycle = 0.0;
  std::vector<LinkStat> links;
  std::vector<RouterStat> routers;
};

class Network {
 public:
  explicit Network(const NocConfig& cfg);
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  const NocConfig& config() const { return cfg_; }
  const MeshGeometry& geometry() const { return geo_; }
  /// The flits of live packet `packet` (a flit's packet id), or 0 when no such packet is in flight.
  int packet_flits(uint32_t packet) const {
    return packet < packets_.size() ? static_cast<int>(packets_[packet].flits) : 0;
  }
  int nodes() const { return geo_.width * geo_.height; }

  /// Queues a message of `bytes` from src to dst, injectable from `cycle` on. Cut into packets of
  /// at most max_packet_flits flits; a message to itself is delivered at `cycle` without the NoC.
  /// Returns the message id. Throws std::out_of_range for a bad node id.
  uint64_t send(int src, int dst, uint64_t bytes, uint64_t cycle, uint64_t tag = 0);
  /// Like send(), but the caller fixes the packet size in flits (synthetic traffic).
  uint64_t send_flits(int src, int dst, uint32_t flits, uint64_t cycle, uint64_t tag = 0);
  void set_delivery_handler(std::function<void(const Delivery&)> h) { on_delivery_ = std::move(h); }

  /// Simulates cycle `cycle` (must be later than the previous step). Returns false once stalled.
  /// Equivalent to begin_cycle(cycle) followed by end_cycle().
  bool step(uint64_t cycle);

  // ---- Pin-level routers (noc::PinMesh). The router of an external node lives outside the
  // engine: flits and credits arriving for it are staged in pin_inputs(node) instead of entering
  // noc::Router, and its owner reports what it sends in the same cycle, between begin_cycle() and
  // end_cycle(). Link timing, network interfaces, statistics and checks stay here.
  struct PinInputs {
    Flit flit[kMaxPorts];
    bool has_flit[kMaxPorts] = {};
    int credit_vc[kMaxPorts] = {-1, -1, -1, -1, -1, -1, -1, -1};
    void clear() { *this = PinInputs{}; }
  };
  /// Marks `node`'s router as external; call before any traffic.
  void set_external_router(int node);
  bool external_router(int node) const { return !ext_.empty() && ext_[node].external; }
  /// Arrivals, network-interface injection and engine routers of `cycle`.
  void begin_cycle(uint64_t cycle);
  /// Stall watchdog for the cycle begun last. Returns false once stalled.
  bool end_cycle();
  /// This cycle's arrivals at an external router; the owner copies them to pins and clears them.
  PinInputs& pin_inputs(int node) { return ext_[node].in; }
  /// An external router sends flit `f` on output `port` in the current cycle.
  void pin_output_flit(int node, int port, const Flit& f);
  /// An external router frees a slot of input VC (port, vc) in the current cycle.
  void pin_output_credit(int node, int port, int vc);
  /// The next cycle after `cycle` in which anything can happen, or kNever when fully idle.
  uint64_t next_event_cycle(uint64_t cycle) const;
  /// True when no message is queued, in flight or awaiting local delivery.
  bool idle() const {
    return live_packets_ == 0 && local_pending_.empty() && replay_pending_ == 0 && !replay_local_delivery_;
  }

  /// Session replay (noc/session_cache.h, docs/MODEL.md "Session replay"): repeated sessions are
  /// replayed from a recording, with the same delivery cycles and counters as simulating them. Off
  /// by default; noc::MeshModule turns it on. Needs an owner that steps the cycles
  /// next_event_cycle() names (noc::MeshModule does). Turned off for good by a link observer,
  /// a measurement window or an external router, which need every flit moved.
  void set_session_replay(bool on);
  bool session_replay() const { return replay_on_; }
  struct ReplayCounters {
    uint64_t sessions = 0;  ///< sessions started while replay was on
    uint64_t replayed = 0;  ///< ... replayed to their end
    uint64_t diverged = 0;  ///< ... replayed, then re-simulated from their start when a send differed
    uint64_t recorded = 0;  ///< ... recorded
  };
  const ReplayCounters& replay_counters() const { return replay_counters_; }
  /// Makes the counters (flits per link, injected, ejected, traversals) exact now, between cycles.
  /// While a replayed session's recordings go on past this point (the run that recorded them sent
  /// more before the session ended), they hold no counters for it: the session so far is then
  /// re-simulated. Call before reading counters in the middle of a run (the owner stopped the clock).
  void settle_counters();

  // Measurement window: packets created in [start, end) are measured; flits ejected in it count
  // as accepted; link and router statistics restart at start (immediately if start is not in the
  // future, otherwise when the first cycle at or after start begins).
  void begin_measurement(uint64_t cycle);
  void end_measurement(uint64_t cycle);
  /// Statistics of the window; link and router figures need end_measurement() first.
  NocStats stats() const;

  // Conservation: every injected flit is ejected exactly once, at its destination, in order.
  uint64_t injected_flits() const { return injected_flits_; }
  uint64_t ejected_flits() const { return ejected_flits_; }
  uint64_t flits_in_flight() const { return injected_flits_ - ejected_flits_; }
  uint64_t flits_queued_at_sources() const;
  uint64_t delivered_messages() const { return delivered_messages_; }
  uint64_t sent_messages() const { return next_message_id_; }
  /// Empty when every check so far holds and the books balance; otherwise the first violation.
  std::string check_conservation() const;

  bool stalled() const { return stalled_; }
  const std::string& stall_report() const { return stall_report_; }
  uint64_t last_cycle() const { return cycle_; }
  /// Cycles actually evaluated (idle cycles skipped by the owner are not counted).
  uint64_t steps() const { return steps_; }

  /// The engine router of `node` (for an external node it only holds the output link timing).
  Router& router(int node) { return routers_[node]; }
  const Router& router(int node) const { return routers_[node]; }
  /// Hook for link observers (VCD, tests): called for every flit leaving a router on a mesh link.
  void set_link_observer(std::function<void(int from, int dir, const Flit&, uint64_t cycle)> f) {
    if (f) set_session_replay(false);
    link_observer_ = std::move(f);
  }
  /// Hop count of packet routes, summed over delivered flits (flit-hops on inter-router links).
  uint64_t flit_link_traversals() const { return flit_link_traversals_; }

 private:
  /// A flit arriving at a router input port (or, port kLocal with to_ni, at the node's NI).
  struct FlitEvent {
    Flit flit;
    uint32_t node;
    uint8_t port;
    uint8_t to_ni;
  };
  /// A credit arriving at a router output port (or, with to_ni, at the node's NI).
  struct CreditEvent {
    uint32_t node;
    uint8_t port;
    uint8_t vc;
    uint8_t to_ni;
  };
  struct PacketRec {
    uint32_t message = 0;
    uint32_t dst = 0;
    uint16_t flits = 0;
    uint16_t received = 0;
    bool measured = false;
    uint64_t create_cycle = 0;
  };
  struct MessageRec {
    uint64_t id = 0;
    int src = 0, dst = 0;
    uint64_t bytes = 0, tag = 0, create_cycle = 0;
    uint32_t packets_left = 0;
    uint32_t sess_index = 0;  // position among the sends of its session
    bool measured = false;
  };
  /// One injection (DMA) queue of a network interface: whole messages, packet by packet.
  struct NiQueue {
    RingQueue<uint32_t> packets;  // packet slots; the front one may be partly injected
    uint64_t flits = 0;           // flits queued and not yet injected
    int cur_vc = -1;              // VC of the packet being injected (held until its tail)
    uint16_t next_seq = 0;
  };
  struct Ni {
    std::vector<NiQueue> queues;
    // Per local port p and VC v, at p * vcs + v.
    int16_t credits[kMaxNiPorts * 8] = {};
    int8_t vc_owner[kMaxNiPorts * 8] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    int busy_queues = 0;                 // queues holding packets
    int rr[kMaxNiPorts] = {0, 1, 2, 3};  // per port: its queue offered the next flit first
    bool active = false;
    // Session replay, as noc::Router's pointers: bit p for port p's pointer; its value when first read.
    uint8_t rr_seen = 0, rr_read = 0, rr_start[kMaxNiPorts] = {};
  };
  struct RouterSink {
    Network* net;
    int node;
    // Called from Router::step's inner loop for every flit that leaves a router: inlined there.
    [[gnu::always_inline]] inline void on_flit(int out_port, const Flit& f);
    [[gnu::always_inline]] inline void on_credit(int in_port, int vc);
  };

  void schedule_flit(uint64_t cycle, const Flit& f, uint32_t node, uint8_t port, bool to_ni) {
    flit_wheel_[cycle & wheel_mask_].push_back(FlitEvent{f, node, port, static_cast<uint8_t>(to_ni)});
    ++wheel_events_;
  }
  void schedule_credit(uint64_t cycle, uint32_t node, uint8_t port, uint8_t vc, bool to_ni) {
    credit_wheel_[cycle & wheel_mask_].push_back(CreditEvent{node, port, vc, static_cast<uint8_t>(to_ni)});
    ++wheel_events_;
  }
  uint64_t enqueue(int src, int dst, uint64_t bytes, uint32_t flits, uint32_t packet_flits, uint64_t cycle,
                   uint64_t tag);
  /// Queues message `id` (the engine part of enqueue); `key` is its session send when recording.
  void admit(uint64_t id, int src, int dst, uint64_t bytes, uint32_t flits, uint32_t packet_flits, uint64_t cycle,
             uint64_t tag, const SessionSend* key);
  // Phases of begin_cycle(): what arrives (flits, credits, local messages), then injection and routers.
  void enter_cycle(uint64_t cycle);  // checks, cycle_, statistics window
  /// The engine's cycle; `admit_held_sends`: a re-simulation admits the sends held back after arrivals.
  void run_cycle(uint64_t cycle, bool admit_held_sends);
  void arrive(uint64_t cycle);
  void advance(uint64_t cycle);
  // ---- Session replay (network_replay.cpp).
  struct ReplaySend {
    SessionSend key;
    uint64_t id = 0, tag = 0, cycle = 0;
  };
  bool quiescent() const { return !in_session_ && live_packets_ == 0 && local_pending_.empty() && wheel_events_ == 0; }
  SessionSend session_send(int src, int dst, uint64_t bytes, uint32_t flits, uint32_t packet_flits,
                           uint64_t cycle) const;
  void start_session(uint64_t cycle);
  /// At the session's first send: replay the recordings that start the same way, or record.
  void pick_recording(const SessionSend& first);
  bool preconditions_hold(const Session& s) const;
  void begin_recording();
  void end_session();
  /// A send while replaying: true when it was taken (matched, or held until the cycle ends).
  bool replay_send(const ReplaySend& r);
  template <class Keep>
  void filter_candidates(Keep keep);
  /// begin_cycle() while replaying: false when the replay failed and the engine must run the cycle.
  bool replay_cycle(uint64_t cycle);
  void replay_delivery(const Session& ref, size_t j, uint64_t cycle);
  /// Applies the counters of a candidate that delivered its last message where the session is now.
  void apply_if_complete();
  void apply_session_stats(const Session& s);
  void unapply_session_stats();
  void finish_replay();
  void clear_replay();
  /// Re-simulates the session so far on the engine (which a replay leaves untouched since the
  /// session started); `partial`: the current cycle is half done (its deliveries were replayed).
  void materialize(bool partial);
  void resim_admit_until(uint32_t step, bool in_step);
  void resim_admit_rest();
  void resim_delivered(const MessageRec& m);
  void handle_flit(const FlitEvent& ev);
  void handle_credit(const CreditEvent& ev);
  void inject(int node);
  inline void inject_port(Ni& ni, int node, int port);
  /// Earliest creation cycle of a packet at the front of one of the NI's queues.
  uint64_t earliest_front(const Ni& ni) const;
  void eject(int node, const Flit& f);
  void finish_message(uint32_t slot, uint64_t cycle);
  void activate_router(int node);
  // Per-router statistics, for engine and external routers alike.
  int buffered_at(int node) const;
  uint64_t flits_out_at(int node, int dir) const;
  double occupancy_at(int node, uint64_t cycle) const;
  int max_buffered_at(int node) const;
  void reset_router_stats(uint64_t cycle);
  struct ExternalRouter {
    bool external = false;
    PinInputs in;
    int buffered = 0;
    int max_buffered = 0;
    double occ_area = 0.0;
    uint64_t occ_last = 0;
    uint64_t flits_out[kMaxPorts] = {};
    void note(uint64_t cycle) {
      occ_area += static_cast<double>(buffered) * static_cast<double>(cycle - occ_last);
      occ_last = cycle;
    }
  };
  void violation(const std::string& what);
  void fire_watchdog();

  NocConfig cfg_;
  MeshGeometry geo_;
  std::vector<Router> routers_;
  // Per (node, mesh port), index node * 4 + port: the neighbour (-1 at the mesh edge), the cycles
  // from a flit leaving on that output to its arrival there (latency + serialisation), and the
  // cycles a credit freed at that input takes back upstream (the upstream link's latency). Built in
  // the constructor from the routers' output links, which nothing changes afterwards.
  std::vector<int32_t> nb_;
  std::vector<uint32_t> flit_cycles_;
  std::vector<uint32_t> credit_cycles_;
  std::vector<Ni> nis_;
  int port_queues_[kMaxNiPorts] = {};  // queues of each NI port (q = port, port + ni_ports, ...)
  // Timing wheels (slot = cycle & wheel_mask_): flits on links, and credits on their return wires.
  std::vector<std::vector<FlitEvent>> flit_wheel_;
  std::vector<std::vector<CreditEvent>> credit_wheel_;
  uint64_t wheel_mask_ = 0;
  uint64_t wheel_events_ = 0;
  std::vector<int> active_routers_;
  std::vector<uint8_t> router_active_;
  std::vector<ExternalRouter> ext_;  // empty unless some router is external
  uint64_t ext_buffered_ = 0;        // flits inside external routers
  std::vector<int> active_nis_;
  std::vector<PacketRec> packets_;
  std::vector<uint32_t> free_packets_;
  std::vector<MessageRec> messages_;
  std::vector<uint32_t> free_messages_;
  std::vector<uint32_t> local_pending_;  // message slots sent to themselves
  uint64_t live_packets_ = 0;
  uint64_t next_message_id_ = 0;
  uint64_t delivered_messages_ = 0;

  uint64_t cycle_ = 0;
  uint64_t steps_ = 0;
  bool started_ = false;
  uint64_t injected_flits_ = 0, ejected_flits_ = 0;
  uint64_t flit_link_traversals_ = 0;
  uint64_t last_progress_ = 0;
  bool stalled_ = false;
  std::string stall_report_;
  PinChecker pin_checks_;  // router-agnostic checks of the external routers
  std::string first_violation_;
  uint64_t violations_ = 0;

  // Measurement.
  bool measuring_ = false;
  bool stats_reset_pending_ = false;
  uint64_t window_start_ = 0, window_end_ = kNever;
  uint64_t offered_flits_ = 0, accepted_flits_ = 0;
  uint64_t measured_packets_ = 0, measured_packets_done_ = 0;
  std::vector<uint32_t> packet_latencies_;
  std::vector<uint32_t> message_latencies_;
  std::vector<LinkStat> link_snapshot_;
  std::vector<RouterStat> router_snapshot_;

  // Session replay.
  bool replay_on_ = false;
  SessionCache cache_;
  ReplayCounters replay_counters_;
  bool in_session_ = false, in_step_ = false;
  uint64_t sess_start_ = 0;  // the first send's cycle
  uint32_t sess_steps_ = 0, sess_delivered_ = 0, sess_sends_ = 0;
  uint64_t sess_cycle0_ = 0, sess_steps0_ = 0;  // cycle_ and steps_ when it started
  bool sess_started0_ = false;
  std::unique_ptr<Session> rec_;       // the session being recorded
  std::vector<RouterDelta> rec_base_;  // counters of every router at its start
  uint64_t rec_injected0_ = 0, rec_ejected0_ = 0, rec_traversals0_ = 0;
  bool replaying_ = false;
  std::vector<Session*> cands_;       // recordings that agree with the session so far
  std::vector<ReplaySend> rsends_;    // this session's sends
  std::vector<uint64_t> rsteps_;      // ... cycles evaluated
  std::vector<uint64_t> rdelivered_;  // ... message ids delivered, in order
  uint32_t replay_pending_ = 0;
  bool replay_local_delivery_ = false;
  bool diverge_pending_ = false;
  const Session* applied_ = nullptr;  // whose counters were added at its last delivery
  std::vector<int> applied_peaks_;
  bool resim_ = false;
  size_t resim_next_ = 0, resim_delivered_ = 0;

  std::function<void(const Delivery&)> on_delivery_;
  std::function<void(int, int, const Flit&, uint64_t)> link_observer_;
};

// The router's sink, inline: Router::step calls it for every flit that leaves a router.
inline void Network::RouterSink::on_flit(int out_port, const Flit& f) {
  Network& n = *net;
  const uint64_t c = n.cycle_;
  n.last_progress_ = c;
  if (out_port >= kLocal) {
    n.schedule_flit(c + 1, f, static_cast<uint32_t>(node), static_cast<uint8_t>(out_port), true);
    return;
  }
  const size_t k = static_cast<size_t>(node) * kNumMeshDirs + static_cast<size_t>(out_port);
  ++n.flit_link_traversals_;
  if (n.link_observer_) n.link_observer_(node, out_port, f, c);
  n.schedule_flit(c + n.flit_cycles_[k], f, static_cast<uint32_t>(n.nb_[k]),
                  static_cast<uint8_t>(opposite_port(out_port)), false);
}

inline void Network::RouterSink::on_credit(int in_port, int vc) {
  Network& n = *net;
  const uint64_t c = n.cycle_;
  if (in_port >= kLocal) {  // to the network interface's credit counter of that port's VC
    const int ni_vc = (in_port - kLocal) * n.cfg_.vcs + vc;
    n.schedule_credit(c + 1, static_cast<uint32_t>(node), kLocal, static_cast<uint8_t>(ni_vc), true);
    return;
  }
  // Credits travel back on the reverse wire of the same link, with its latency.
  const size_t k = static_cast<size_t>(node) * kNumMeshDirs + static_cast<size_t>(in_port);
  n.schedule_credit(c + n.credit_cycles_[k], static_cast<uint32_t>(n.nb_[k]),
                    static_cast<uint8_t>(opposite_port(in_port)), static_cast<uint8_t>(vc), false);
}

}  // namespace nmpsim::noc
