// The network's side of routers outside it (pin-level SystemC or RTL modules, noc/pin_mesh.h): a node
// handed to an external router, and the flits and credits such a router drives on its output pins.
#include <stdexcept>
#include <string>

#include "nmpsim/noc/network.h"

namespace nmpsim::noc {

void Network::set_external_router(int node) {
  if (node < 0 || node >= nodes())
    throw std::out_of_range("noc: external router " + std::to_string(node) + " outside the mesh");
  if (started_ || routers_[node].buffered_flits() > 0)
    throw std::logic_error("noc: set_external_router() must be called before the network runs");
  set_session_replay(false);
  if (ext_.empty()) {
    ext_.resize(static_cast<size_t>(nodes()));
    pin_checks_.configure(geo_, cfg_.vcs, cfg_.buffer_flits, cfg_.ni_ports);
  }
  ext_[node].external = true;
  pin_checks_.watch(node);
}

void Network::pin_output_flit(int node, int port, const Flit& f) {
  ExternalRouter& x = ext_[node];
  if (const std::string broken = pin_checks_.sent(node, port, f); !broken.empty()) {
    violation(broken);
    if (x.buffered <= 0) return;  // nothing to account a forged flit against
  }
  x.note(cycle_);
  --x.buffered;
  --ext_buffered_;
  ++x.flits_out[port];
  RouterSink sink{this, node};
  sink.on_flit(port, f);
}

void Network::pin_output_credit(int node, int port, int vc) {
  if (vc < 0 || vc >= cfg_.vcs) {
    violation("router " + geo_.coord(node) + " returned a credit for VC " + std::to_string(vc) + " on port " +
              port_name(port));
    return;
  }
  RouterSink sink{this, node};
  sink.on_credit(port, vc);
}

}  // namespace nmpsim::noc
