#include "nmpsim/noc/testbench.h"

#include <algorithm>
#include <chrono>
#include <systemc>

#include "nmpsim/noc/mesh_module.h"

namespace nmpsim::noc {

void TestbenchConfig::validate() const {
  noc.validate();
  traffic.validate(MeshGeometry{noc.width, noc.height});
  if (measure_cycles < 1) throw ConfigError("testbench: cycles must be at least 1");
}

namespace {

using Clock = std::chrono::steady_clock;

void finish(TestbenchResult& r, const Network& net, uint64_t min_cycles, Clock::time_point t0) {
  r.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.stats = net.stats();
  r.simulated_cycles = std::max(min_cycles, net.last_cycle() + 1);
  r.injected_flits = net.injected_flits();
  r.ejected_flits = net.ejected_flits();
  r.drained = net.idle();
  r.stalled = net.stalled();
  r.stall_report = net.stall_report();
  r.conservation_error = net.check_conservation();
}

/// Emits traffic at rising clock edges until `stop_cycle` (exclusive).
class TrafficModule : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(TrafficModule);
  TrafficModule(sc_core::sc_module_name name, MeshModule& mesh, const TrafficConfig& cfg, uint64_t stop_cycle)
      : sc_module(name),
        mesh_(mesh),
        traffic_(mesh.network().geometry(), cfg),
        stop_(stop_cycle),
        flits_(cfg.packet_flits) {
    SC_METHOD(run);
  }
  void run() {
    const uint64_t now_cycle = mesh_.cycle_after(sc_core::sc_time_stamp());
    const uint64_t c = traffic_.next_cycle();
    if (c >= stop_) return;
    if (c == now_cycle && sc_core::sc_time_stamp() == mesh_.edge_of_cycle(c)) {
      traffic_.emit(c, [&](int src, int dst) { mesh_.send_flits(src, dst, static_cast<uint32_t>(flits_)); });
    }
    const uint64_t n = traffic_.next_cycle();
    if (n < stop_) next_trigger(mesh_.edge_of_cycle(n) - sc_core::sc_time_stamp());
  }

 private:
  MeshModule& mesh_;
  SyntheticTraffic traffic_;
  uint64_t stop_;
  int flits_;
};

}  // namespace

TestbenchResult run_testbench(const TestbenchConfig& cfg) {
  cfg.validate();
  const auto t0 = Clock::now();
  MeshModule mesh("mesh", cfg.noc);
  const uint64_t window_end = cfg.warmup_cycles + cfg.measure_cycles;
  TrafficModule traffic("traffic", mesh, cfg.traffic, window_end);
  Network& net = mesh.network();
  net.begin_measurement(cfg.warmup_cycles);

  // Run up to the end of the window: cycles [0, window_end) are evaluated before edge_of_cycle(window_end).
  sc_core::sc_start(mesh.edge_of_cycle(window_end));
  net.end_measurement(window_end);
  // Drain in chunks until empty, stalled, or out of budget.
  uint64_t end = window_end;
  const uint64_t chunk = 10000;
  while (!net.idle() && !net.stalled() && end - window_end < cfg.max_drain_cycles) {
    end += std::min(chunk, cfg.max_drain_cycles - (end - window_end));
    sc_core::sc_start(mesh.edge_of_cycle(end) - sc_core::sc_time_stamp());
  }
  TestbenchResult r;
  finish(r, net, window_end, t0);
  return r;
}

TestbenchResult run_testbench_direct(const TestbenchConfig& cfg) {
  cfg.validate();
  const auto t0 = Clock::now();
  Network net(cfg.noc);
  SyntheticTraffic traffic(net.geometry(), cfg.traffic);
  const uint64_t window_end = cfg.warmup_cycles + cfg.measure_cycles;
  const uint64_t limit = window_end + cfg.max_drain_cycles;
  net.begin_measurement(cfg.warmup_cycles);
  const auto flits = static_cast<uint32_t>(cfg.traffic.packet_flits);
  uint64_t c = 0;
  bool ended = false;
  while (c < limit) {
    if (!ended && c >= window_end) {
      net.end_measurement(window_end);
      ended = true;
    }
    if (!ended && traffic.next_cycle() == c) traffic.emit(c, [&](int s, int d) { net.send_flits(s, d, flits, c); });
    if (!net.step(c)) break;
    uint64_t next = net.next_event_cycle(c);
    if (!ended) next = std::min({next, traffic.next_cycle(), window_end});
    if (next == kNever || (ended && net.idle())) break;
    c = next;
  }
  if (!ended) net.end_measurement(window_end);
  TestbenchResult r;
  finish(r, net, window_end, t0);
  return r;
}

TestbenchResult run_pin_testbench(const TestbenchConfig& cfg, const RouterFactory& factory,
                                  const std::function<void(PinMesh&)>& on_start) {
  cfg.validate();
  const auto t0 = Clock::now();
  PinMesh mesh("pin_mesh", cfg.noc, factory);
  Network& net = mesh.network();
  SyntheticTraffic traffic(net.geometry(), cfg.traffic);
  const uint64_t window_end = cfg.warmup_cycles + cfg.measure_cycles;
  const uint64_t limit = window_end + cfg.max_drain_cycles;
  const auto flits = static_cast<uint32_t>(cfg.traffic.packet_flits);
  net.begin_measurement(cfg.warmup_cycles);
  bool ended = false;
  mesh.set_cycle_hook([&](uint64_t c) {
    if (c == window_end) {
      net.end_measurement(window_end);
      ended = true;
    }
    if (c >= window_end) return !net.idle() && c < limit;
    if (traffic.next_cycle() == c) traffic.emit(c, [&](int s, int d) { net.send_flits(s, d, flits, c); });
    return true;
  });
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  if (on_start) on_start(mesh);
  sc_core::sc_start();
  if (!ended) net.end_measurement(window_end);
  TestbenchResult r;
  finish(r, net, window_end, t0);
  r.router_error = mesh.router_error();
  return r;
}

}  // namespace nmpsim::noc
