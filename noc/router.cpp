#include "nmpsim/noc/router.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace nmpsim::noc {

OutputLinkTiming OutputLinkTiming::from(const LinkSpec& spec) {
  OutputLinkTiming t;
  const double cpf = 1.0 / spec.bandwidth_flits_per_cycle;
  t.cycles_per_flit_q = static_cast<uint64_t>(std::llround(cpf * static_cast<double>(kCycleOne)));
  if (t.cycles_per_flit_q < kCycleOne) t.cycles_per_flit_q = kCycleOne;
  t.serialise_cycles = static_cast<uint32_t>((t.cycles_per_flit_q + kCycleOne - 1) >> kCycleFracBits);
  t.latency_cycles = spec.latency_cycles;
  return t;
}

Router::Router(int node, const MeshGeometry& geo, int vcs, int buffer_flits, int router_delay_cycles, int ni_ports)
    : node_(node),
      geo_(geo),
      x_(geo.x(node)),
      y_(geo.y(node)),
      vcs_(vcs),
      depth_(buffer_flits),
      router_delay_(router_delay_cycles),
      ni_ports_(ni_ports),
      ports_(kNumMeshDirs + ni_ports),
      n_ivc_(ports_ * vcs),
      buf_(static_cast<size_t>(ports_ * vcs * buffer_flits)),
      in_(static_cast<size_t>(ports_ * vcs)),
      out_credits_(static_cast<size_t>(ports_ * vcs), static_cast<int16_t>(buffer_flits)) {
  if (ni_ports < 1 || ni_ports > kMaxNiPorts || n_ivc_ > 64)
    throw std::invalid_argument("noc: a router has 1 to 4 local ports and at most 64 input VCs");
  for (int ivc = 0; ivc < n_ivc_; ++ivc) port_of_[ivc] = static_cast<uint8_t>(ivc / vcs);
}

void Router::reset_stats(uint64_t cycle) {
  occ_area_ = 0.0;
  occ_last_ = cycle;
  max_buffered_ = buffered_;
  peak_ = buffered_;
  for (auto& c : flits_out_) c = 0;
}

void Router::begin_session() {
  if (peak_ > max_buffered_) max_buffered_ = peak_;
  peak_ = buffered_;
  rr_written_ = rr_read_ = 0;
}

int& Router::rr_ref(int k) {
  return k < kMaxPorts ? va_rr_[k] : k < 2 * kMaxPorts ? in_rr_[k - kMaxPorts] : out_rr_[k - 2 * kMaxPorts];
}

void Router::add_session_stats(const uint64_t* flits_out, double area, int peak) {
  for (int p = 0; p < kMaxPorts; ++p) flits_out_[p] += flits_out[p];
  occ_area_ += area;
  if (peak > peak_) peak_ = peak;
}

void Router::sub_session_stats(const uint64_t* flits_out, double area, int old_peak) {
  for (int p = 0; p < kMaxPorts; ++p) flits_out_[p] -= flits_out[p];
  occ_area_ -= area;
  peak_ = old_peak;
}

std::string Router::describe_state(uint64_t cycle) const {
  std::ostringstream os;
  os << "router " << node_ << " (" << x_ << "," << y_ << ") holds " << buffered_ << " flits:";
  for (int ivc = 0; ivc < n_ivc_; ++ivc) {
    const InputVc& iv = in_[ivc];
    if (!iv.count) continue;
    const Flit& f = buf_[ivc * depth_ + iv.head];
    const int port = ivc / vcs_, vc = ivc % vcs_;
    os << " [in " << port_name(port) << " vc" << vc << ": " << iv.count << " flits, front "
       << (f.head() ? "head" : "body") << " to " << geo_.coord(static_cast<int>(f.dst));
    if (iv.out_port >= 0) {
      os << ", out " << port_name(iv.out_port);
      if (iv.out_vc >= 0) {
        os << " vc" << static_cast<int>(iv.out_vc);
        if (iv.out_port < kLocal) os << " credits " << out_credits_[iv.out_port * vcs_ + iv.out_vc];
      } else {
        os << " waiting for a free output VC";
      }
    }
    if (f.ready_cycle > cycle) os << ", in pipeline";
    os << "]";
  }
  return os.str();
}

}  // namespace nmpsim::noc
