// The description of a router of your own (docs/RTL.md "Bring your own router"): every field's
// one-line errors, packets framed by a length field instead of head and tail bits, the mesh limits
// a description implies, and loading routers from plugins. Expectations are written by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "nmpsim/noc/la_router.h"
#include "nmpsim/noc/noc_config.h"
#include "nmpsim/rtl_checks/described_router.h"
// verilated.h (under flit_pins.h) sees SystemC and then expects sc_time_stamp unqualified, as in a
// Verilated SystemC model's translation unit.
using sc_core::sc_time_stamp;
#include "nmpsim/rtl_checks/flit_pins.h"  // NOLINT: after the using-declaration above

namespace nmpsim::rtl {
namespace {

using noc::ConfigError;
using noc::LaFlit;

/// A valid description with `extra` fields merged over it (a JSON object's members, text).
std::string with(const std::string& top, const std::string& flit = R"("head": 0, "tail": 1)") {
  return R"({"protocol": "valid_ready", "flit": {)" + flit +
         R"(, "dst_x": [2, 4], "dst_y": [6, 4], "payload": [10, 42]})" + (top.empty() ? "" : ", " + top) + "}";
}

/// The message parse() throws for `json`, or "" when it accepts it.
std::string error_of(const std::string& json) {
  try {
    RouterDescription::parse("mine", json);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RouterDescription, EveryNewFieldHasAOneLineErrorForEachWayItCanBeWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // packet length
      {with("", R"("length": "3")"), "flit.length: expected a bit index or [position, width]"},
      {with("", R"("length": [50, 65])"), "flit.length: must be 1 to 64 bits within the 64-bit flit word"},
      {with("", R"("length": [8, 4])"), "flit.length: overlaps flit.dst_y"},
      {with("", R"("length": [56, 4], "length_counts": "flits")"),
       "flit.length_counts: 'flits' is not one of after_head, total"},
      {with("", R"("head": 0, "tail": 1, "length_counts": "total")"), "flit.length_counts: given without flit.length"},
      {with("", R"("length": [56, 4], "head": 0)"), "flit.tail: give both head and tail, or neither (with a length)"},
      {with("", R"("dst_z": 0)"), "flit.head: missing"},
      // the valid/ready variant without the hold rule
      {with(R"("valid_hold": "no")"), "valid_hold: must be true or false"},
      {R"({"protocol": "valid_stop", "valid_hold": false, "max_buffer_flits": 2, "flit": {"head": 0, "tail": 1, "dst_x": [2, 4], "dst_y": [6, 4], "payload": [10, 42]}})",
       "valid_hold: applies to protocol valid_ready only"},
      // reset polarity
      {with(R"("reset_active": 0)"), "reset_active: must be a string: one of high, low"},
      {with(R"("reset_active": "negative")"), "reset_active: 'negative' is not one of high, low"},
      // port map
      {with(R"("port_index": [0, 1, 2, 3, 4])"), "port_index: must give the router's index of each of north"},
      {with(R"("port_index": {"north": 0, "east": 1, "south": 2, "west": 3, "up": 4})"),
       "port_index: 'local' is missing"},
      {with(R"("port_index": {"north": 0, "east": 1, "south": 2, "west": 3, "local": 64})"),
       "port_index.local: must be an index in 0..63"},
      {with(R"("port_index": {"north": 0, "east": 1, "south": 2, "west": 1, "local": 4})"),
       "port_index.west: is also east's index"},
      // straps into slices and constants
      {with(R"("straps": ["x"])"), "straps: must be an object"},
      {with(R"("straps": {"cord[4:0]": "x"})"), "straps.cord[4:0]: not a pin, a bit (pin[3]) or a slice (pin[4 +: 4])"},
      {with(R"("straps": {"cord[0 +: 65]": "x"})"), "straps.cord[0 +: 65]: a slice is 1 to 64 bits wide"},
      {with(R"("straps": {"cord": "z"})"),
       "straps.cord: 'z' is not one of x, y, width, height, buffer_flits or a constant"},
      {with(R"("straps": {"cord[0 +: 2]": 4})"), "straps.cord[0 +: 2]: 4 does not fit 2 bits"},
      {with(R"("straps": {"cord": -1})"),
       "straps.cord: must be x, y, width, height, buffer_flits or a non-negative integer"},
      // buffer depth: optional, except with credits
      {with(R"("max_buffer_flits": 0)"), "max_buffer_flits: must be in 1..1024"},
      {R"({"protocol": "credit", "flit": {"head": 0, "tail": 1, "dst_x": [2, 4], "dst_y": [6, 4], "payload": [10, 42]}})",
       "max_buffer_flits: required with protocol credit"},
      {R"({"flit": {}})", "protocol: missing"},
  };
  for (const auto& [json, expected] : cases) {
    const std::string e = error_of(json);
    EXPECT_NE(e.find("router description 'mine': " + expected), std::string::npos) << json << "\n -> " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  // And what they accept.
  const RouterDescription d = RouterDescription::parse(
      "mine",
      with(R"("valid_hold": false, "reset_active": "low", "straps": {"cord[0 +: 4]": "x", "cord[4 +: 4]": "y", "id": 7},
                      "port_index": {"north": 3, "east": 2, "south": 4, "west": 1, "local": 0})",
           R"("length": [56, 4], "length_counts": "total")"));
  EXPECT_FALSE(d.valid_hold);
  EXPECT_TRUE(d.reset_low);
  EXPECT_TRUE(d.length_total);
  EXPECT_EQ(d.head.width, 0);
  EXPECT_EQ(d.max_buffer_flits, 0);
  EXPECT_EQ(d.port_index, (std::array<int, 5>{3, 2, 4, 1, 0}));
  ASSERT_EQ(d.straps.size(), 3u);
  EXPECT_EQ(d.straps[2].constant, 7u);
}

/// A length-framed description: no head or tail, the length (flits after the head) at bits 56..59.
RouterDescription framed() { return RouterDescription::parse("framed", with("", R"("length": [56, 4])")); }

TEST(FlitFormat, ALengthFieldCarriesThePacketsLengthAndFramesItOnTheWayOut) {
  const RouterDescription d = framed();
  std::vector<int> lengths(100, 0);
  lengths[7] = 3;  // packet 7: three flits
  lengths[9] = 1;  // packet 9: one
  FlitFormat f(d, 0, noc::MeshGeometry{4, 4}, [&](uint32_t p) { return lengths.at(p); });
  auto flit = [](uint32_t packet, int seq, bool head, bool tail) {
    return LaFlit::make(head, tail, 1, 0, noc::kEast, uint64_t{packet} << 16 | static_cast<uint64_t>(seq));
  };
  const FlitBits h = f.to_router(flit(7, 0, true, false));
  const FlitBits b = f.to_router(flit(7, 1, false, false));
  const FlitBits t = f.to_router(flit(7, 2, false, true));
  const FlitBits one = f.to_router(flit(9, 0, true, true));
  EXPECT_EQ(d.length.get(h), 2u);  // flits after the head
  EXPECT_EQ(d.length.get(one), 0u);
  // Out on East: head, body, tail by counting; a presented flit (keep) does not advance the count.
  uint64_t out = f.from_router(h, noc::kEast, /*keep=*/true);
  EXPECT_TRUE(LaFlit::head(out));
  out = f.from_router(h, noc::kEast, true);  // presented again, not yet taken
  EXPECT_TRUE(LaFlit::head(out));
  f.moved(h, noc::kEast);
  out = f.from_router(b, noc::kEast);
  EXPECT_FALSE(LaFlit::head(out));
  EXPECT_FALSE(LaFlit::tail(out));
  out = f.from_router(t, noc::kEast);
  EXPECT_TRUE(LaFlit::tail(out));
  EXPECT_EQ(LaFlit::payload(out), uint64_t{7} << 16 | 2);
  out = f.from_router(one, noc::kEast);  // the next packet: a head that is also its tail
  EXPECT_TRUE(LaFlit::head(out));
  EXPECT_TRUE(LaFlit::tail(out));
  EXPECT_EQ(f.error(), "");
  // On Local, which may interleave packets, head and tail come from the sequence number and the length.
  const FlitBits h7 = f.to_router(flit(7, 0, true, false)), h9 = f.to_router(flit(9, 0, true, true));
  const FlitBits t7 = f.to_router(flit(7, 2, false, true));
  const uint64_t a = f.from_router(h7, noc::kLocal), b9 = f.from_router(h9, noc::kLocal);
  const uint64_t c = f.from_router(t7, noc::kLocal);
  EXPECT_TRUE(LaFlit::head(a) && !LaFlit::tail(a));
  EXPECT_TRUE(LaFlit::head(b9) && LaFlit::tail(b9));
  EXPECT_TRUE(!LaFlit::head(c) && LaFlit::tail(c));
  // A packet the length field cannot count is the router's error, named.
  lengths[11] = 17;  // 16 after the head: more than 4 bits
  f.to_router(flit(11, 0, true, false));
  EXPECT_NE(f.error().find("was given a packet of 17 flits, which its 4-bit length field (flit.length) cannot count"),
            std::string::npos)
      << f.error();
  // Counting every flit instead: the same three-flit packet carries 3.
  const RouterDescription total =
      RouterDescription::parse("t", with("", R"("length": [56, 4], "length_counts": "total")"));
  FlitFormat g(total, 0, noc::MeshGeometry{4, 4}, [&](uint32_t p) { return lengths.at(p); });
  EXPECT_EQ(total.length.get(g.to_router(flit(7, 0, true, false))), 3u);
  // A length field needs a network that knows packet lengths.
  EXPECT_THROW(FlitFormat(d, 0, noc::MeshGeometry{4, 4}), ConfigError);
}

TEST(FlitFormat, StrapsAndLengthsThatCannotHoldTheMeshAreRefusedInOneLine) {
  const DescribedRouter r{
      RouterDescription::parse("mine",
                               with(R"("straps": {"cord[0 +: 2]": "x", "cord[2 +: 3]": "y"})", R"("length": [56, 2])")),
      {}};
  EXPECT_NO_THROW(check_fits(r, 8, 4, 4, 4));  // any depth: no max_buffer_flits, the adapter buffers
  auto message = [&](int w, int h, int packet) {
    try {
      check_fits(r, 8, w, h, packet);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(5, 4, 4).find("takes x in 2 bits (straps.cord[0 +: 2]), too few for a 5x4 mesh"),
            std::string::npos);
  EXPECT_NE(message(4, 9, 4).find("takes y in 3 bits (straps.cord[2 +: 3]), too few for a 4x9 mesh"),
            std::string::npos);
  const DescribedRouter depth{RouterDescription::parse("d", with(R"("straps": {"depth[0 +: 2]": "buffer_flits"})")),
                              {}};
  EXPECT_NO_THROW(check_fits(depth, 3, 4, 4, 4));
  try {
    check_fits(depth, 4, 4, 4, 4);
    ADD_FAILURE() << "a depth of 4 in a 2-bit strap was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "takes buffer_flits in 2 bits (straps.depth[0 +: 2]), too few for 4 (noc.buffer_flits)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NE(message(4, 4, 5).find("counts packet lengths in 2 bits (flit.length), too few for packets of 5 flits "
                                  "(noc.max_packet_flits)"),
            std::string::npos);
}

TEST(FlitPins, SlicesOfPackedVectorsReadAndWriteTheirBitsAndNoOthers) {
  // A [4:0][65:0] link vector is 330 bits: Verilator's VlWide<11>. Link 3's data is bits 198..261.
  VlWide<11> link;
  for (std::size_t i = 0; i < 11; ++i) link[i] = 0xffffffffu;
  FlitBits f;
  f.w[0] = 0x0123456789abcdefull;
  put_slice(link, 198, 64, f);
  for (int b = 0; b < 330; ++b) {
    const bool want = b >= 198 && b < 262 ? (f.w[0] >> (b - 198)) & 1u : true;
    ASSERT_EQ(get_bit(link, b), want) << "bit " << b;
  }
  EXPECT_EQ(get_slice(link, 198, 64), f);
  EXPECT_EQ(get_bits(link, 200, 8), (f.w[0] >> 2) & 0xff);
  set_bit(link, 263, false);  // link 3's valid
  EXPECT_FALSE(get_bit(link, 263));
  EXPECT_EQ(link[8] & 0x80u, 0u);  // bit 263 = word 8, bit 7
  // A 128-bit slice across five words.
  FlitBits g;
  g.w[0] = 0xfedcba9876543210ull;
  g.w[1] = 0x00000000deadbeefull;
  put_slice(link, 5, 128, g);
  EXPECT_EQ(get_slice(link, 5, 128), g);
  EXPECT_EQ(link[0] & 0x1fu, 0x1fu);  // bits 0..4 untouched
  // Integer pins: a strap slice and a bit.
  uint16_t cord = 0xffff;
  put_value(cord, 4, 4, 0xa);
  EXPECT_EQ(cord, 0xffafu);
  EXPECT_EQ(get_bits(cord, 4, 4), 0xau);
  uint64_t wide = 0;
  put_value(wide, 0, 64, ~uint64_t{0});
  EXPECT_EQ(wide, ~uint64_t{0});
}

TEST(RtlPlugin, FilesThatAreNotRouterPluginsAreOneLineErrors) {
  const std::string dir = ::testing::TempDir();
  const std::string text = dir + "nmpsim_not_a_plugin.so";
  std::ofstream(text) << "not an ELF file\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {dir + "nmpsim_no_such_plugin.so", "no such file"},
      {dir, "not a regular file"},
      {text, "cannot load it: "},
      {"/lib/x86_64-linux-gnu/libm.so.6", "not an nmpsim router plugin"},
  };
  for (const auto& [path, expected] : cases) {
    if (path.rfind("/lib/", 0) == 0 && !std::ifstream(path)) continue;  // another layout: skip that case
    try {
      load_rtl_plugin(path);
      ADD_FAILURE() << path << " was accepted";
    } catch (const ConfigError& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.rfind("--rtl-plugin " + path + ": " + expected, 0), 0u) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
}

}  // namespace
}  // namespace nmpsim::rtl
