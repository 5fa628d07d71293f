// A router's description file (JSON: protocol, flit format, buffer depth), read and checked without
// any SystemC or Verilator code, so that the reader can be fuzzed (fuzz/fuzz_router_description.cpp)
// and used where no router is built. docs/RTL.md "The description".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nmpsim/rtl_checks/rtl_pin_io.h"

namespace nmpsim::rtl {

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

/// A strap: a pin, a bit or a slice of one (`pin`, `pin[3]`, `pin[4 +: 4]`) held at a value the
/// mesh gives (x, y, width, height, buffer_flits) or at a constant.
struct Strap {
  std::string key;    ///< as the description writes it
  int width = 0;      ///< the slice's width; 0: a whole pin (its width is the pin's)
  std::string value;  ///< x | y | width | height | buffer_flits, or empty for a constant
  uint64_t constant = 0;
};

/// What the description says, checked (every problem is a one-line error naming the field).
struct RouterDescription {
  std::string name;
  Protocol protocol = Protocol::kValidStop;
  bool valid_hold = true;  ///< valid/ready: a flit presented must stay until taken
  bool reset_low = false;  ///< reset_active "low": the reset pin is 0 while in reset
  int flit_bits = 64;      ///< the width of the flit pins
  Field head, tail, dst_x, dst_y, lookahead_port, payload;
  Field length;               ///< the packet's length in the head flit (width 0: absent)
  bool length_total = false;  ///< length counts every flit (true) or the flits after the head
  int max_buffer_flits = 0;   ///< the most flits per input the router holds (0: not strapped)
  std::vector<Strap> straps;
  /// The router's index of nmpsim's port N, E, S, W, L (port_index; default 0..4).
  std::array<int, 5> port_index{0, 1, 2, 3, 4};
  static RouterDescription parse(const std::string& name, const std::string& json);
  /// The value `length` carries for a packet of `flits` flits.
  uint64_t length_value(int flits) const { return static_cast<uint64_t>(length_total ? flits : flits - 1); }
};

}  // namespace nmpsim::rtl
