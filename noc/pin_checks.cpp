#include "nmpsim/noc/pin_checks.h"

#include <algorithm>

namespace nmpsim::noc {

void PinChecker::configure(const MeshGeometry& geo, int vcs, int buffer_flits, int ni_ports) {
  geo_ = geo;
  vcs_ = vcs;
  buffer_flits_ = buffer_flits;
  ni_ports_ = ni_ports;
}

void PinChecker::watch(int node) {
  if (nodes_.empty()) nodes_.resize(static_cast<size_t>(geo_.width) * geo_.height);
  Node& n = nodes_[node];
  n.watched = true;
  n.out.assign(static_cast<size_t>(kMaxPorts) * vcs_, Output{});
  for (auto& o : n.out) o.credits = buffer_flits_;
}

std::string PinChecker::where(int node) const { return "router " + std::to_string(node) + " " + geo_.coord(node); }

void PinChecker::received(int node, const Flit& f, uint64_t cycle) { nodes_[node].holding.push_back({key(f), cycle}); }

std::string PinChecker::sent(int node, int port, const Flit& f) {
  Node& n = nodes_[node];
  // The message is built only when a rule is broken (this runs for every flit a pin-level router sends).
  auto flit = [&] {
    return "flit " + std::to_string(f.seq) + " of packet " + std::to_string(f.packet) + " (to " +
           geo_.coord(static_cast<int>(f.dst)) + ")";
  };
  const uint64_t k = key(f);
  auto held = std::find_if(n.holding.begin(), n.holding.end(), [k](const Held& h) { return h.key == k; });
  if (held == n.holding.end())
    return where(node) + " sent " + flit() + ", which it does not hold (duplicated or forged)";
  *held = n.holding.back();  // a router holds a few dozen flits at most: a vector beats a hash set
  n.holding.pop_back();
  const int xy = geo_.route_xy(node, static_cast<int>(f.dst));
  if (xy == kLocal ? port < kLocal || port >= kLocal + ni_ports_ : port != xy)  // any local port ejects
    return where(node) + " sent " + flit() + " on port " + port_name(port) + "; XY routing takes " + port_name(xy);
  if (f.vc >= vcs_)
    return where(node) + " sent " + flit() + " on VC " + std::to_string(f.vc) + ", beyond the mesh's VCs";
  Output& o = n.out[static_cast<size_t>(port) * vcs_ + f.vc];
  if (port < kLocal && o.credits <= 0)
    return where(node) + " sent " + flit() + " on " + port_name(port) + " VC " + std::to_string(f.vc) +
           " without a credit";
  if (port >= kLocal) return "";  // the NI reassembles by packet: ejection may interleave packets
  --o.credits;
  if (f.head()) {
    if (o.next_seq >= 0)
      return where(node) + " opened " + flit() + " on " + port_name(port) + " VC " + std::to_string(f.vc) +
             " while packet " + std::to_string(o.packet) + " is still open there (wormhole order broken)";
    o.packet = f.packet;
  } else if (o.next_seq < 0 || o.packet != f.packet || f.seq != o.next_seq) {
    return where(node) + " sent " + flit() + " on " + port_name(port) + " VC " + std::to_string(f.vc) +
           " out of its packet's sequence (wormhole order broken)";
  }
  o.next_seq = f.tail() ? -1 : f.seq + 1;
  return "";
}

std::string PinChecker::credit_returned(int node, int port, int vc) {
  if (vc < 0 || vc >= vcs_)
    return where(node) + " got a credit for VC " + std::to_string(vc) + " on " + port_name(port);
  Output& o = nodes_[node].out[static_cast<size_t>(port) * vcs_ + vc];
  if (++o.credits > buffer_flits_)
    return where(node) + " got more credits on " + port_name(port) + " VC " + std::to_string(vc) +
           " than its downstream buffer has slots";
  return "";
}

std::string PinChecker::held(int node, size_t most) const {
  std::vector<Held> v = nodes_[node].holding;
  std::sort(v.begin(), v.end(),
            [](const Held& a, const Held& b) { return a.cycle < b.cycle || (a.cycle == b.cycle && a.key < b.key); });
  std::string s;
  for (size_t i = 0; i < v.size() && i < most; ++i)
    s += std::string(i ? ", " : "") + "packet " + std::to_string(v[i].key >> 16) + " flit " +
         std::to_string(v[i].key & 0xffff) + " since cycle " + std::to_string(v[i].cycle);
  if (v.size() > most) s += ", ...";
  return s;
}

}  // namespace nmpsim::noc
