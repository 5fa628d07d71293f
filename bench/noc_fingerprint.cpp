// Delivery fingerprints of the cycle-level NoC engine (a benchmark and a check, not a test).
//
// Runs six fixed workloads on noc::Network (uniform random messages of random sizes at random times,
// a burst all-to-all, tight 1-VC buffers behind one NI FIFO, slow and long links, a 3-cycle router
// with short packets, 8 VCs) and prints, per workload, a hash of every message's delivery cycle (order
// of deliveries within a cycle does not count), a hash of the window statistics, the last cycle and
// the host seconds. An engine change that keeps every delivery cycle prints the same hashes: build
// the tool before and after the change and compare (docs/PERFORMANCE.md "Cycle fidelity speed").
//
//   build/bench/noc_fingerprint            # all workloads
//   build/bench/noc_fingerprint burst8x8   # one
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <systemc>
#include <vector>

#include "nmpsim/noc/network.h"

using nmpsim::noc::Delivery;
using nmpsim::noc::LinkSpec;
using nmpsim::noc::Network;
using nmpsim::noc::NocConfig;
using nmpsim::noc::NocStats;

namespace {

uint64_t mix(uint64_t h, uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

struct Workload {
  const char* name;
  NocConfig cfg;
  int messages;
  uint64_t max_bytes;
  uint64_t spread_cycles;  ///< messages are created uniformly in [0, spread); 0: all at cycle 0
  unsigned seed;
};

struct Message {
  uint64_t cycle;
  int src, dst;
  uint64_t bytes;
};

void run(const Workload& w) {
  const auto t0 = std::chrono::steady_clock::now();
  Network net(w.cfg);
  uint64_t deliveries_hash = 0, delivered = 0;
  net.set_delivery_handler([&](const Delivery& d) {
    deliveries_hash += mix(d.message_id * 0x9e3779b97f4a7c15ULL, d.deliver_cycle);
    ++delivered;
  });
  std::mt19937_64 rng(w.seed);
  const int n = w.cfg.nodes();
  std::vector<Message> msgs;
  for (int i = 0; i < w.messages; ++i) {
    const uint64_t c = w.spread_cycles ? rng() % w.spread_cycles : 0;
    const int src = static_cast<int>(rng() % static_cast<uint64_t>(n));
    const int dst = static_cast<int>(rng() % static_cast<uint64_t>(n));
    msgs.push_back(Message{c, src, dst, 1 + rng() % w.max_bytes});
  }
  std::stable_sort(msgs.begin(), msgs.end(), [](const Message& a, const Message& b) { return a.cycle < b.cycle; });
  const bool measure = w.spread_cycles > 0;
  bool window_closed = !measure;
  if (measure) net.begin_measurement(w.spread_cycles / 4);
  size_t next = 0;
  uint64_t c = 0;
  while (true) {
    for (; next < msgs.size() && msgs[next].cycle <= c; ++next)
      net.send(msgs[next].src, msgs[next].dst, msgs[next].bytes, msgs[next].cycle);
    if (!net.step(c)) {
      std::printf("%-10s stalled: %s\n", w.name, net.stall_report().c_str());
      return;
    }
    if (!window_closed && c >= w.spread_cycles / 2) {
      net.end_measurement(c);
      window_closed = true;
    }
    if (net.idle() && next == msgs.size()) break;
    uint64_t to = net.next_event_cycle(c);
    if (next < msgs.size()) to = std::min(to, std::max(c + 1, msgs[next].cycle));
    c = to;
  }
  const NocStats s = net.stats();
  uint64_t stats_hash = 0;
  for (const auto& l : s.links) stats_hash = mix(mix(stats_hash, l.flits), static_cast<uint64_t>(l.utilisation * 1e9));
  for (const auto& r : s.routers)
    stats_hash = mix(mix(stats_hash, static_cast<uint64_t>(r.avg_buffered_flits * 1e6)),
                     static_cast<uint64_t>(r.max_buffered_flits));
  const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "%-10s messages %llu last_cycle %llu deliveries %016llx stats %016llx avg_packet_latency %.3f %s %.3f s\n",
      w.name, static_cast<unsigned long long>(delivered), static_cast<unsigned long long>(c),
      static_cast<unsigned long long>(deliveries_hash), static_cast<unsigned long long>(stats_hash),
      s.packet_latency_cycles.avg, net.check_conservation().empty() ? "conserved" : "NOT-CONSERVED", host_s);
}

std::vector<Workload> workloads() {
  NocConfig a;
  a.width = 8;
  a.height = 8;
  a.flit_bytes = 50;
  NocConfig tight = a;
  tight.width = 4;
  tight.vcs = 1;
  tight.buffer_flits = 2;
  tight.ni_queues = 1;
  NocConfig slow = a;
  slow.vcs = 4;
  slow.router_delay_cycles = 1;
  slow.buffer_flits = 5;
  for (int node = 0; node < 64; node += 3)
    if (node % 8 != 7) slow.set_link(node, nmpsim::noc::kEast, LinkSpec{3, 0.4});
  for (int node = 8; node < 64; node += 5) slow.set_link(node, nmpsim::noc::kNorth, LinkSpec{2, 0.25});
  NocConfig r3 = a;
  r3.router_delay_cycles = 3;
  r3.max_packet_flits = 5;
  r3.vcs = 3;
  r3.link_delay_cycles = 2;
  r3.buffer_flits = 12;
  NocConfig v8 = a;
  v8.width = 16;
  v8.height = 2;
  v8.vcs = 8;
  v8.ni_queues = 3;
  return {{"uni8x8", a, 20000, 3000, 200000, 1},  {"burst8x8", a, 5000, 20000, 0, 2},
          {"tight", tight, 3000, 5000, 20000, 3}, {"slow", slow, 8000, 8000, 100000, 4},
          {"r3", r3, 10000, 4000, 50000, 5},      {"v8", v8, 6000, 3000, 30000, 6}};
}

}  // namespace

// The engine is plain C++, but nmpsim_noc links SystemC, whose library expects an sc_main.
int sc_main(int argc, char** argv) {
  bool any = false;
  for (const Workload& w : workloads())
    if (argc < 2 || w.name == std::string(argv[1])) {
      run(w);
      any = true;
    }
  if (!any) {
    std::fprintf(stderr, "noc_fingerprint: unknown workload '%s'\n", argv[1]);
    return 2;
  }
  return 0;
}

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
