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
#include <string>
#include <vector>

#include "noc/flit.h"
#include "noc/noc_config.h"
#include "noc/pin_checks.h"
#include "noc/ring_queue.h"
#include "noc/router.h"

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
    Flit flit[kNumPorts];
    bool has_flit[kNumPorts] = {false, false, false, false, false};
    int credit_vc[kNumPorts] = {-1, -1, -1, -1, -1};
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
  bool idle() const { return live_packets_ == 0 && local_pending_.empty(); }

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
    int16_t credits[8] = {};
    int8_t vc_owner[8] = {-1, -1, -1, -1, -1, -1, -1, -1};  // queue injecting a packet on the VC
    int busy_queues = 0;                                    // queues holding packets
    int rr = 0;                                             // queue offered the next flit first
    bool active = false;
  };
  struct RouterSink {
    Network* net;
    int node;
    void on_flit(int out_port, const Flit& f);
    void on_credit(int in_port, int vc);
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
  void handle_flit(const FlitEvent& ev);
  void handle_credit(const CreditEvent& ev);
  void inject(int node);
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
    uint64_t flits_out[kNumPorts] = {};
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

  std::function<void(const Delivery&)> on_delivery_;
  std::function<void(int, int, const Flit&, uint64_t)> link_observer_;
};

}  // namespace nmpsim::noc
