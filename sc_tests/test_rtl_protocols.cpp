// The three link protocols a router of your own can have (docs/RTL.md "Bring your own router"):
// the look-ahead RTL (valid/stop) and the same router inside our valid/ready and credit shells
// (rtl_checks/rtl/la_vr_router.sv, la_credit_router.sv), each registered through
// rtl_checks/routers.cmake from its description file, as a user's router is. Each test is its own
// ctest case (one SystemC simulation each); the mutants of the shells are in test_broken_rtl.cpp.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nmpsim/noc/la_router.h"
#include "nmpsim/noc/pin_mesh.h"
#include "nmpsim/noc/router_pins.h"
#include "nmpsim/noc/traffic.h"
#include "nmpsim/noc/valid_stop_adapter.h"
#include "nmpsim/rtl_checks/described_router.h"

namespace nmpsim::noc {
namespace {

const char* const kShells[] = {"la", "la_vr", "la_credit"};

NocConfig mesh(int w, int h, int buffer_flits) {
  NocConfig cfg;
  cfg.width = w;
  cfg.height = h;
  cfg.vcs = 1;
  cfg.buffer_flits = buffer_flits;
  return cfg;
}

/// Runs packets (`emit(mesh, cycle, send)` each cycle until `until`) through one mesh per factory
/// in one simulation; returns every mesh's deliveries as "src dst deliver_cycle", in order.
using Send = std::function<void(int, int, uint32_t)>;
using Emit = std::function<void(size_t mesh, uint64_t cycle, const Send& send)>;
std::vector<std::vector<std::string>> run_meshes(const NocConfig& cfg, const std::vector<RouterFactory>& factories,
                                                 uint64_t until, const Emit& emit) {
  std::vector<std::unique_ptr<PinMesh>> meshes;
  std::vector<std::vector<std::string>> got(factories.size());
  for (size_t m = 0; m < factories.size(); ++m) {
    meshes.push_back(std::make_unique<PinMesh>(("mesh" + std::to_string(m)).c_str(), cfg, factories[m]));
    Network& net = meshes[m]->network();
    net.set_delivery_handler([&got, m](const Delivery& d) {
      got[m].push_back(std::to_string(d.src) + " " + std::to_string(d.dst) + " " + std::to_string(d.deliver_cycle));
    });
  }
  // A mesh whose hook returns false stops the simulation: keep going until every mesh is idle.
  auto busy = [&meshes] {
    for (auto& m : meshes)
      if (!m->network().idle()) return true;
    return false;
  };
  for (size_t m = 0; m < meshes.size(); ++m) {
    Network& net = meshes[m]->network();
    meshes[m]->set_cycle_hook([&net, m, until, &emit, busy](uint64_t c) {
      if (c < until) emit(m, c, [&](int a, int b, uint32_t flits) { net.send_flits(a, b, flits, c); });
      return c < until || busy();
    });
  }
  sc_core::sc_start(meshes[0]->period() * (40.0 * static_cast<double>(until) + 20000.0));  // a bound
  for (auto& m : meshes) {
    EXPECT_EQ(m->network().check_conservation(), "");
    EXPECT_EQ(m->router_error(), "");
    EXPECT_TRUE(m->network().idle());
  }
  return got;
}

std::vector<RouterFactory> shells() {
  std::vector<RouterFactory> f;
  for (const char* name : kShells) f.push_back(rtl::described_factory(name, [](int) { return true; }, {}));
  return f;
}

TEST(RtlProtocols, ALonePacketCrossesEveryShellAsTheVcRouterWithOneCycleDelay) {
  // One 4-flit packet at a time, 80 cycles apart (never two in the mesh): a shell adds no cycle to
  // an uncontended flit, and the look-ahead router's zero-load latency is the VC router's with a
  // 1-cycle router delay (docs/MODEL.md "The look-ahead router").
  NocConfig cfg = mesh(5, 4, 4);
  cfg.router_delay_cycles = 1;  // the VC router's; the look-ahead routers have no such setting
  std::vector<RouterFactory> f = shells();
  f.push_back(sc_router_factory());
  std::mt19937 rng(7);
  std::vector<std::pair<int, int>> pairs;
  while (pairs.size() < 40) {
    const int a = static_cast<int>(rng() % 20), b = static_cast<int>(rng() % 20);
    if (a != b) pairs.emplace_back(a, b);
  }
  const auto got = run_meshes(cfg, f, 40 * 80, [&](size_t, uint64_t c, const Send& send) {
    if (c % 80 == 0) send(pairs[c / 80].first, pairs[c / 80].second, 4);
  });
  ASSERT_EQ(got[0].size(), 40u);
  for (size_t m = 1; m < got.size(); ++m) EXPECT_EQ(got[m], got[0]) << "mesh " << m;
}

TEST(RtlProtocols, EveryShellDeliversEveryFlitAtSaturationWithOneFlitBuffers) {
  NocConfig cfg = mesh(4, 4, 1);
  TrafficConfig t;
  t.injection_rate = 0.6;
  t.pattern = TrafficPattern::kHotspot;
  t.hotspot_fraction = 0.5;
  std::vector<std::unique_ptr<SyntheticTraffic>> traffic;
  for (int m = 0; m < 3; ++m) traffic.push_back(std::make_unique<SyntheticTraffic>(MeshGeometry{4, 4}, t));
  // One generator per mesh, all seeded alike: the same packets offered to each.
  const auto got = run_meshes(cfg, shells(), 3000, [&](size_t m, uint64_t c, const Send& send) {
    SyntheticTraffic& g = *traffic[m];
    if (g.next_cycle() == c) g.emit(c, [&](int a, int b) { send(a, b, 4); });
  });
  ASSERT_GT(got[0].size(), 1000u);
  for (size_t m = 1; m < got.size(); ++m) EXPECT_EQ(got[m].size(), got[0].size()) << kShells[m];
}

TEST(RtlProtocols, TheValidReadyShellCrossesSlowLinks) {
  NocConfig cfg = mesh(4, 4, 4);
  LinkSpec slow;
  slow.latency_cycles = 3;
  slow.bandwidth_flits_per_cycle = 1.0 / 3;
  for (int y = 0; y < 4; ++y) {  // a slow seam between columns 1 and 2, both ways
    cfg.set_link(cfg.width * y + 1, kEast, slow);
    cfg.set_link(cfg.width * y + 2, kWest, slow);
  }
  std::vector<std::pair<int, int>> pairs;  // the same 1000 packets, one every 3 cycles, to both
  std::mt19937 rng(3);
  while (pairs.size() < 1000) {
    const int a = static_cast<int>(rng() % 16), b = static_cast<int>(rng() % 16);
    if (a != b) pairs.emplace_back(a, b);
  }
  const auto got = run_meshes(cfg, {shells()[0], shells()[1]}, 3000, [&](size_t, uint64_t c, const Send& send) {
    if (c % 3 == 0) send(pairs[c / 3].first, pairs[c / 3].second, 4);
  });
  EXPECT_EQ(got[0].size(), 1000u);
  EXPECT_EQ(got[1].size(), 1000u);
}

TEST(RtlProtocols, ACreditRouterWithoutLinkStrapsRefusesSlowLinks) {
  NocConfig cfg = mesh(3, 3, 4);
  LinkSpec slow;
  slow.bandwidth_flits_per_cycle = 0.5;
  cfg.set_link(4, kEast, slow);
  try {
    PinMesh m("mesh", cfg, rtl::described_factory("la_credit", [](int) { return true; }, {}));
    ADD_FAILURE() << "a slow link was accepted";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'la_credit' (credit protocol) has no link-speed straps"), std::string::npos) << msg;
    EXPECT_NE(msg.find("the E link of router 4 takes 2.00 cycles per flit"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

/// The look-ahead router's own description with the payload field `payload_bits` wide.
rtl::RouterDescription described(int payload_bits, int dst_bits = 8) {
  return rtl::RouterDescription::parse(
      "mine", R"({"protocol": "valid_stop", "max_buffer_flits": 4, "flit": {"head": 0, "tail": 1, "dst_x": [2, )" +
                  std::to_string(dst_bits) + R"(], "dst_y": [10, 8], "payload": [21, )" + std::to_string(payload_bits) +
                  "]}}");
}

TEST(FlitFormat, AFieldAcrossTheHalvesOfAWideFlitKeepsItsBitsAndNoOthers) {
  rtl::FlitBits b;
  b.w = {~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}, 0, 0, 0, 0, 0};
  const rtl::Field f{50, 42};  // bits 50..91: 14 in the first word, 28 in the second
  f.put(b, 0);
  EXPECT_EQ(b.w[0], (uint64_t{1} << 50) - 1);
  EXPECT_EQ(b.w[1], ~((uint64_t{1} << 28) - 1));
  EXPECT_EQ(b.w[2], ~uint64_t{0});
  f.put(b, 0x2AAAAAAAAAAull);  // 42 bits, alternating
  EXPECT_EQ(f.get(b), 0x2AAAAAAAAAAull);
  EXPECT_EQ(b.w[0] >> 50, 0x2AAAAAAAAAAull & 0x3fff);
  EXPECT_EQ(b.w[1] & ((uint64_t{1} << 28) - 1), 0x2AAAAAAAAAAull >> 14);
  const rtl::Field top{448, 64};  // the last word of a 512-bit flit
  top.put(b, 0x0123456789abcdefull);
  EXPECT_EQ(b.w[7], 0x0123456789abcdefull);
  EXPECT_EQ(top.get(b), 0x0123456789abcdefull);
}

TEST(FlitFormat, APayloadOf42BitsOrMoreCarriesTheMeshIdsUnchanged) {
  const rtl::RouterDescription d = described(43);
  rtl::FlitFormat f(d, 0, MeshGeometry{4, 4});
  const uint64_t la = LaFlit::make(true, false, 3, 2, kEast, (uint64_t{12345} << 16) | 7);
  const rtl::FlitBits w = f.to_router(la);
  EXPECT_EQ(d.payload.get(w), (uint64_t{12345} << 16) | 7);
  EXPECT_EQ(LaFlit::payload(f.from_router(w, kEast)), LaFlit::payload(la));
  EXPECT_EQ(f.error(), "");
}

TEST(FlitFormat, ANarrowPayloadCarriesAHandleAndTheIdsComeBackInAnyOrder) {
  const rtl::RouterDescription d = described(8);
  rtl::FlitFormat f(d, 5, MeshGeometry{4, 4});
  std::vector<uint64_t> in;
  std::vector<rtl::FlitBits> words;
  for (uint64_t k = 0; k < 200; ++k) {  // 200 flits inside the router at once, fewer than 2^8
    in.push_back(LaFlit::make(k % 4 == 0, k % 4 == 3, 3, 3, kEast, (k * 977) << 16 | k));
    words.push_back(f.to_router(in.back()));
    EXPECT_LT(d.payload.get(words.back()), 256u);
  }
  EXPECT_EQ(f.held(), 200u);
  for (size_t k = 200; k-- > 0;) {  // out in reverse order
    const uint64_t back = f.from_router(words[k], kEast);
    EXPECT_EQ(LaFlit::payload(back), LaFlit::payload(in[k])) << k;
    EXPECT_EQ(LaFlit::head(back), LaFlit::head(in[k])) << k;
    EXPECT_EQ(LaFlit::tail(back), LaFlit::tail(in[k])) << k;
  }
  EXPECT_EQ(f.held(), 0u);
  EXPECT_EQ(f.error(), "");
}

TEST(FlitFormat, AReusedHandleAndAFullTableAreErrors) {
  const rtl::RouterDescription d = described(8);
  {
    rtl::FlitFormat f(d, 0, MeshGeometry{4, 4});
    const rtl::FlitBits w = f.to_router(LaFlit::make(true, true, 1, 0, kEast, 99));
    f.from_router(w, kEast);
    f.from_router(w, kEast);  // the same flit again: a duplicate
    EXPECT_NE(f.error().find("payload handle 0 names no flit it holds"), std::string::npos) << f.error();
  }
  rtl::FlitFormat f(d, 0, MeshGeometry{4, 4});
  for (int k = 0; k < 257; ++k) f.to_router(LaFlit::make(true, true, 1, 0, kEast, 99));
  EXPECT_NE(f.error().find("holds more than 256 flits, all its 8-bit payload can name"), std::string::npos)
      << f.error();
}

TEST(FlitFormat, DescriptionsThatCannotNameEveryFlitOrNodeAreRefused) {
  EXPECT_THROW(described(7), ConfigError);  // fewer than 8 payload bits
  const rtl::DescribedRouter r{described(8, 2), {}};
  EXPECT_NO_THROW(rtl::check_fits(r, 4, 4, 4));
  try {
    rtl::check_fits(r, 4, 5, 4);
    ADD_FAILURE() << "a 5-wide mesh with a 2-bit dst_x was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("names destinations in 2 bits (flit.dst_x), too few for a 5x4 mesh"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nmpsim::noc
