// The router-agnostic checks (noc/pin_checks.h) catch a broken router from its pins alone: a
// pin-level router whose outputs are tampered with (an XY violation, a dropped flit, a duplicated
// flit, a flit sent without a credit) in an otherwise correct mesh. One SystemC simulation per
// process, as SystemC allows: each test is its own ctest case.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "nmpsim/noc/flit_word.h"
#include "nmpsim/noc/pin_checks.h"
#include "nmpsim/noc/pin_mesh.h"
#include "nmpsim/noc/sc_router.h"
#include "nmpsim/noc/testbench.h"
#include "nmpsim/noc/traffic.h"

namespace nmpsim::noc {
namespace {

constexpr int kBroken = 4;  // the centre of a 3x3 mesh

TestbenchConfig busy_3x3() {
  TestbenchConfig cfg;
  cfg.noc.width = 3;
  cfg.noc.height = 3;
  cfg.noc.watchdog_cycles = 500;
  cfg.traffic.injection_rate = 0.4;
  cfg.warmup_cycles = 0;
  cfg.measure_cycles = 1500;
  cfg.max_drain_cycles = 5000;
  return cfg;
}

/// Runs busy_3x3() with ScRouters everywhere; the one at kBroken gets `tamper`.
TestbenchResult run_with(const ScRouter::OutputTamper& tamper, const TestbenchConfig& cfg = busy_3x3()) {
  RouterFactory sc = sc_router_factory();
  return run_pin_testbench(cfg, [&](const std::string& name, const RouterParams& p) {
    std::unique_ptr<RouterPins> r = sc(name, p);
    if (p.node == kBroken) static_cast<ScRouter*>(r.get())->set_output_tamper(tamper);
    return r;
  });
}

std::string everything(const TestbenchResult& r) { return r.conservation_error + " | " + r.stall_report; }

TEST(PinChecks, ACorrectRouterPassesThem) {
  const TestbenchResult r = run_with([](uint64_t, uint64_t(&)[kMaxPorts], uint32_t(&)[kMaxPorts]) {});
  EXPECT_TRUE(r.drained);
  EXPECT_EQ(r.conservation_error, "");
  EXPECT_GT(r.ejected_flits, 1000u);
}

TEST(PinChecks, CatchAFlitLeavingOffItsXyPath) {
  bool done = false;
  const TestbenchResult r = run_with([&](uint64_t, uint64_t(&flit)[kMaxPorts], uint32_t(&)[kMaxPorts]) {
    if (!done && flit_word_valid(flit[kEast]) && !flit_word_valid(flit[kSouth])) {
      std::swap(flit[kEast], flit[kSouth]);  // Y before X
      done = true;
    }
  });
  ASSERT_TRUE(done);
  EXPECT_NE(r.conservation_error.find("router 4 (1,1) sent flit"), std::string::npos) << everything(r);
  EXPECT_NE(r.conservation_error.find("on port S; XY routing takes E"), std::string::npos) << everything(r);
}

TEST(PinChecks, CatchADroppedFlit) {
  bool done = false;
  std::string dropped;
  const TestbenchResult r = run_with([&](uint64_t, uint64_t(&flit)[kMaxPorts], uint32_t(&)[kMaxPorts]) {
    for (int p = 0; p < kNumMeshDirs && !done; ++p)
      if (flit_word_valid(flit[p]) && !decode_flit_word(flit[p], MeshGeometry{3, 3}).head()) {  // a body or tail flit
        const Flit f = decode_flit_word(flit[p], MeshGeometry{3, 3});
        dropped = "packet " + std::to_string(f.packet) + " flit " + std::to_string(f.seq);
        flit[p] = 0;
        done = true;
      }
  });
  ASSERT_TRUE(done);
  // The next flit of that packet leaves out of sequence: the router is named at once.
  EXPECT_NE(r.conservation_error.find("router 4 (1,1) sent flit"), std::string::npos) << everything(r);
  EXPECT_NE(r.conservation_error.find("out of its packet's sequence"), std::string::npos) << everything(r);
  EXPECT_NE(r.conservation_error.find(dropped.substr(0, dropped.find(" flit"))), std::string::npos) << everything(r);
}

TEST(PinChecks, ListTheFlitsARouterReceivedAndNeverSent) {
  // What the watchdog's stall report says about a router that swallowed the last flits it got.
  PinChecker checks;
  const MeshGeometry geo{3, 3};
  checks.configure(geo, 2, 4);
  checks.watch(kBroken);
  Flit a;
  a.packet = 7;
  a.dst = 5;
  a.flags = kHeadFlit;
  Flit b = a;
  b.seq = 1;
  b.flags = kTailFlit;
  checks.received(kBroken, a, 10);
  checks.received(kBroken, b, 11);
  EXPECT_EQ(checks.sent(kBroken, kEast, a), "");
  EXPECT_EQ(checks.held(kBroken), "packet 7 flit 1 since cycle 11");
  EXPECT_EQ(checks.sent(kBroken, kEast, b), "");
  EXPECT_EQ(checks.held(kBroken), "");
  EXPECT_NE(checks.sent(kBroken, kEast, b).find("does not hold"), std::string::npos);
  // 4 credits: the fifth head-and-tail packet on East VC 0 has none left.
  for (uint32_t p = 10; p < 15; ++p) {
    Flit f;
    f.packet = p;
    f.dst = 5;
    f.flags = kHeadFlit | kTailFlit;
    checks.received(kBroken, f, 20);
    const std::string broken = checks.sent(kBroken, kEast, f);
    if (p < 12)
      EXPECT_EQ(broken, "") << p;  // packet 7 took 2 of the 4 credits
    else
      EXPECT_NE(broken.find("without a credit"), std::string::npos) << p;
  }
  EXPECT_EQ(checks.credit_returned(kBroken, kEast, 0), "");
  for (int i = 0; i < 4; ++i) checks.credit_returned(kBroken, kEast, 1);
  EXPECT_NE(checks.credit_returned(kBroken, kEast, 1).find("more credits"), std::string::npos);
}

TEST(PinChecks, CatchADuplicatedFlit) {
  uint64_t last[kNumPorts] = {};
  bool done = false;
  const TestbenchResult r = run_with([&](uint64_t, uint64_t(&flit)[kMaxPorts], uint32_t(&)[kMaxPorts]) {
    for (int p = 0; p < kNumMeshDirs && !done; ++p) {
      if (!flit_word_valid(flit[p]) && flit_word_valid(last[p])) {
        flit[p] = last[p];  // the flit of the previous cycle, once more
        done = true;
      }
      last[p] = flit[p];
    }
  });
  ASSERT_TRUE(done);
  EXPECT_NE(r.conservation_error.find("router 4 (1,1) sent flit"), std::string::npos) << everything(r);
  EXPECT_NE(r.conservation_error.find("which it does not hold (duplicated or forged)"), std::string::npos)
      << everything(r);
}

TEST(PinChecks, CatchAFlitSentWithoutACredit) {
  // The router believes it has 16 more credits on East VC 0 than the downstream buffer has slots.
  TestbenchConfig cfg = busy_3x3();
  cfg.traffic.pattern = parse_traffic_pattern("hotspot");
  cfg.traffic.hotspot_node = 5;  // east of the broken router
  cfg.traffic.hotspot_fraction = 1.0;
  cfg.traffic.injection_rate = 0.2;
  ScRouter* broken = nullptr;
  RouterFactory sc = sc_router_factory();
  const TestbenchResult r = run_pin_testbench(cfg, [&](const std::string& name, const RouterParams& p) {
    std::unique_ptr<RouterPins> rp = sc(name, p);
    if (p.node == kBroken) {
      broken = static_cast<ScRouter*>(rp.get());
      broken->set_output_tamper([&](uint64_t cycle, uint64_t(&)[kMaxPorts], uint32_t(&)[kMaxPorts]) {
        if (cycle == 0) broken->router().debug_set_credits(kEast, 0, cfg.noc.buffer_flits + 16);
      });
    }
    return rp;
  });
  EXPECT_NE(r.conservation_error.find("router 4 (1,1) sent flit"), std::string::npos) << everything(r);
  EXPECT_NE(r.conservation_error.find("on E VC 0 without a credit"), std::string::npos) << everything(r);
  // The extra flits overflow router 5's buffer and the mesh stalls: the stall report starts with the
  // violation that caused it, then the stall and the routers that hold flits, on one line.
  ASSERT_TRUE(r.stalled) << everything(r);
  const std::string& s = r.stall_report;
  EXPECT_EQ(s.rfind("noc: check failed at cycle ", 0), 0u) << s;
  const size_t violation = s.find("router 4 (1,1) sent flit"), stall = s.find("; then a stall at cycle ");
  EXPECT_NE(violation, std::string::npos) << s;
  EXPECT_NE(stall, std::string::npos) << s;
  EXPECT_LT(violation, stall) << s;
  EXPECT_NE(s.find("Stuck: pin-level router", stall), std::string::npos) << s;
  EXPECT_EQ(s.find('\n'), std::string::npos) << s;
}

}  // namespace
}  // namespace nmpsim::noc
