// What a described router's generated glue (cmake/NmpsimRouterRtl.cmake) needs from nmpsim, and
// nothing else: the flit word, the strap values, the pin interface and the plugin entry points. It
// includes no SystemC and no other nmpsim header, so a router built out of tree into a plugin
// (docs/RTL.md "Out of tree") compiles against it alone and shares no symbol with the nmpsim that
// loads it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace nmpsim::rtl {

/// A flit word of up to 512 bits, in 64-bit words, least significant first.
struct FlitBits {
  static constexpr int kMaxBits = 512;
  std::array<uint64_t, kMaxBits / 64> w{};
  bool operator==(const FlitBits& o) const { return w == o.w; }
  bool operator!=(const FlitBits& o) const { return w != o.w; }
};

/// Values the straps of a router can take (the description maps strap pins to these names).
struct StrapValues {
  int x = 0, y = 0, width = 1, height = 1, buffer_flits = 1;
};

/// The pins of one Verilated router, by role and nmpsim port (N E S W L; the generated glue maps
/// them to the router's own port order), generated per router from its description.
class RtlPinIo {
 public:
  virtual ~RtlPinIo() = default;
  /// One rising edge with reset held at `rst` (true: in reset, whatever the pin's polarity).
  virtual void clock(bool rst) = 0;
  /// Evaluates the model without a clock edge (after inputs changed), for the check that no
  /// output depends on an input within a cycle.
  virtual void settle() = 0;
  virtual void set_in_valid(int port, bool v) = 0;
  virtual void set_in_flit(int port, const FlitBits& w) = 0;
  /// The flow control the router receives about output `port`: out_stop, out_ready or in_credit.
  virtual void set_flow_in(int port, bool v) = 0;
  virtual bool out_valid(int port) const = 0;
  virtual FlitBits out_flit(int port) const = 0;
  /// The flow control the router sends about input `port`: in_stop, in_ready or out_credit.
  virtual bool flow_out(int port) const = 0;
  /// Dumps every signal to a VCD file from the next edge on (one time unit = half a cycle).
  /// Returns empty, or why it cannot (the file cannot be opened, the router is not traced).
  virtual std::string open_vcd(const std::string& path) = 0;
  virtual void close_vcd() = 0;
};

/// A plugin's routers (nmpsim_add_router_rtl out of tree builds one per router): what
/// nmpsim_rtl_plugin_routers() returns. `make` returns a new model the caller owns.
struct PluginRouter {
  const char* name;
  const char* description_json;
  RtlPinIo* (*make)(const StrapValues& straps);
};

/// Bumped whenever anything in this header changes meaning or layout; nmpsim refuses a plugin
/// built against another.
inline constexpr int kRtlPluginAbi = 1;

}  // namespace nmpsim::rtl

/// The plugin's entry points (C linkage, looked up by name with dlsym).
extern "C" {
/// kRtlPluginAbi as the plugin was built.
typedef int (*NmpsimRtlPluginAbiFn)();
/// The plugin's routers; *count receives how many.
typedef const nmpsim::rtl::PluginRouter* (*NmpsimRtlPluginRoutersFn)(int* count);
}
