// Router::accept_flit(), Router::step() and its pipeline stages (route compute, VC allocation, switch
// allocation, switch and link traversal, credits), inline so that the per-cycle hot path compiles into
// one function with the network's handlers.
// Included at the end of noc/router.h; include that header, not this one. What each stage reads and
// writes is documented at its declaration in noc/router.h; the order and the arbitration are those of
// docs/MODEL.md "Router micro-architecture".
#pragma once

#include "nmpsim/base/ni_ports.h"
#include "nmpsim/noc/router.h"

namespace nmpsim::noc {

inline bool Router::accept_flit(int port, Flit flit, uint64_t cycle) {
  const int ivc = ivc_index(port, flit.vc);
  InputVc& iv = in_[ivc];
  if (iv.count >= depth_) return false;
  flit.ready_cycle = cycle + static_cast<uint64_t>(router_delay_ - 1);
  int slot = iv.head + iv.count;
  if (slot >= depth_) slot -= depth_;
  buf_[ivc * depth_ + slot] = flit;
  if (iv.count++ == 0) {
    iv.front_ready = flit.ready_cycle;
    iv.front_dst = flit.dst;
  }
  nonempty_ |= uint64_t{1} << ivc;
  note_occupancy(cycle);
  if (++buffered_ > peak_) peak_ = buffered_;
  return true;
}

template <class Sink>
inline void Router::step(uint64_t cycle, Sink& sink) {
  if (buffered_ == 0) return;
  uint64_t va_req[kNumMeshDirs] = {0, 0, 0, 0};
  uint64_t ready = 0;
  if (route_compute(cycle, va_req, ready)) vc_allocate(va_req, ready);
  if (!ready) return;

  const uint64_t now_q = cycle << kCycleFracBits;
  int in_pick[kMaxPorts];
  uint8_t out_req[kMaxPorts] = {};
  unsigned outs = switch_allocate_inputs(now_q, ready, in_pick, out_req);
  if (!outs) return;

  // Output stage, traversal and credits, per requested output port in ascending order. All departures
  // share the cycle, so the occupancy integral is brought up to it once.
  note_occupancy(cycle);
  for (; outs; outs &= outs - 1) {
    const int o = __builtin_ctz(outs);
    const int i = switch_allocate_output(o, out_req[o], in_pick);
    const int v = in_pick[i];
    const Flit f = switch_traverse(i * vcs_ + v, o, now_q);
    consume_credit(o, f);
    sink.on_flit(o, f);
    sink.on_credit(i, v);  // the freed input slot's credit goes upstream
  }
}

inline bool Router::route_compute(uint64_t cycle, uint64_t (&va_req)[kNumMeshDirs], uint64_t& ready) {
  bool va_any = false;
  for (uint64_t m = nonempty_; m; m &= m - 1) {
    const int ivc = __builtin_ctzll(m);
    InputVc& iv = in_[ivc];
    if (iv.front_ready > cycle) continue;
    if (iv.out_vc >= 0) {
      ready |= uint64_t{1} << ivc;
      continue;
    }
    if (iv.out_port < 0) {
      int o = geo_.route_xy(node_, static_cast<int>(iv.front_dst));
      if (o == kLocal && ni_ports_ > 1) o = kLocal + base::eject_port(port_of_[ivc], ni_ports_);
      iv.out_port = static_cast<int8_t>(o);
    }
    if (iv.out_port >= kLocal) {
      iv.out_vc = 0;  // ejection needs no VC allocation: the network interface sinks every flit
      ready |= uint64_t{1} << ivc;
    } else {
      va_req[iv.out_port] |= uint64_t{1} << ivc;
      va_any = true;
    }
  }
  return va_any;
}

inline void Router::vc_allocate(const uint64_t (&va_req)[kNumMeshDirs], uint64_t& ready) {
  const int V = vcs_;
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

inline unsigned Router::switch_allocate_inputs(uint64_t now_q, uint64_t ready, int (&in_pick)[kMaxPorts],
                                               uint8_t (&out_req)[kMaxPorts]) {
  const int V = vcs_;
  const uint64_t vmask = low_bits(V);
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
        rr_read(kMaxPorts + i, cand, in_rr_[i], V);
        v = round_robin_pick(cand, in_rr_[i], V);
      }
      cand &= ~(uint64_t{1} << v);
      const InputVc& iv = in_[i * V + v];
      const int o = iv.out_port;
      if (out_next_free_q_[o] > now_q) continue;
      if (o < kLocal && out_credits_[o * V + iv.out_vc] <= 0) continue;
      in_pick[i] = v;
      out_req[o] |= static_cast<uint8_t>(1u << i);
      outs |= 1u << o;
      break;
    }
  }
  return outs;
}

inline int Router::switch_allocate_output(int o, unsigned req, const int (&in_pick)[kMaxPorts]) {
  int i;
  if ((req & (req - 1)) == 0) {
    i = __builtin_ctz(req);
  } else {
    rr_read(2 * kMaxPorts + o, req, out_rr_[o], ports_);
    i = round_robin_pick(req, out_rr_[o], ports_);
  }
  const int v = in_pick[i];
  in_rr_[i] = v + 1 == vcs_ ? 0 : v + 1;
  out_rr_[o] = i + 1 == ports_ ? 0 : i + 1;
  rr_wrote(kMaxPorts + i);
  rr_wrote(2 * kMaxPorts + o);
  return i;
}

inline Flit Router::switch_traverse(int ivc, int o, uint64_t now_q) {
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
  f.vc = static_cast<uint8_t>(iv.out_vc);
  if (f.tail()) {
    iv.out_vc = -1;
    iv.out_port = -1;
  }
  const uint64_t floor_q = now_q + 1 > kCycleOne ? now_q + 1 - kCycleOne : 0;
  out_next_free_q_[o] =
      (out_next_free_q_[o] > floor_q ? out_next_free_q_[o] : floor_q) + out_link_[o].cycles_per_flit_q;
  --buffered_;
  ++flits_out_[o];
  return f;
}

inline void Router::consume_credit(int o, const Flit& f) {
  if (o >= kLocal) return;
  --out_credits_[o * vcs_ + f.vc];
  if (f.tail()) out_busy_[o] &= static_cast<uint8_t>(~(1u << f.vc));
}

}  // namespace nmpsim::noc
