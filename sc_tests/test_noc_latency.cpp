// Zero-load latency against the closed form, XY paths, packetisation of messages.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "nmpsim/base/rng.h"
#include "noc_test_util.h"

namespace nmpsim::noc {
namespace {

using testing::closed_form_latency;
using testing::run_until_idle;
using testing::single_message_latency;

NocConfig deep_buffers(int w, int h, int router_delay, int link_delay) {
  NocConfig cfg;
  cfg.width = w;
  cfg.height = h;
  cfg.router_delay_cycles = router_delay;
  cfg.link_delay_cycles = link_delay;
  cfg.buffer_flits = 32;  // above the credit round trip, so a lone packet never waits for credits
  cfg.max_packet_flits = 64;
  return cfg;
}

TEST(NocZeroLoad, HandComputedExample) {
  // 4x4, R=2, L=1, (0,0) -> (3,2): H = 5 hops, 6 routers. Head: 1 (inject) + 5*(1+1+1) + 2 = 18;
  // a 4-flit packet's tail arrives 3 cycles later: 21 = (H+1)R + H*L + F.
  NocConfig cfg = deep_buffers(4, 4, 2, 1);
  cfg.flit_bytes = 16;
  EXPECT_EQ(single_message_latency(cfg, 0, 11, 64), 21u);
  EXPECT_EQ(closed_form_latency(cfg, 0, 11, 4), 21u);
}

TEST(NocZeroLoad, MatchesClosedFormForManyPairsSizesAndDelays) {
  base::Rng rng(7);
  int checked = 0;
  for (int r = 1; r <= 4; ++r) {
    for (int l = 1; l <= 3; ++l) {
      NocConfig cfg = deep_buffers(6, 5, r, l);
      for (int trial = 0; trial < 12; ++trial) {
        const int src = static_cast<int>(rng.below(30));
        int dst = static_cast<int>(rng.below(29));
        if (dst >= src) ++dst;
        const uint64_t flits = 1 + rng.below(20);
        const MeshGeometry geo{6, 5};
        const uint64_t hops = static_cast<uint64_t>(geo.hops(src, dst));
        const uint64_t expected = (hops + 1) * r + hops * l + flits;  // the textbook form for full-speed links
        ASSERT_EQ(closed_form_latency(cfg, src, dst, flits), expected);
        ASSERT_EQ(single_message_latency(cfg, src, dst, flits * cfg.flit_bytes), expected)
            << "R=" << r << " L=" << l << " " << src << "->" << dst << " flits=" << flits;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 144);
}

TEST(NocZeroLoad, SlowLinksAddSerialisationAndPaceTheTail) {
  // A die boundary at x=1|2 whose links carry 1/3 flit per cycle, and a slower column of
  // vertical links with 1/2 flit per cycle and latency 4.
  NocConfig cfg = deep_buffers(4, 4, 2, 1);
  const MeshGeometry geo{4, 4};
  for (int y = 0; y < 4; ++y) {
    cfg.set_link(geo.id(1, y), kEast, LinkSpec{1, 1.0 / 3});
    cfg.set_link(geo.id(2, y), kWest, LinkSpec{1, 1.0 / 3});
  }
  for (int y = 0; y < 3; ++y) cfg.set_link(geo.id(3, y), kSouth, LinkSpec{4, 0.5});
  for (int src : {0, 1, 4, 13}) {
    for (int dst : {2, 3, 15, 11}) {
      for (uint64_t flits : {1u, 2u, 7u}) {
        EXPECT_EQ(single_message_latency(cfg, src, dst, flits * cfg.flit_bytes),
                  closed_form_latency(cfg, src, dst, flits))
            << src << "->" << dst << " flits=" << flits;
      }
    }
  }
  // Spot check by hand: (0,0) -> (2,0), 3 flits. Links: (0,0)->(1,0) k=1, (1,0)->(2,0) k=3.
  // Head: 1 + (1+1+1) + (1+1+3) + 2 = 11; tail 2*3 later = 17.
  EXPECT_EQ(single_message_latency(cfg, 0, 2, 3 * cfg.flit_bytes), 17u);
}

TEST(NocZeroLoad, MessagesSplitIntoPacketsStreamBackToBack) {
  // 100 flits cut into packets of 16: packets follow each other at one flit per cycle,
  // so the message takes the same time as one 100-flit packet.
  NocConfig cfg = deep_buffers(5, 5, 2, 1);
  cfg.max_packet_flits = 16;
  const uint64_t bytes = 100 * cfg.flit_bytes - 3;  // 100 flits, the last one partly filled
  EXPECT_EQ(single_message_latency(cfg, 0, 24, bytes), closed_form_latency(cfg, 0, 24, 100));
}

TEST(NocZeroLoad, SelfAndEmptyMessages) {
  NocConfig cfg = deep_buffers(3, 3, 2, 1);
  EXPECT_EQ(single_message_latency(cfg, 4, 4, 4096), 0u);  // a node's message to itself skips the NoC
  EXPECT_EQ(single_message_latency(cfg, 0, 8, 0), closed_form_latency(cfg, 0, 8, 1));  // header-only: one flit
}

TEST(NocRouting, PacketsFollowExactlyTheXThenYPath) {
  NocConfig cfg = deep_buffers(7, 6, 1, 1);
  const MeshGeometry geo{7, 6};
  for (int src = 0; src < geo.width * geo.height; src += 5) {
    for (int dst = 0; dst < geo.width * geo.height; dst += 3) {
      if (src == dst) continue;
      Network net(cfg);
      std::vector<std::pair<int, int>> used;  // (from node, to node)
      net.set_link_observer([&](int from, int dir, const Flit& f, uint64_t) {
        if (f.head()) used.emplace_back(from, geo.neighbour(from, dir));
      });
      net.send(src, dst, 3 * cfg.flit_bytes, 0);
      run_until_idle(net, 0);
      // Expected: walk along x first, then along y.
      std::vector<std::pair<int, int>> expected;
      int x = geo.x(src), y = geo.y(src);
      while (x != geo.x(dst)) {
        const int nx = x + (geo.x(dst) > x ? 1 : -1);
        expected.emplace_back(geo.id(x, y), geo.id(nx, y));
        x = nx;
      }
      while (y != geo.y(dst)) {
        const int ny = y + (geo.y(dst) > y ? 1 : -1);
        expected.emplace_back(geo.id(x, y), geo.id(x, ny));
        y = ny;
      }
      ASSERT_EQ(used, expected) << src << "->" << dst;
      EXPECT_EQ(net.flit_link_traversals(), 3u * expected.size());
    }
  }
}

TEST(NocConfigValidation, RejectsBadParametersWithTheFieldName) {
  auto expect_error = [](NocConfig cfg, const std::string& needle) {
    try {
      cfg.validate();
      FAIL() << "accepted a config that should fail with " << needle;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  NocConfig c;
  c.width = 0;
  c.height = 4;
  expect_error(c, "1x1");
  c = NocConfig{};
  c.vcs = 0;
  expect_error(c, "vcs");
  c = NocConfig{};
  c.buffer_flits = 0;
  expect_error(c, "buffer_flits");
  c = NocConfig{};
  c.router_delay_cycles = 0;
  expect_error(c, "router_delay_cycles");
  c = NocConfig{};
  c.set_link(7, kEast, LinkSpec{1, 0.5});  // (7,0) is on the east edge of an 8x8 mesh
  expect_error(c, "does not exist");
  c = NocConfig{};
  c.set_link(0, kEast, LinkSpec{1, 1.5});
  expect_error(c, "bandwidth_flits_per_cycle");
  EXPECT_THROW(Network(NocConfig{}).send(0, 64, 10, 0), std::out_of_range);
}

TEST(NocMesh, BuildsFromOneByOneToSixtyFourBySixtyFour) {
  for (auto [w, h] : {std::pair{1, 1}, {1, 9}, {9, 1}, {64, 64}}) {
    NocConfig cfg;
    cfg.width = w;
    cfg.height = h;
    Network net(cfg);
    EXPECT_EQ(net.nodes(), w * h);
    const int last = w * h - 1;
    if (last > 0) {
      EXPECT_EQ(single_message_latency(cfg, 0, last, 64), closed_form_latency(cfg, 0, last, 4));
    }
  }
}

}  // namespace
}  // namespace nmpsim::noc
