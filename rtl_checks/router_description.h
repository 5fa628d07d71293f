// A router's description file (JSON: protocol, flit format, buffer depth), read and checked without
// any SystemC or Verilator code, so that the reader can be fuzzed (fuzz/fuzz_router_description.cpp)
// and used where no router is built. docs/RTL.md "The description".
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace nmpsim::rtl {

/// A flit word of up to 512 bits, in 64-bit words, least significant first.
struct FlitBits {
  static constexpr int kMaxBits = 512;
  std::array<uint64_t, kMaxBits / 64> w{};
  bool operator==(const FlitBits& o) const { return w == o.w; }
  bool operator!=(const FlitBits& o) const { return w != o.w; }
};

enum class Protocol { kValidStop, kValidReady, kCredit };

/// A bit field of the router's flit word: up to 64 bits anywhere in it.
struct Field {
  int pos = 0, width = 0;  ///< width 0: absent
  uint64_t mask() const { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }
  uint64_t get(const FlitBits& b) const {
    if (width == 0) return 0;
    const int i = pos / 64, s = pos % 64;
    uint64_t v = b.w[i] >> s;
    if (s != 0 && s + width > 64) v |= b.w[i + 1] << (64 - s);
    return v & mask();
  }
  void put(FlitBits& b, uint64_t v) const {
    if (width == 0) return;
    v &= mask();
    const int i = pos / 64, s = pos % 64;
    b.w[i] = (b.w[i] & ~(mask() << s)) | v << s;
    if (s != 0 && s + width > 64) {
      const uint64_t hi = (uint64_t{1} << (s + width - 64)) - 1;
      b.w[i + 1] = (b.w[i + 1] & ~hi) | v >> (64 - s);
    }
  }
};

/// What the description says, checked (every problem is a one-line error naming the field).
struct RouterDescription {
  std::string name;
  Protocol protocol = Protocol::kValidStop;
  int flit_bits = 64;  ///< the width of the flit pins
  Field head, tail, dst_x, dst_y, lookahead_port, payload;
  int max_buffer_flits = 1;
  static RouterDescription parse(const std::string& name, const std::string& json);
};

}  // namespace nmpsim::rtl
