// The look-ahead router (noc/la_router.h, rtl_checks/rtl/la_router.sv): its RTL against its cycle
// model pin for pin, cycle for cycle, on random configurations (mesh position, FIFO depth, load,
// back-pressure, 1x1) with independent checks of what must come out; a one-line mutant of the RTL
// is caught; and meshes of adapted look-ahead routers, model and RTL, agree pin for pin with every
// router-agnostic check holding. Each test is its own ctest case (one SystemC simulation each).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "nmpsim/base/rng.h"
#include "nmpsim/noc/la_router.h"
#include "nmpsim/noc/testbench.h"
#include "nmpsim/noc/traffic.h"
#include "nmpsim/noc/valid_stop_adapter.h"
#include "nmpsim/rtl_checks/described_router.h"
#include "nmpsim/rtl_checks/la_router_rtl.h"
#include "nmpsim/rtl_checks/mesh_lockstep.h"

#ifdef NMPSIM_RTL_MUTANTS
namespace nmpsim::rtl {
void register_rtl_la_mutant_rr();  // rtl_checks/mutants.cmake
}  // namespace nmpsim::rtl
#endif

namespace nmpsim::noc {
namespace {

struct CoreCase {
  int width = 4, height = 4, node = 5, depth = 4;
  double load = 0.5;  ///< chance an input offers a flit in a cycle (when not stopped)
  double stop = 0.2;  ///< chance a mesh output is stopped in a cycle
  uint64_t seed = 1;
  int cycles = 20000;
};

struct CoreReport {
  std::string mismatch;  ///< first pin difference between the two cores, or empty
  std::string broken;    ///< first violation of the independent checks, or empty
  uint64_t flits_in = 0, flits_out = 0;
};

std::string describe(const CoreCase& c) {
  return std::to_string(c.width) + "x" + std::to_string(c.height) + " node " + std::to_string(c.node) + " depth " +
         std::to_string(c.depth) + " load " + std::to_string(c.load) + " stop " + std::to_string(c.stop);
}

/// Drives cores a and b with the same legal inputs (wormhole packets of 1-5 flits per input, sent
/// only while the input is not stopped; random back-pressure on mesh outputs), then drains. Checks
/// on the side: a flit leaves on the port it was routed to, with the next router's XY port, each
/// flit exactly once, and every packet's flits in order on its output.
CoreReport lockstep(LaCore& a, LaCore& b, const CoreCase& c) {
  const MeshGeometry geo{c.width, c.height};
  const int x = geo.x(c.node), y = geo.y(c.node);
  base::Rng rng(c.seed);
  CoreReport rep;
  LaPins pa, pb;
  struct Source {
    int left = 0, dx = 0, dy = 0;
  } src[kNumPorts];
  std::map<uint64_t, int> expect_port;  // payload -> output port
  uint64_t next_payload = 1;
  for (int cyc = 0; cyc < c.cycles + 200; ++cyc) {
    const bool draining = cyc >= c.cycles;
    for (int p = 0; p < kNumPorts; ++p) {
      pa.in_valid[p] = false;
      pa.in_flit[p] = 0;
      if (pa.in_stop[p] || (!draining && rng.uniform() >= c.load) || (draining && src[p].left == 0)) continue;
      bool head = false;
      if (src[p].left == 0) {
        const int dst = static_cast<int>(rng.below(static_cast<uint64_t>(geo.width * geo.height)));
        src[p] = Source{1 + static_cast<int>(rng.below(5)), geo.x(dst), geo.y(dst)};
        head = true;
      }
      const bool tail = --src[p].left == 0;
      const int la = xy_port(x, y, src[p].dx, src[p].dy);
      pa.in_valid[p] = true;
      pa.in_flit[p] = LaFlit::make(head, tail, src[p].dx, src[p].dy, la, next_payload);
      expect_port[next_payload++] = la;
      ++rep.flits_in;
    }
    for (int o = 0; o < kNumPorts; ++o) pa.out_stop[o] = o != kLocal && !draining && rng.uniform() < c.stop;
    pb.in_valid = pa.in_valid;
    pb.in_flit = pa.in_flit;
    pb.out_stop = pa.out_stop;
    a.edge(pa);
    b.edge(pb);
    for (int p = 0; p < kNumPorts && rep.mismatch.empty(); ++p)
      if (pa.out_valid[p] != pb.out_valid[p] || pa.out_flit[p] != pb.out_flit[p] || pa.in_stop[p] != pb.in_stop[p])
        rep.mismatch = "cycle " + std::to_string(cyc) + " port " + port_name(p) + ": out_valid " +
                       std::to_string(pa.out_valid[p]) + "/" + std::to_string(pb.out_valid[p]) + " out_flit " +
                       std::to_string(pa.out_flit[p]) + "/" + std::to_string(pb.out_flit[p]) + " in_stop " +
                       std::to_string(pa.in_stop[p]) + "/" + std::to_string(pb.in_stop[p]);
    for (int o = 0; o < kNumPorts; ++o) {
      if (!pa.out_valid[o]) continue;
      ++rep.flits_out;
      const uint64_t f = pa.out_flit[o];
      const auto it = expect_port.find(LaFlit::payload(f));
      std::string bad;
      if (it == expect_port.end())
        bad = "a flit that was never sent in, or twice";
      else if (it->second != o)
        bad = "a flit routed to " + std::string(port_name(it->second));
      else if (o != kLocal && pa.out_stop[o])
        bad = "a flit while stopped";
      if (it != expect_port.end()) expect_port.erase(it);
      if (bad.empty() && o != kLocal) {
        const int nx = (x + (o == kEast) - (o == kWest)) & 0xff, ny = (y + (o == kSouth) - (o == kNorth)) & 0xff;
        if (LaFlit::la_port(f) != xy_port(nx, ny, LaFlit::x(f), LaFlit::y(f))) bad = "a wrong look-ahead port";
      }
      if (!bad.empty() && rep.broken.empty())
        rep.broken = "cycle " + std::to_string(cyc) + " port " + port_name(o) + ": " + bad;
    }
  }
  if (rep.broken.empty() && !expect_port.empty())
    rep.broken = std::to_string(expect_port.size()) + " flits never came out";
  return rep;
}

CoreReport model_vs_rtl(const CoreCase& c) {
  const MeshGeometry geo{c.width, c.height};
  LaRouterModel model(c.node, geo, c.depth);
  const std::unique_ptr<LaCore> rtl = rtl::make_la_rtl(c.node, geo, c.depth);
  return lockstep(model, *rtl, c);
}

TEST(LaRouter, RtlMatchesItsModelOnRandomConfigurations) {
  base::Rng rng(2026);
  for (int k = 0; k < 12; ++k) {
    CoreCase c;
    c.width = 1 + static_cast<int>(rng.below(8));
    c.height = 1 + static_cast<int>(rng.below(8));
    c.node = static_cast<int>(rng.below(static_cast<uint64_t>(c.width * c.height)));
    c.depth = 1 + static_cast<int>(rng.below(16));
    c.load = 0.1 + 0.9 * rng.uniform();
    c.stop = 0.6 * rng.uniform();
    c.seed = 100 + k;
    const CoreReport r = model_vs_rtl(c);
    EXPECT_EQ(r.mismatch, "") << describe(c);
    EXPECT_EQ(r.broken, "") << describe(c);
    EXPECT_GT(r.flits_out, 1000u) << describe(c);
    EXPECT_EQ(r.flits_out, r.flits_in) << describe(c);
  }
}

TEST(LaRouter, RtlMatchesItsModelInTheCorners) {
  std::vector<CoreCase> cases(5);
  cases[0].width = cases[0].height = 1;  // 1x1: everything goes to Local
  cases[0].node = 0;
  cases[0].depth = 1;
  cases[0].load = 1.0;
  cases[1].load = 1.0;  // saturation, heavy back-pressure (slow links)
  cases[1].stop = 0.9;
  cases[2].depth = rtl::la_rtl_max_depth();  // the largest FIFO
  cases[2].load = 1.0;
  cases[2].stop = 0.5;
  cases[3].node = 0;  // a corner router, no back-pressure: every flit bypasses
  cases[3].load = 0.3;
  cases[3].stop = 0.0;
  cases[4].width = 8;  // a router on the far edge of a wide mesh
  cases[4].height = 2;
  cases[4].node = 15;
  cases[4].depth = 2;
  cases[4].load = 0.8;
  for (const CoreCase& c : cases) {
    const CoreReport r = model_vs_rtl(c);
    EXPECT_EQ(r.mismatch, "") << describe(c);
    EXPECT_EQ(r.broken, "") << describe(c);
    EXPECT_EQ(r.flits_out, r.flits_in) << describe(c);
  }
}

#ifdef NMPSIM_RTL_MUTANTS
TEST(LaRouter, AOneLineMutantOfTheRtlIsCaught) {
  // rtl_checks/mutants.cmake builds la_router.sv with one line changed: the round-robin pointer stays
  // on the winner instead of moving past it.
  CoreCase c;
  c.load = 0.9;
  c.stop = 0.3;
  const MeshGeometry geo{c.width, c.height};
  LaRouterModel model(c.node, geo, c.depth);
  rtl::register_rtl_la_mutant_rr();
  rtl::DescribedCore mutant(*rtl::find_described_router("la_mutant_rr"), c.node, geo, c.depth);
  const CoreReport r = lockstep(model, mutant, c);
  EXPECT_NE(r.mismatch, "");
  EXPECT_NE(r.mismatch.find("cycle "), std::string::npos) << r.mismatch;
}
#endif

TEST(LaRouter, ConfigurationsBeyondTheRouterAreRefused) {
  EXPECT_THROW(rtl::check_la_rtl_fits(rtl::la_rtl_max_depth() + 1), ConfigError);
  NocConfig cfg;
  cfg.width = cfg.height = 2;
  cfg.vcs = 2;
  EXPECT_THROW(la_model_factory()("r", RouterParams::of(cfg, 0)), ConfigError);  // no virtual channels
}

TEST(LaRouter, ADescriptionThatDoesNotFitIsAOneLineErrorNamingTheField) {
  const std::string flit = R"("flit": {"head": 0, "tail": 1, "dst_x": [2, 8], "dst_y": [10, 8], "payload": [21, 43]})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[1, 2]", "(file): not a JSON object"},
      {"{\"protocol\": \"axi\", " + flit + "}", "protocol: 'axi' is not one of valid_stop, valid_ready, credit"},
      {"{\"protocol\": 3, " + flit + "}", "protocol: must be a string"},
      {R"({"protocol": "valid_stop", "max_buffer_flits": 4})", "flit: missing"},
      {R"({"protocol": "valid_stop", "max_buffer_flits": 4, "flit": {"head": 0, "tail": 1, "dst_x": [2, 8],
          "dst_y": [10, 8], "payload": [21, 6]}})",
       "flit.payload: needs at least 8 bits"},
      {R"({"protocol": "valid_stop", "max_buffer_flits": 4, "flit": {"head": 0, "tail": 1, "dst_x": [60, 8],
          "dst_y": [10, 8], "payload": [21, 43]}})",
       "flit.dst_x: must be 1 to 64 bits within the 64-bit flit word (flit_bits)"},
      {R"({"protocol": "valid_stop", "max_buffer_flits": 4, "flit_bits": 128, "flit": {"head": 0, "tail": 1,
          "dst_x": [2, 8], "dst_y": [10, 8], "payload": [100, 43]}})",
       "flit.payload: must be 1 to 64 bits within the 128-bit flit word (flit_bits)"},
      {R"({"protocol": "valid_stop", "flit_bits": 1024, )" + flit + "}", "flit_bits: must be in 8..512"},
      {"{\"protocol\": \"valid_stop\", \"max_buffer_flits\": 2000, " + flit + "}",
       "max_buffer_flits: must be in 1..1024"},
  };
  for (const auto& [json, want] : cases) {
    try {
      rtl::RouterDescription::parse("mine", json);
      ADD_FAILURE() << "accepted: " << json;
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("router description 'mine': ", 0), 0u) << msg;
      EXPECT_NE(msg.find(want), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

/// Meshes of adapted look-ahead routers: the cycle model everywhere against the RTL everywhere.
TestbenchConfig la_mesh(int w, int h, double rate, TrafficPattern pattern) {
  TestbenchConfig cfg;
  cfg.noc.width = w;
  cfg.noc.height = h;
  cfg.noc.vcs = 1;
  cfg.noc.buffer_flits = 4;
  cfg.traffic.injection_rate = rate;
  cfg.traffic.pattern = pattern;
  cfg.warmup_cycles = 0;
  cfg.measure_cycles = 6000;
  return cfg;
}

void expect_mesh_agrees(const TestbenchConfig& cfg) {
  // Two meshes in one simulation, the same traffic, compared pin for pin every cycle.
  PinMesh model("model", cfg.noc, la_model_factory());
  PinMesh rtl_mesh("rtl", cfg.noc, rtl::la_rtl_factory());
  rtl::MeshLockstep lock("lock", model, "la-sc", rtl_mesh, "la-rtl");
  uint64_t delivered[2] = {0, 0};
  PinMesh* meshes[2] = {&model, &rtl_mesh};
  std::vector<std::unique_ptr<SyntheticTraffic>> traffic;
  for (int m = 0; m < 2; ++m) {
    Network& net = meshes[m]->network();
    traffic.push_back(std::make_unique<SyntheticTraffic>(net.geometry(), cfg.traffic));
    net.set_delivery_handler([&, m](const Delivery&) { ++delivered[m]; });
    meshes[m]->set_cycle_hook([&, m](uint64_t c) {
      Network& n = meshes[m]->network();
      if (c < cfg.measure_cycles && traffic[m]->next_cycle() == c)
        traffic[m]->emit(c,
                         [&](int a, int b) { n.send_flits(a, b, static_cast<uint32_t>(cfg.traffic.packet_flits), c); });
      return c < cfg.measure_cycles || !n.idle();
    });
  }
  sc_core::sc_start(model.period() * (20.0 * cfg.measure_cycles));
  for (PinMesh* m : meshes) {
    EXPECT_EQ(m->network().check_conservation(), "");
    EXPECT_EQ(m->router_error(), "");
    EXPECT_TRUE(m->network().idle());
  }
  EXPECT_FALSE(lock.mismatch()) << lock.first_mismatch();
  EXPECT_GT(lock.flits_compared(), 5000u);
  EXPECT_GT(delivered[0], 300u);
  EXPECT_EQ(delivered[0], delivered[1]);
}

TEST(LaMesh, ModelAndRtlMeshesAgreeUnderUniformTraffic) {
  expect_mesh_agrees(la_mesh(4, 4, 0.2, TrafficPattern::kUniform));
}

TEST(LaMesh, ModelAndRtlMeshesAgreeAtSaturationOnAHotspot) {
  TestbenchConfig cfg = la_mesh(4, 3, 0.5, TrafficPattern::kHotspot);
  cfg.traffic.hotspot_fraction = 0.5;
  expect_mesh_agrees(cfg);
}

TEST(LaMesh, ModelAndRtlMeshesAgreeAcrossSlowLinks) {
  TestbenchConfig cfg = la_mesh(4, 4, 0.3, TrafficPattern::kBitComplement);
  LinkSpec slow;
  slow.latency_cycles = 3;
  slow.bandwidth_flits_per_cycle = 1.0 / 3;
  for (int y = 0; y < 4; ++y) {  // a slow seam between columns 1 and 2, both ways
    cfg.noc.set_link(cfg.noc.width * y + 1, kEast, slow);
    cfg.noc.set_link(cfg.noc.width * y + 2, kWest, slow);
  }
  cfg.noc.buffer_flits = 8;
  expect_mesh_agrees(cfg);
}

}  // namespace
}  // namespace nmpsim::noc
