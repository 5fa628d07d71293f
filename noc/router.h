// Input-buffered wormhole router: 5 ports, V virtual channels per input port, XY routing,
// round-robin VC and switch allocation, credit-based flow control.
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
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "noc/bits.h"
#include "noc/flit.h"
#include "noc/noc_config.h"

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
  Router(int node, const MeshGeometry& geo, int vcs, int buffer_flits, int router_delay_cycles);

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
  // (k < 5), in_rr_[k - 5] (k < 10) or out_rr_[k - 10]. From begin_session() on, the router notes
  // which pointers an allocation read before writing them (only arbitrations with more than one
  // requester), with the values that would have made the same picks, and which it wrote.
  static constexpr int kRrPointers = 3 * kNumPorts;
  void begin_session();
  uint16_t rr_read_mask() const { return rr_read_; }
  uint16_t rr_written_mask() const { return rr_written_; }
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
  void note_occupancy(uint64_t cycle) {
    occ_area_ += static_cast<double>(buffered_) * static_cast<double>(cycle - occ_last_);
    occ_last_ = cycle;
  }

  int node_;
  MeshGeometry geo_;
  int x_, y_;
  int vcs_, depth_, router_delay_;
  int n_ivc_;
  std::vector<Flit> buf_;             // [ivc][depth] rings
  std::vector<InputVc> in_;           // [port][vc]
  std::vector<int16_t> out_credits_;  // [port][vc], Local unused
  uint8_t out_busy_[kNumPorts] = {};  // bit v set: output VC v holds a packet
  OutputLinkTiming out_link_[kNumPorts];
  uint64_t out_next_free_q_[kNumPorts] = {};
  uint64_t nonempty_ = 0;     // bit per ivc
  uint8_t port_of_[64] = {};  // input port of each ivc
  int va_rr_[kNumPorts] = {};
  int in_rr_[kNumPorts] = {};
  int out_rr_[kNumPorts] = {};
  int buffered_ = 0;
  int max_buffered_ = 0;  // before the current session; peak_ is the session's own
  int peak_ = 0;
  uint16_t rr_written_ = 0, rr_read_ = 0;
  uint64_t rr_allowed_[kRrPointers] = {};
  void rr_read(int k, uint64_t requesters, int v, int n) {
    if (rr_written_ >> k & 1) return;
    const uint64_t same = same_pick_starts(requesters, v, n);
    if (rr_read_ >> k & 1) {
      rr_allowed_[k] &= same;
    } else {
      rr_read_ = static_cast<uint16_t>(rr_read_ | 1u << k);
      rr_allowed_[k] = same;
    }
  }
  int& rr_ref(int k);  // pointer k, as numbered above
  void rr_wrote(int k) { rr_written_ = static_cast<uint16_t>(rr_written_ | 1u << k); }
  uint64_t flits_out_[kNumPorts] = {};
  double occ_area_ = 0.0;
  uint64_t occ_last_ = 0;
};

template <class Sink>
void Router::step(uint64_t cycle, Sink& sink) {
  if (buffered_ == 0) return;
  const int V = vcs_;
  uint64_t va_req[kNumMeshDirs] = {0, 0, 0, 0};
  uint64_t ready = 0;
  bool va_any = false;

  // Route compute and classification of eligible front flits.
  for (uint64_t m = nonempty_; m; m &= m - 1) {
    const int ivc = __builtin_ctzll(m);
    InputVc& iv = in_[ivc];
    if (iv.front_ready > cycle) continue;
    if (iv.out_vc >= 0) {
      ready |= uint64_t{1} << ivc;
      continue;
    }
    if (iv.out_port < 0) iv.out_port = static_cast<int8_t>(geo_.route_xy(node_, static_cast<int>(iv.front_dst)));
    if (iv.out_port == kLocal) {
      iv.out_vc = 0;  // ejection needs no VC allocation: the network interface sinks every flit
      ready |= uint64_t{1} << ivc;
    } else {
      va_req[iv.out_port] |= uint64_t{1} << ivc;
      va_any = true;
    }
  }

  // VC allocation, per output port.
  if (va_any) {
    for (int o = 0; o < kNumMeshDirs; ++o) {
      uint64_t req = va_req[o];
      if (!req) continue;
      uint8_t busy = out_busy_[o];
      while (req && busy != low_bits(V)) {
        if (req & (req - 1)) rr_read(o, req, va_rr_[o], n_ivc_);
        const int ivc = round_robin_pick(req, va_rr_[o], n_ivc_);
        req &= ~(uint64_t{1} << ivc);
        const int ov = __builtin_ctz(static_cast<unsigned>(~busy));
        busy |= static_cast<uint8_t>(1u << ov);
        in_[ivc].out_vc = static_cast<int8_t>(ov);
        ready |= uint64_t{1} << ivc;
        va_rr_[o] = ivc + 1 == n_ivc_ ? 0 : ivc + 1;
        rr_wrote(o);
      }
      out_busy_[o] = busy;
    }
  }
  if (!ready) return;

  // Switch allocation, input stage: one VC per input port (only ports with a ready VC).
  const uint64_t now_q = cycle << kCycleFracBits;
  const uint64_t vmask = low_bits(V);
  int in_pick[kNumPorts];
  uint8_t out_req[kNumPorts] = {0, 0, 0, 0, 0};
  unsigned outs = 0;
  for (uint64_t r = ready; r;) {
    const int i = port_of_[__builtin_ctzll(r)];
    uint64_t cand = (r >> (i * V)) & vmask;
    r &= ~(vmask << (i * V));
    while (cand) {
      int v;
      if ((cand & (cand - 1)) == 0) {
        v = __builtin_ctzll(cand);
      } else {
        rr_read(kNumPorts + i, cand, in_rr_[i], V);
        v = round_robin_pick(cand, in_rr_[i], V);
      }
      cand &= ~(uint64_t{1} << v);
      const InputVc& iv = in_[i * V + v];
      const int o = iv.out_port;
      if (out_next_free_q_[o] > now_q) continue;
      if (o != kLocal && out_credits_[o * V + iv.out_vc] <= 0) continue;
      in_pick[i] = v;
      out_req[o] |= static_cast<uint8_t>(1u << i);
      outs |= 1u << o;
      break;
    }
  }
  if (!outs) return;

  // Output stage: one input per output port; then traversal. All departures share the cycle, so the
  // occupancy integral is brought up to it once.
  note_occupancy(cycle);
  for (; outs; outs &= outs - 1) {
    const int o = __builtin_ctz(outs);
    const unsigned req = out_req[o];
    int i;
    if ((req & (req - 1)) == 0) {
      i = __builtin_ctz(req);
    } else {
      rr_read(2 * kNumPorts + o, req, out_rr_[o], kNumPorts);
      i = round_robin_pick(req, out_rr_[o], kNumPorts);
    }
    const int v = in_pick[i];
    const int ivc = i * V + v;
    InputVc& iv = in_[ivc];
    Flit f = buf_[ivc * depth_ + iv.head];
    iv.head = static_cast<uint16_t>(iv.head + 1 == depth_ ? 0 : iv.head + 1);
    if (--iv.count == 0) {
      nonempty_ &= ~(uint64_t{1} << ivc);
    } else {
      const Flit& next = buf_[ivc * depth_ + iv.head];
      iv.front_ready = next.ready_cycle;
      iv.front_dst = next.dst;
    }
    const int ov = iv.out_vc;
    if (o != kLocal) {
      --out_credits_[o * V + ov];
      if (f.tail()) out_busy_[o] &= static_cast<uint8_t>(~(1u << ov));
    }
    if (f.tail()) {
      iv.out_vc = -1;
      iv.out_port = -1;
    }
    f.vc = static_cast<uint8_t>(ov);
    const uint64_t floor_q = now_q + 1 > kCycleOne ? now_q + 1 - kCycleOne : 0;
    out_next_free_q_[o] =
        (out_next_free_q_[o] > floor_q ? out_next_free_q_[o] : floor_q) + out_link_[o].cycles_per_flit_q;
    --buffered_;
    ++flits_out_[o];
    in_rr_[i] = v + 1 == V ? 0 : v + 1;
    out_rr_[o] = i + 1 == kNumPorts ? 0 : i + 1;
    rr_wrote(kNumPorts + i);
    rr_wrote(2 * kNumPorts + o);
    sink.on_flit(o, f);
    sink.on_credit(i, v);
  }
}

}  // namespace nmpsim::noc
