// Co-simulation of one router: the Verilated SystemVerilog router (rtl_checks/rtl/nmp_router.sv)
// against noc::Router behind the same pins (noc::ScRouter), fed identical seeded random flit
// streams on all five inputs with random downstream back-pressure. Every output pin must agree in
// every cycle. Each TEST is its own process (one SystemC elaboration); a TEST runs several
// routers side by side, each with its own seed and configuration.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "nmpsim/base/rng.h"
#include "nmpsim/rtl_checks/router_cosim.h"

namespace nmpsim::rtl {
namespace {

constexpr uint64_t kCycles = 100000;

struct Scenario {
  std::string label;
  CosimConfig cfg;
};

/// A random configuration inside the RTL's capacities: mesh size and position (corners, edges,
/// interior), VCs, buffer depth, router delay, slow output links, load and back-pressure.
CosimConfig random_config(uint64_t seed) {
  base::Rng rng(seed * 7919 + 17);
  const RtlCapacity cap = rtl_capacity();
  CosimConfig c;
  c.seed = seed;
  c.cycles = kCycles;
  c.noc.width = 1 + static_cast<int>(rng.below(8));
  c.noc.height = 1 + static_cast<int>(rng.below(8));
  c.node = static_cast<int>(rng.below(static_cast<uint64_t>(c.noc.width * c.noc.height)));
  c.noc.vcs = 1 + static_cast<int>(rng.below(static_cast<uint64_t>(cap.max_vcs)));
  const int depths[] = {1, 2, 3, 4, 5, 8, 13, 16, cap.max_buffer_flits};
  c.noc.buffer_flits = depths[rng.below(std::size(depths))];
  c.noc.router_delay_cycles = 1 + static_cast<int>(rng.below(static_cast<uint64_t>(cap.max_router_delay_cycles)));
  const double bandwidths[] = {1.0, 1.0, 0.5, 0.3, 1.0 / 3.7};
  noc::MeshGeometry geo{c.noc.width, c.noc.height};
  for (int d = 0; d < noc::kNumMeshDirs; ++d) {
    if (geo.neighbour(c.node, d) >= 0)
      c.noc.set_link(c.node, d, noc::LinkSpec{1, bandwidths[rng.below(std::size(bandwidths))]});
    c.drain_prob[d] = 0.05 + 0.95 * rng.uniform();
  }
  c.inject_prob = 0.1 + 0.9 * rng.uniform();
  c.max_packet_flits = 1 + static_cast<int>(rng.below(9));
  return c;
}

void expect_agreement(const Scenario& s, const CosimReport& r) {
  SCOPED_TRACE(s.label);
  std::printf("%s: %llu flits in; out N %llu E %llu S %llu W %llu L %llu; %llu packets; %llu cycles compared\n",
              s.label.c_str(), static_cast<unsigned long long>(r.flits_in),
              static_cast<unsigned long long>(r.flits_out[0]), static_cast<unsigned long long>(r.flits_out[1]),
              static_cast<unsigned long long>(r.flits_out[2]), static_cast<unsigned long long>(r.flits_out[3]),
              static_cast<unsigned long long>(r.flits_out[4]), static_cast<unsigned long long>(r.packets_out),
              static_cast<unsigned long long>(r.cycles_compared));
  EXPECT_FALSE(r.mismatch) << "RTL and SystemC routers diverge: " << r.first_mismatch;
  EXPECT_EQ(r.harness_error, "");
  EXPECT_EQ(r.router_error, "");
  EXPECT_TRUE(r.drained) << "flits sent in " << r.flits_in;
  EXPECT_GE(r.cycles_compared, kCycles);
  uint64_t out = 0;
  for (uint64_t f : r.flits_out) out += f;
  EXPECT_EQ(out, r.flits_in);
  EXPECT_GT(r.flits_out[noc::kLocal], 0u);
  // Enough traffic that the comparison means something: every packet is at least one flit, and
  // injection runs at >= 10% per port per cycle, throttled only by back-pressure.
  EXPECT_GT(r.flits_in, kCycles / 100) << "too little traffic to compare";
}

void run_scenarios(const std::vector<Scenario>& scenarios) {
  sc_core::sc_clock clk("clk", sc_core::sc_time(1, sc_core::SC_NS), 0.5, sc_core::sc_time(500, sc_core::SC_PS), false);
  std::vector<std::unique_ptr<RouterCosim>> benches;
  for (size_t i = 0; i < scenarios.size(); ++i)
    benches.push_back(std::make_unique<RouterCosim>(("bench_" + std::to_string(i)).c_str(), scenarios[i].cfg, clk));
  auto all_done = [&] {
    for (const auto& b : benches)
      if (!b->done()) return false;
    return true;
  };
  while (!all_done() && sc_core::sc_time_stamp() < sc_core::sc_time(10.0 * kCycles, sc_core::SC_NS))
    sc_core::sc_start(sc_core::sc_time(10000, sc_core::SC_NS));
  for (size_t i = 0; i < benches.size(); ++i) expect_agreement(scenarios[i], benches[i]->report());
}

std::string describe(const CosimConfig& c) {
  std::string s = "seed " + std::to_string(c.seed) + ": node " + std::to_string(c.node) + " of " +
                  std::to_string(c.noc.width) + "x" + std::to_string(c.noc.height) + ", " + std::to_string(c.noc.vcs) +
                  " VCs x " + std::to_string(c.noc.buffer_flits) + " flits, delay " +
                  std::to_string(c.noc.router_delay_cycles) + ", links";
  noc::MeshGeometry geo{c.noc.width, c.noc.height};
  for (int d = 0; d < noc::kNumMeshDirs; ++d)
    if (geo.neighbour(c.node, d) >= 0)
      s += std::string(" ") + noc::port_name(d) + "=" + std::to_string(c.noc.link(c.node, d).bandwidth_flits_per_cycle);
  return s;
}

TEST(RtlRouterCosim, RandomConfigurationsAndSeedsAgreeFlitForFlit) {
  std::vector<Scenario> scenarios;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    CosimConfig c = random_config(seed);
    scenarios.push_back({describe(c), c});
  }
  run_scenarios(scenarios);
}

TEST(RtlRouterCosim, CornerConfigurationsAgreeFlitForFlit) {
  const RtlCapacity cap = rtl_capacity();
  std::vector<Scenario> s;
  auto add = [&](const std::string& label, auto tweak) {
    CosimConfig c;
    c.seed = 1000 + s.size();
    c.cycles = kCycles;
    c.noc.width = 3;
    c.noc.height = 3;
    c.node = 4;  // the centre: all four directions
    tweak(c);
    s.push_back({label + " (" + describe(c) + ")", c});
  };
  add("defaults", [](CosimConfig&) {});
  add("one VC, one-flit buffers", [](CosimConfig& c) {
    c.noc.vcs = 1;
    c.noc.buffer_flits = 1;
  });
  add("router delay 1: arrivals bypass to the switch", [](CosimConfig& c) { c.noc.router_delay_cycles = 1; });
  add("largest capacities", [&](CosimConfig& c) {
    c.noc.vcs = cap.max_vcs;
    c.noc.buffer_flits = cap.max_buffer_flits;
    c.noc.router_delay_cycles = cap.max_router_delay_cycles;
  });
  add("saturated: downstream almost stalled", [](CosimConfig& c) {
    c.inject_prob = 1.0;
    for (double& p : c.drain_prob) p = 0.05;
  });
  add("slow links: 3.7 cycles per flit East, 2 West", [](CosimConfig& c) {
    c.noc.set_link(c.node, noc::kEast, noc::LinkSpec{1, 1.0 / 3.7});
    c.noc.set_link(c.node, noc::kWest, noc::LinkSpec{2, 0.5});
    c.inject_prob = 0.9;
  });
  add("single-flit packets at full load", [](CosimConfig& c) {
    c.max_packet_flits = 1;
    c.inject_prob = 1.0;
    for (double& p : c.drain_prob) p = 1.0;
  });
  add("corner router of a 1x1 mesh: local only", [](CosimConfig& c) {
    c.noc.width = c.noc.height = 1;
    c.node = 0;
  });
  run_scenarios(s);
}

TEST(RtlRouter, RefusesConfigurationsBeyondItsCapacities) {
  const RtlCapacity cap = rtl_capacity();
  noc::NocConfig ok;
  ok.vcs = cap.max_vcs;
  ok.buffer_flits = cap.max_buffer_flits;
  ok.router_delay_cycles = cap.max_router_delay_cycles;
  EXPECT_NO_THROW(check_rtl_fits(ok));
  for (int field = 0; field < 3; ++field) {
    noc::NocConfig bad = ok;
    const char* name = field == 0 ? "MAX_VCS" : field == 1 ? "MAX_DEPTH" : "MAX_DELAY";
    (field == 0 ? bad.vcs : field == 1 ? bad.buffer_flits : bad.router_delay_cycles) += 1;
    try {
      check_rtl_fits(bad);
      ADD_FAILURE() << name << " + 1 accepted";
    } catch (const noc::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("-DNMPSIM_RTL_"), std::string::npos) << e.what();
    }
  }
}

TEST(RtlRouterCosim, CheckerReportsFirstDivergence) {
  // A fault only the SystemC router sees (a spurious East VC 0 credit at cycle 3000, while East is
  // congested) must show up as a mismatch no earlier than the fault, naming cycle, port and flit.
  CosimConfig c;
  c.seed = 42;
  c.cycles = 6000;
  c.max_drain_cycles = 2000;
  c.noc.width = c.noc.height = 3;
  c.node = 3;  // (0,1): East has traffic
  c.inject_prob = 0.8;
  c.drain_prob[noc::kEast] = 0.3;  // East backs up, so its credits are the bottleneck
  c.fault_cycle = 3000;
  sc_core::sc_clock clk("clk", sc_core::sc_time(1, sc_core::SC_NS), 0.5, sc_core::sc_time(500, sc_core::SC_PS), false);
  RouterCosim bench("bench", c, clk);
  sc_core::sc_start(sc_core::sc_time(10000, sc_core::SC_NS));
  const CosimReport r = bench.report();
  ASSERT_TRUE(r.mismatch) << "cycles " << r.cycles_compared << " in " << r.flits_in << " E " << r.flits_out[1]
                          << " drained " << r.drained << " " << r.harness_error;
  const std::string& m = r.first_mismatch;
  EXPECT_EQ(m.rfind("cycle ", 0), 0u) << m;
  std::printf("first mismatch: %s\n", m.c_str());
  const uint64_t cycle = std::stoull(m.substr(6));
  EXPECT_GE(cycle, 3000u) << m;
  EXPECT_LT(cycle, 3100u) << m;
  EXPECT_NE(m.find("port "), std::string::npos) << m;
  EXPECT_NE(m.find("sc "), std::string::npos) << m;
  EXPECT_NE(m.find("rtl "), std::string::npos) << m;
}

}  // namespace
}  // namespace nmpsim::rtl
