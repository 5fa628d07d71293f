// Meshes of pin-level routers: a 4x4 mesh of Verilated RTL routers, the same mesh of SystemC
// routers (noc::ScRouter) and mixed meshes must deliver every packet with the same latency as
// the cycle engine (noc::Network with built-in routers), under random traffic. Each TEST is its
// own process (one SystemC elaboration); meshes compared with each other run side by side.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "nmpsim/noc/pin_mesh.h"
#include "nmpsim/noc/sc_router.h"
#include "nmpsim/noc/testbench.h"
#include "nmpsim/noc/traffic.h"
#include "nmpsim/rtl_checks/mesh_lockstep.h"
#include "nmpsim/rtl_checks/rtl_router.h"

namespace nmpsim::noc {
namespace {

struct Scenario {
  std::string name;
  NocConfig noc;
  TrafficConfig traffic;
  uint64_t traffic_cycles = 20000;
};

void PrintTo(const Scenario& s, std::ostream* os) { *os << s.name; }

Scenario base(const std::string& name) {
  Scenario s;
  s.name = name;
  s.noc.width = 4;
  s.noc.height = 4;
  s.traffic.injection_rate = 0.25;
  s.traffic.packet_flits = 4;
  s.traffic.seed = 7;
  return s;
}

/// (message id, create cycle, deliver cycle) of every delivery, in delivery order.
using Deliveries = std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>;

/// A pin-level mesh with its own copy of the traffic, recording deliveries.
struct MeshRun {
  /// `each_cycle` (optional) runs at the start of every cycle, before traffic (fault injection).
  MeshRun(const std::string& name, const Scenario& s, const RouterFactory& f,
          std::function<void(uint64_t)> each_cycle = {})
      : mesh(name.c_str(), s.noc, f), traffic(mesh.network().geometry(), s.traffic) {
    Network& net = mesh.network();
    net.set_delivery_handler(
        [this](const Delivery& d) { got.emplace_back(d.message_id, d.create_cycle, d.deliver_cycle); });
    const auto flits = static_cast<uint32_t>(s.traffic.packet_flits);
    const uint64_t end = s.traffic_cycles;
    mesh.set_cycle_hook([this, &net, flits, end, each_cycle = std::move(each_cycle)](uint64_t c) {
      if (each_cycle) each_cycle(c);
      if (c < end && traffic.next_cycle() == c) traffic.emit(c, [&](int a, int b) { net.send_flits(a, b, flits, c); });
      return true;
    });
  }
  PinMesh mesh;
  SyntheticTraffic traffic;
  Deliveries got;
};

/// The reference: the same traffic through the cycle engine.
Deliveries engine_run(const Scenario& s) {
  Network net(s.noc);
  SyntheticTraffic traffic(net.geometry(), s.traffic);
  Deliveries got;
  net.set_delivery_handler([&](const Delivery& d) { got.emplace_back(d.message_id, d.create_cycle, d.deliver_cycle); });
  const auto flits = static_cast<uint32_t>(s.traffic.packet_flits);
  for (uint64_t c = 0; c < s.traffic_cycles || !net.idle(); ++c) {
    if (c < s.traffic_cycles && traffic.next_cycle() == c)
      traffic.emit(c, [&](int a, int b) { net.send_flits(a, b, flits, c); });
    if (!net.step(c)) throw std::runtime_error(net.stall_report());
    if (c > s.traffic_cycles + 1000000) throw std::runtime_error("engine did not drain");
  }
  EXPECT_EQ(net.check_conservation(), "");
  return got;
}

void run_until_idle(std::vector<MeshRun*> runs, const Scenario& s) {
  auto busy = [&] {
    for (MeshRun* r : runs)
      if (r->mesh.cycles_begun() < s.traffic_cycles || !r->mesh.network().idle()) return true;
    return false;
  };
  const sc_core::sc_time chunk = runs.front()->mesh.period() * 1000.0;
  while (busy() && sc_core::sc_time_stamp() < runs.front()->mesh.period() * (20.0 * s.traffic_cycles))
    sc_core::sc_start(chunk);
  for (MeshRun* r : runs) {
    EXPECT_FALSE(r->mesh.network().stalled()) << r->mesh.network().stall_report();
    EXPECT_EQ(r->mesh.network().check_conservation(), "");
    EXPECT_EQ(r->mesh.router_error(), "");
    EXPECT_TRUE(r->mesh.network().idle());
  }
}

/// Packet-by-packet comparison (packets delivered in the same cycle may be reported in any
/// order); reports the first packet, by id, whose creation or delivery cycle differs.
void expect_same(Deliveries want, Deliveries got, const std::string& what) {
  ASSERT_GT(want.size(), 1000u) << "too little traffic to compare";
  ASSERT_EQ(got.size(), want.size()) << what << ": delivered a different number of packets";
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == got[i]) continue;
    const auto& [id, c0, d0] = want[i];
    const auto& [gid, c1, d1] = got[i];
    FAIL() << what << ": packet " << id << " created in cycle " << c0 << " took " << d0 - c0
           << " cycles in the engine; " << what << " packet " << gid << " created in cycle " << c1 << " took "
           << d1 - c1 << " cycles";
  }
}

class RtlMesh : public ::testing::TestWithParam<Scenario> {};

TEST_P(RtlMesh, RtlMeshAndScMeshDeliverEveryPacketWithTheEngineLatency) {
  const Scenario& s = GetParam();
  rtl::check_rtl_fits(s.noc);
  const Deliveries want = engine_run(s);
  MeshRun rtl_mesh("rtl_mesh", s, rtl::rtl_router_factory());
  MeshRun sc_mesh("sc_mesh", s, sc_router_factory());
  for (int n = 0; n < s.noc.nodes(); ++n) {
    ASSERT_STREQ(rtl_mesh.mesh.router(n)->implementation(), "rtl");
    ASSERT_STREQ(sc_mesh.mesh.router(n)->implementation(), "sc");
  }
  // Every router output pin, every cycle: the first difference names its cycle, router, port, flit.
  rtl::MeshLockstep lockstep("lockstep", sc_mesh.mesh, "sc", rtl_mesh.mesh, "rtl");
  run_until_idle({&rtl_mesh, &sc_mesh}, s);
  EXPECT_FALSE(lockstep.mismatch()) << lockstep.first_mismatch();
  EXPECT_GE(lockstep.cycles_compared(), s.traffic_cycles);
  EXPECT_GT(lockstep.flits_compared(), s.traffic_cycles);
  expect_same(want, sc_mesh.got, "SystemC-router mesh");
  expect_same(want, rtl_mesh.got, "RTL-router mesh");
  expect_same(sc_mesh.got, rtl_mesh.got, "RTL-router mesh against the SystemC-router mesh");
}

TEST_P(RtlMesh, MixedMeshOfRtlScAndEngineRoutersMatchesTheEngine) {
  const Scenario& s = GetParam();
  const Deliveries want = engine_run(s);
  // Checkerboard of RTL and SystemC routers, with two nodes left to the engine's own router.
  const RouterFactory rtl_or_sc =
      rtl::mixed_router_factory([](int node) { return ((node % 4) + (node / 4)) % 2 == 0; });
  const int engine_nodes[] = {5, 10};
  RouterFactory mixed = [&](const std::string& name, const RouterParams& p) -> std::unique_ptr<RouterPins> {
    for (int e : engine_nodes)
      if (p.node == e) return nullptr;
    return rtl_or_sc(name, p);
  };
  MeshRun run("mixed_mesh", s, mixed);
  int rtl = 0, sc = 0, engine = 0;
  for (int n = 0; n < s.noc.nodes(); ++n) {
    RouterPins* r = run.mesh.router(n);
    if (!r)
      ++engine;
    else if (std::string(r->implementation()) == "rtl")
      ++rtl;
    else
      ++sc;
  }
  EXPECT_EQ(engine, 2);
  EXPECT_GT(rtl, 4);
  EXPECT_GT(sc, 4);
  // And pin for pin against a mesh of SystemC routers (the engine nodes have no pins to compare).
  MeshRun sc_mesh("sc_mesh", s, sc_router_factory());
  rtl::MeshLockstep lockstep("lockstep", sc_mesh.mesh, "sc", run.mesh, "mixed");
  lockstep.ignore_packet_ids(true);  // engine nodes change packet-slot numbering, not timing
  run_until_idle({&run, &sc_mesh}, s);
  expect_same(want, run.got, "mixed mesh");
  EXPECT_FALSE(lockstep.mismatch()) << lockstep.first_mismatch();
  EXPECT_GT(lockstep.flits_compared(), s.traffic_cycles);
}

std::vector<Scenario> scenarios() {
  std::vector<Scenario> v;
  v.push_back(base("uniform_defaults"));
  Scenario hot = base("hotspot_saturating");
  hot.traffic.pattern = TrafficPattern::kHotspot;
  hot.traffic.hotspot_fraction = 0.5;
  hot.traffic.injection_rate = 0.2;
  v.push_back(hot);
  Scenario tight = base("one_vc_two_flit_buffers_transpose");
  tight.noc.vcs = 1;
  tight.noc.buffer_flits = 2;
  tight.traffic.pattern = TrafficPattern::kTranspose;
  tight.traffic.injection_rate = 0.15;
  tight.traffic.packet_flits = 5;
  v.push_back(tight);
  Scenario slow = base("four_vcs_delay3_slow_die_boundary");
  slow.noc.vcs = 4;
  slow.noc.buffer_flits = 5;
  slow.noc.router_delay_cycles = 3;
  // The links crossing the middle column pair are die-to-die: half bandwidth, 3 cycles.
  for (int y = 0; y < 4; ++y) {
    slow.noc.set_link(y * 4 + 1, kEast, LinkSpec{3, 0.5});
    slow.noc.set_link(y * 4 + 2, kWest, LinkSpec{3, 0.5});
  }
  slow.traffic.injection_rate = 0.2;
  slow.traffic.packet_flits = 3;
  v.push_back(slow);
  // Wafer-scale-like: long die-to-die wires (20 cycles), buffers sized for the credit round trip
  // (42 flits, as the wsc presets), and a wafer seam between rows 1 and 2 at 1/7 bandwidth.
  Scenario wafer = base("wafer_like_long_links_deep_buffers");
  wafer.noc.buffer_flits = 42;
  wafer.noc.link_delay_cycles = 20;
  for (int x = 0; x < 4; ++x) {
    wafer.noc.set_link(4 + x, kSouth, LinkSpec{100, 1.0 / 7.0});
    wafer.noc.set_link(8 + x, kNorth, LinkSpec{100, 1.0 / 7.0});
  }
  wafer.traffic.injection_rate = 0.08;
  wafer.traffic.packet_flits = 8;
  v.push_back(wafer);
  Scenario bypass = base("router_delay1_bitcomp");
  bypass.noc.router_delay_cycles = 1;
  bypass.traffic.pattern = TrafficPattern::kBitComplement;
  bypass.traffic.injection_rate = 0.3;
  v.push_back(bypass);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, RtlMesh, ::testing::ValuesIn(scenarios()),
                         [](const ::testing::TestParamInfo<Scenario>& i) { return i.param.name; });

TEST(PinMesh, LockstepReportsTheFirstDifferingPin) {
  // Two SystemC-router meshes, one of whose router 5 loses every East credit in cycle 2000: the
  // comparison must point at a cycle no earlier than that and name router, port and flits.
  Scenario s = base("fault");
  s.traffic_cycles = 4000;
  MeshRun good("good", s, sc_router_factory());
  PinMesh* bad_mesh = nullptr;  // set once constructed; the hook first runs in simulation
  MeshRun bad("bad", s, sc_router_factory(), [&](uint64_t c) {
    if (c != 2000) return;
    Router& r = dynamic_cast<ScRouter&>(*bad_mesh->router(5)).router();
    for (int v = 0; v < s.noc.vcs; ++v) r.debug_set_credits(kEast, v, 0);
  });
  bad_mesh = &bad.mesh;
  rtl::MeshLockstep lockstep("lockstep", good.mesh, "good", bad.mesh, "bad");
  sc_core::sc_start(good.mesh.period() * 6000.0);
  ASSERT_TRUE(lockstep.mismatch());
  const std::string& m = lockstep.first_mismatch();
  std::printf("first mismatch: %s\n", m.c_str());
  ASSERT_EQ(m.rfind("cycle ", 0), 0u) << m;
  EXPECT_GE(std::stoull(m.substr(6)), 2000u) << m;
  EXPECT_NE(m.find("router ("), std::string::npos) << m;
  EXPECT_NE(m.find(" port "), std::string::npos) << m;
  EXPECT_NE(m.find("good "), std::string::npos) << m;
  EXPECT_NE(m.find("bad "), std::string::npos) << m;
}

/// The pin-level SystemC routers against the engine on the same testbench: the same results to the bit.
void expect_pin_testbench_reproduces_the_engine(const TestbenchConfig& cfg) {
  const TestbenchResult want = run_testbench_direct(cfg);
  const TestbenchResult got = run_pin_testbench(cfg, sc_router_factory());
  const NocStats &a = want.stats, &b = got.stats;
  ASSERT_GT(a.packet_latency_cycles.count, 1000u);
  EXPECT_EQ(b.packet_latency_cycles.count, a.packet_latency_cycles.count);
  EXPECT_DOUBLE_EQ(b.packet_latency_cycles.avg, a.packet_latency_cycles.avg);
  EXPECT_EQ(b.packet_latency_cycles.max, a.packet_latency_cycles.max);
  EXPECT_EQ(b.accepted_flits, a.accepted_flits);
  EXPECT_EQ(b.offered_flits, a.offered_flits);
  ASSERT_EQ(b.links.size(), a.links.size());
  for (size_t i = 0; i < a.links.size(); ++i) EXPECT_EQ(b.links[i].flits, a.links[i].flits) << "link " << i;
  ASSERT_EQ(b.routers.size(), a.routers.size());
  for (size_t i = 0; i < a.routers.size(); ++i) {
    EXPECT_NEAR(b.routers[i].avg_buffered_flits, a.routers[i].avg_buffered_flits, 1e-9) << "router " << i;
    EXPECT_EQ(b.routers[i].max_buffered_flits, a.routers[i].max_buffered_flits) << "router " << i;
  }
  EXPECT_TRUE(got.drained);
  EXPECT_EQ(got.conservation_error, "");
  EXPECT_EQ(got.router_error, "");
}

TEST(PinMesh, PinTestbenchReproducesTheEngineTestbench) {
  TestbenchConfig cfg;
  cfg.noc.width = 5;
  cfg.noc.height = 3;
  cfg.traffic.injection_rate = 0.3;
  cfg.warmup_cycles = 1000;
  cfg.measure_cycles = 5000;
  expect_pin_testbench_reproduces_the_engine(cfg);
}

TEST(PinMesh, PinTestbenchWithThreeLocalPortsReproducesTheEngineTestbench) {
  // noc.ni_ports 3: the SystemC router's pins carry three local ports each way (docs/MODEL.md
  // "Network interfaces and messages"). Hotspot traffic beyond one port's ejection rate.
  TestbenchConfig cfg;
  cfg.noc.width = 4;
  cfg.noc.height = 3;
  cfg.noc.ni_ports = 3;
  cfg.traffic.pattern = TrafficPattern::kHotspot;
  cfg.traffic.injection_rate = 0.4;
  cfg.warmup_cycles = 1000;
  cfg.measure_cycles = 4000;
  expect_pin_testbench_reproduces_the_engine(cfg);
}

TEST(PinMesh, RtlRouterWritesAVcdOfItsSignals) {
  TestbenchConfig cfg;
  cfg.noc.width = 3;
  cfg.noc.height = 3;
  cfg.warmup_cycles = 0;
  cfg.measure_cycles = 300;
  const std::string path = ::testing::TempDir() + "nmpsim_rtl_router.vcd";
  std::remove(path.c_str());
  const TestbenchResult r =
      run_pin_testbench(cfg, rtl::mixed_router_factory([](int node) { return node == 4; }), [&](PinMesh& mesh) {
        auto* rtl = dynamic_cast<rtl::RtlRouter*>(mesh.router(4));
        ASSERT_NE(rtl, nullptr);
        rtl->open_vcd(path);
      });
  EXPECT_TRUE(r.drained);
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string vcd = ss.str();
  for (const char* sig : {"out_flit_e", "in_flit_l", "out_credit_n", "cfg_vcs", "busy_q", "cnt_q"})
    EXPECT_NE(vcd.find(sig), std::string::npos) << "signal " << sig << " missing from the VCD";
  // Value changes at many time steps: the centre router carries traffic.
  size_t stamps = 0;
  for (size_t pos = vcd.find("\n#"); pos != std::string::npos; pos = vcd.find("\n#", pos + 1)) ++stamps;
  EXPECT_GT(stamps, 100u);
}

}  // namespace
}  // namespace nmpsim::noc
