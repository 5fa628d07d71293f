#include "nmpsim/noc/la_router.h"

namespace nmpsim::noc {

namespace {
int step_dx(int o) { return o == kEast ? 1 : o == kWest ? -1 : 0; }
int step_dy(int o) { return o == kSouth ? 1 : o == kNorth ? -1 : 0; }
}  // namespace

LaRouterModel::LaRouterModel(int node, const MeshGeometry& geo, int depth) : node_(node), depth_(depth), geo_(geo) {
  for (auto& q : q_) q.slot.assign(static_cast<size_t>(depth), 0);
  reset();
}

void LaRouterModel::reset() {
  for (auto& q : q_) q.head = q.count = 0;
  lock_.fill(-1);
  rr_.fill(0);
}

int LaRouterModel::next_port(int o, uint64_t f) const {
  if (o == kLocal) return 0;
  // The next router's coordinates, in the RTL's 8-bit arithmetic.
  const int x = geo_.x(node_), y = geo_.y(node_);
  const int nx = (x + step_dx(o)) & 0xff, ny = (y + step_dy(o)) & 0xff;
  return xy_port(nx, ny, LaFlit::x(f), LaFlit::y(f));
}

void LaRouterModel::edge(LaPins& pins) {
  // Candidates: each input's FIFO front, or its arriving flit when the FIFO is empty (bypass).
  std::array<int, kNumPorts> want{};  // requested output, -1 none
  std::array<uint64_t, kNumPorts> cand{};
  for (int p = 0; p < kNumPorts; ++p) {
    want[p] = -1;
    const Fifo& q = q_[p];
    if (q.count > 0)
      cand[p] = q.slot[static_cast<size_t>(q.head)];
    else if (pins.in_valid[p])
      cand[p] = pins.in_flit[p];
    else
      continue;
    want[p] = LaFlit::la_port(cand[p]);
  }
  std::array<int, kNumPorts> granted{};  // per input: the output it won, -1 none
  granted.fill(-1);
  pins.out_valid.fill(false);
  pins.out_flit.fill(0);
  for (int o = 0; o < kNumPorts; ++o) {
    if (o != kLocal && pins.out_stop[o]) continue;
    int win = -1;
    if (lock_[o] >= 0) {
      if (want[lock_[o]] == o) win = lock_[o];
    } else {
      for (int k = 0; k < kNumPorts && win < 0; ++k) {
        const int i = (rr_[o] + k) % kNumPorts;
        if (want[i] == o && LaFlit::head(cand[i])) win = i;
      }
      if (win >= 0) rr_[o] = (win + 1) % kNumPorts;
    }
    if (win < 0) continue;
    granted[win] = o;
    const uint64_t f = cand[win];
    lock_[o] = LaFlit::tail(f) ? -1 : win;
    pins.out_valid[o] = true;
    pins.out_flit[o] = LaFlit::with_la_port(f, next_port(o, f));
  }
  for (int p = 0; p < kNumPorts; ++p) {
    Fifo& q = q_[p];
    const bool from_fifo = q.count > 0;
    if (granted[p] >= 0 && from_fifo) {
      q.head = (q.head + 1) % depth_;
      --q.count;
    }
    const bool bypassed = granted[p] >= 0 && !from_fifo;
    if (pins.in_valid[p] && !bypassed && q.count < depth_) {
      q.slot[static_cast<size_t>((q.head + q.count) % depth_)] = pins.in_flit[p];
      ++q.count;
    }
    pins.in_stop[p] = q.count == depth_;
  }
}

}  // namespace nmpsim::noc
