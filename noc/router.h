// Input-buffered wormhole router: four mesh ports and 1 to 4 local (network-interface) ports, V virtual
// channels per input port, XY routing, round-robin VC and switch allocation, credit-based flow control.
// A flit that arrived on mesh port i and is for this node leaves on local port kLocal +
// base::eject_port(i, ni_ports).
//
// The router is a plain cycle-level state machine. Once per cycle the owner calls
//   accept_flit()/accept_credit() for everything arriving this cycle, then step(cycle, sink);
// step() reports departing flits (sink.on_flit) and freed input slots (sink.on_credit).
// Every effect of step() lands in a later cycle, so routers can be stepped in any order.
//
// Pipeline (docs/MODEL.md "Router"): a flit written into an input buffer in cycle a may win
// the switch in cycle c >= a + router_delay - 1. Within one cycle: route compute for new heads,
// VC allocation (per output port, round-robin over requesting input VCs, lowest free output VC),
// then a separable input-first switch allocation (round-robin per input port over its ready VCs,
// then round-robin per output port over requesting inputs). A flit is ready for the switch only
// if its output VC has a credit and the output link is free (serialisation of slow links).
// Each stage is a private member function (route_compute, vc_allocate, switch_allocate_inputs,
// switch_allocate_output, switch_traverse, consume_credit); step() calls them in that order. They and
// step() are defined inline in noc/router_stages.h, included at the end of this header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nmpsim/noc/bits.h"
#include "nmpsim/noc/flit.h"
#include "nmpsim/noc/noc_config.h"

namespace nmpsim::noc {

/// Fixed-point cycles (16 fractional bits) used for link serialisation.
inline constexpr int kCycleFracBits = 16;
inline constexpr uint64_t kCycleOne = uint64_t{1} << kCycleFracBits;

/// Timing of an output port's link as the router sees it.
struct OutputLinkTiming {
  uint64_t cycles_per_flit_q = kCycleOne;  ///< fixed-point cycles per flit (>= 1 cycle)
  uint32_t serialise_cycles = 1;           ///< ceil(cycles per flit): extra delay of a flit on the wire
  uint32_t latency_cycles = 1;             ///< wire latency
  static OutputLinkTiming from(const LinkSpec& spec);
};

class Router {
 public:
  Router(int node, const MeshGeometry& geo, int vcs, int buffer_flits, int router_delay_cycles, int ni_ports = 1);
  /// Ports: kNumMeshDirs mesh ports and ni_ports local ports (kLocal ...).
  int ports() const { return ports_; }

  void set_output_link(int port, const OutputLinkTiming& t) { out_link_[port] = t; }
  const OutputLinkTiming& output_link(int port) const { return out_link_[port]; }

  /// A flit arrives in input buffer (port, flit.vc) in `cycle`. Returns false on buffer overflow
  /// (a credit-protocol violation, which the network reports).
  bool accept_flit(int port, Flit flit, uint64_t cycle);
  /// A credit for output VC `vc` of `port` returns from downstream.
  void accept_credit(int port, int vc) { ++out_credits_[port * vcs_ + vc]; }

  /// One cycle of allocation and switch traversal. Sink needs
  ///   void on_flit(int out_port, const Flit& f);  void on_credit(int in_port, int vc);
  template <class Sink>
  void step(uint64_t cycle, Sink& sink);

  int node() const { return node_; }
  int buffered_flits() const { return buffered_; }
  uint64_t flits_out(int port) const { return flits_out_[port]; }
  /// Time-integrated buffer occupancy (flit-cycles) since the last stats reset, up to `cycle`.
  double occupancy_flit_cycles(uint64_t cycle) const {
    return occ_area_ + static_cast<double>(buffered_) * static_cast<double>(cycle - occ_last_);
  }
  int max_buffered_flits() const { return max_buffered_ > peak_ ? max_buffered_ : peak_; }
  void reset_stats(uint64_t cycle);
  /// Test / fault-injection hook: overwrite the credit count of an output VC.
  void debug_set_credits(int port, int vc, int credits) { out_credits_[port * vcs_ + vc] = credits; }
  int credits(int port, int vc) const { return out_credits_[port * vcs_ + vc]; }
  /// One line per non-empty input VC: what it holds and what it waits for.
  std::string describe_state(uint64_t cycle) const;

  // ---- Session replay (noc/session_cache.h). The round-robin pointers are the only router state
  // that outlives a quiescent network (empty buffers, every credit home). Pointer k is va_rr_[k]
  // (k < 8), in_rr_[k - 8] (k < 16) or out_rr_[k - 16]. From begin_session() on, the router notes
  // which pointers an allocation read before writing them (only arbitrations with more than one
  // requester), with the values that would have made the same picks, and which it wrote.
  static constexpr int kRrPointers = 3 * kMaxPorts;
  void begin_session();
  uint32_t rr_read_mask() const { return rr_read_; }
  uint32_t rr_written_mask() const { return rr_written_; }
  /// Values of pointer k (bit v: value v) that give every pick made with it before it was written.
  uint64_t rr_allowed(int k) const { return rr_allowed_[k]; }
  int rr_value(int k) const { return const_cast<Router*>(this)->rr_ref(k); }
  void set_rr_value(int k, int v) { rr_ref(k) = v; }
  /// Most flits buffered at once since begin_session().
  int session_peak() const { return peak_; }
  /// Raw occupancy integral (flit-cycles), exact while the router is empty.
  double occupancy_area() const { return occ_area_; }
  /// Adds a replayed session's effect on the statistics (the router is empty before and after).
  void add_session_stats(const uint64_t* flits_out, double area, int peak);
  /// Takes them back (a replay that turned out different); `old_peak` is session_peak() before.
  void sub_session_stats(const uint64_t* flits_out, double area, int old_peak);

 private:
  struct InputVc {
    uint64_t front_ready = 0;  // the front flit's ready_cycle (kept here so allocation reads no buffer)
    uint32_t front_dst = 0;    // the front flit's destination
    uint16_t head = 0;         // ring index of the front flit
    uint16_t count = 0;        // flits buffered
    int8_t out_port = -1;
    int8_t out_vc = -1;
  };
  int ivc_index(int port, int vc) const { return port * vcs_ + vc; }

  // ---- Pipeline stages of step(), in the order it calls them (defined in noc/router_stages.h).
  // Bit masks over input VCs carry the requests from one stage to the next.
  /// Route compute: for every non-empty input VC whose front flit has cleared the pipeline, the output
  /// port of a new head (XY; writes in_[].out_port). Reads nonempty_ and in_. Marks in `ready` the VCs
  /// that hold an output VC (ejection takes VC 0 at once, writing in_[].out_vc) and adds the others to
  /// va_req[output port]. Returns whether any VC requests VC allocation.
  bool route_compute(uint64_t cycle, uint64_t (&va_req)[kNumMeshDirs], uint64_t& ready);
  /// VC allocation: per output port, round-robin (va_rr_) over the requesting input VCs, each winner
  /// granted the lowest free output VC (out_busy_) until none is left. Writes in_[].out_vc, out_busy_,
  /// va_rr_ and `ready`.
  void vc_allocate(const uint64_t (&va_req)[kNumMeshDirs], uint64_t& ready);
  /// Switch allocation, input stage: per input port with `ready` VCs, the first VC round-robin from
  /// in_rr_ whose output link is free at now_q (out_next_free_q_) and whose output VC has a credit
  /// (out_credits_; ejection needs none). Writes in_pick[port] and out_req[output] (bit per input
  /// port); returns the output ports requested (bit per port). Reads the pointers, never writes them.
  unsigned switch_allocate_inputs(uint64_t now_q, uint64_t ready, int (&in_pick)[kMaxPorts],
                                  uint8_t (&out_req)[kMaxPorts]);
  /// Switch allocation, output stage for output o: one of the requesting input ports (bit mask `req`),
  /// round-robin from out_rr_[o]. Moves the winner's pointers on: out_rr_[o] past the input port,
  /// in_rr_[input] past in_pick[input]. Returns the input port.
  int switch_allocate_output(int o, unsigned req, const int (&in_pick)[kMaxPorts]);
  /// Switch and link traversal of the front flit of input VC ivc to output o in the cycle of now_q:
  /// pops it from buf_ (in_[ivc], nonempty_), frees the input VC after a tail (in_[ivc].out_port,
  /// out_vc), occupies the output link (out_next_free_q_) and counts the flit (buffered_, flits_out_).
  /// Returns the flit with its output VC in f.vc.
  Flit switch_traverse(int ivc, int o, uint64_t now_q);
  /// Credits of a departing flit f on output o: uses one credit of its output VC f.vc (out_credits_)
  /// and frees that VC after a tail (out_busy_). Ejection has neither. (The input slot's credit goes
  /// upstream through sink.on_credit in step().)
  void consume_credit(int o, const Flit& f);
  void note_occupancy(uint64_t cycle) {
    occ_area_ += static_cast<double>(buffered_) * static_cast<double>(cycle - occ_last_);
    occ_last_ = cycle;
  }

  int node_;
  MeshGeometry geo_;
  int x_, y_;
  int vcs_, depth_, router_delay_;
  int ni_ports_, ports_;
  int n_ivc_;
  std::vector<Flit> buf_;             // [ivc][depth] rings
  std::vector<InputVc> in_;           // [port][vc]
  std::vector<int16_t> out_credits_;  // [port][vc], Local unused
  uint8_t out_busy_[kMaxPorts] = {};  // bit v set: output VC v holds a packet
  OutputLinkTiming out_link_[kMaxPorts];
  uint64_t out_next_free_q_[kMaxPorts] = {};
  uint64_t nonempty_ = 0;     // bit per ivc
  uint8_t port_of_[64] = {};  // input port of each ivc
  int va_rr_[kMaxPorts] = {};
  int in_rr_[kMaxPorts] = {};
  int out_rr_[kMaxPorts] = {};
  int buffered_ = 0;
  int max_buffered_ = 0;  // before the current session; peak_ is the session's own
  int peak_ = 0;
  uint32_t rr_written_ = 0, rr_read_ = 0;
  uint64_t rr_allowed_[kRrPointers] = {};
  void rr_read(int k, uint64_t requesters, int v, int n) {
    if (rr_written_ >> k & 1) return;
    const uint64_t same = same_pick_starts(requesters, v, n);
    if (rr_read_ >> k & 1) {
      rr_allowed_[k] &= same;
    } else {
      rr_read_ |= 1u << k;
      rr_allowed_[k] = same;
    }
  }
  int& rr_ref(int k);  // pointer k, as numbered above
  void rr_wrote(int k) { rr_written_ |= 1u << k; }
  uint64_t flits_out_[kMaxPorts] = {};
  double occ_area_ = 0.0;
  uint64_t occ_last_ = 0;
};

}  // namespace nmpsim::noc

// step() and its stages, defined inline.
#include "nmpsim/noc/router_stages.h"  // IWYU pragma: export
