// Helpers for NoC tests: single-packet runs and independent closed-form expectations.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "nmpsim/noc/network.h"

namespace nmpsim::noc::testing {

/// Runs a network until idle (or `limit` cycles), stepping only cycles with work. Returns the last cycle.
inline uint64_t run_until_idle(Network& net, uint64_t start, uint64_t limit = 10'000'000) {
  uint64_t c = start;
  while (true) {
    if (!net.step(c)) throw std::runtime_error(net.stall_report());
    if (net.idle()) return c;
    const uint64_t n = net.next_event_cycle(c);
    if (n == kNever || n > limit) throw std::runtime_error("network did not drain");
    c = n;
  }
}

/// Sends one message into an empty network at cycle 0 and returns its latency in cycles.
inline uint64_t single_message_latency(const NocConfig& cfg, int src, int dst, uint64_t bytes) {
  Network net(cfg);
  uint64_t latency = 0;
  int delivered = 0;
  net.set_delivery_handler([&](const Delivery& d) {
    latency = d.deliver_cycle - d.create_cycle;
    ++delivered;
  });
  net.send(src, dst, bytes, 0);
  run_until_idle(net, 0);
  if (delivered != 1) throw std::runtime_error("message not delivered exactly once");
  return latency;
}

/// Closed-form zero-load latency, written from the pipeline description in docs/MODEL.md and not
/// from the code: injection channel 1 cycle; per router (router_delay - 1) cycles before the switch;
/// a link adds its latency plus its serialisation k = ceil(1/bandwidth) cycles; ejection 1 cycle after
/// the last switch; the tail trails the head by (flits - 1) * max k along the path.
inline uint64_t closed_form_latency(const NocConfig& cfg, int src, int dst, uint64_t flits) {
  const MeshGeometry geo{cfg.width, cfg.height};
  const uint64_t R = static_cast<uint64_t>(cfg.router_delay_cycles);
  uint64_t t = 1;  // NI -> source router buffer
  uint64_t kmax = 1;
  int x = geo.x(src), y = geo.y(src);
  auto hop = [&](int dir) {
    const LinkSpec s = cfg.link(geo.id(x, y), dir);
    uint64_t k = 1;
    while (static_cast<double>(k) * s.bandwidth_flits_per_cycle < 1.0 - 1e-12) ++k;
    t += (R - 1) + s.latency_cycles + k;
    kmax = std::max(kmax, k);
  };
  while (x != geo.x(dst)) {
    const int dir = geo.x(dst) > x ? kEast : kWest;
    hop(dir);
    x += dir == kEast ? 1 : -1;
  }
  while (y != geo.y(dst)) {
    const int dir = geo.y(dst) > y ? kSouth : kNorth;
    hop(dir);
    y += dir == kSouth ? 1 : -1;
  }
  t += (R - 1) + 1;  // destination router, then the ejection channel
  return t + (flits - 1) * kmax;
}

}  // namespace nmpsim::noc::testing
