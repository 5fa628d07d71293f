// Routers of your own, described by a JSON file and built by one CMake call
// (nmpsim_add_router_rtl, cmake/NmpsimRouterRtl.cmake): the pin names, the flit format, the
// handshake and the straps come from the description, and generated glue reads and writes the
// Verilated model's pins, so plugging a router in takes no C++ (docs/RTL.md "Bring your own
// router"). Handshakes: valid/stop and valid/ready (behind noc::ValidStopAdapter) and credits
// (DescribedCreditRouter); no virtual channels; flits of up to 64 bits.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nmpsim/noc/la_router.h"
#include "nmpsim/noc/pin_mesh.h"
#include "nmpsim/rtl_checks/router_description.h"

namespace nmpsim::rtl {

/// Values the straps of a router can take (the description maps strap pins to these names).
struct StrapValues {
  int x = 0, y = 0, width = 1, height = 1, buffer_flits = 1;
};

/// The pins of one Verilated router, by role and port (generated per router from its description).
class RtlPinIo {
 public:
  virtual ~RtlPinIo() = default;
  /// One rising edge with reset held at `rst`.
  virtual void clock(bool rst) = 0;
  virtual void set_in_valid(int port, bool v) = 0;
  virtual void set_in_flit(int port, const FlitBits& w) = 0;
  /// The flow control the router receives about output `port`: out_stop, out_ready or in_credit.
  virtual void set_flow_in(int port, bool v) = 0;
  virtual bool out_valid(int port) const = 0;
  virtual FlitBits out_flit(int port) const = 0;
  /// The flow control the router sends about input `port`: in_stop, in_ready or out_credit.
  virtual bool flow_out(int port) const = 0;
  /// Dumps every signal to a VCD file from the next edge on (one time unit = half a cycle);
  /// throws noc::ConfigError when the file cannot be opened.
  virtual void open_vcd(const std::string& path) = 0;
  virtual void close_vcd() = 0;
};

using PinIoMaker = std::function<std::unique_ptr<RtlPinIo>(const StrapValues&)>;

struct DescribedRouter {
  RouterDescription description;
  PinIoMaker make;
};
/// Every router registered with nmpsim_add_router_rtl (in this build).
const std::vector<DescribedRouter>& described_routers();
/// The one named `name`, or nullptr.
const DescribedRouter* find_described_router(const std::string& name);
/// Throws noc::ConfigError (one line) when `buffer_flits` per input exceed what router `r` holds,
/// or (width, height > 0) when its destination fields cannot name every node of such a mesh.
void check_fits(const DescribedRouter& r, int buffer_flits, int width = 0, int height = 0);
/// Called by the generated registry (one call per nmpsim_add_router_rtl).
void register_described_router(const std::string& name, const std::string& json, PinIoMaker make);

/// Converts between a described router's flit word and the look-ahead flit word (noc::LaFlit).
/// A payload field of 42 bits or more carries the mesh's sequence number and packet id; a
/// narrower one carries a handle instead, which names the flit while it is inside this router (a
/// table of the flits it holds, each entered on the way in and removed on the way out).
class FlitFormat {
 public:
  static constexpr int kDirectPayloadBits = 42;
  FlitFormat(const RouterDescription& d, int node, const noc::MeshGeometry& geo);
  /// The router's word for a flit entering it; with handles, enters the flit in the table.
  FlitBits to_router(uint64_t la);
  /// The look-ahead word of a flit leaving on `out_port`; without a look-ahead field in the
  /// description, the port it takes at the next router is computed here. With handles, removes
  /// the flit from the table unless `keep` (it is only presented: release() it when it moves); a
  /// handle naming no flit held makes error() non-empty.
  uint64_t from_router(const FlitBits& w, int out_port, bool keep = false);
  /// Removes the flit of router word `w` from the table (handles only).
  void release(const FlitBits& w);
  /// The first problem found (a forged or reused handle, a full table), or empty.
  const std::string& error() const { return error_; }
  /// Flits entered and not yet out (handles only).
  size_t held() const { return held_; }
  /// Forgets every held flit (the router was reset).
  void clear();

 private:
  const RouterDescription& d_;
  int node_;
  noc::MeshGeometry geo_;
  bool handles_;
  std::vector<uint64_t> payload_;  // by handle: the look-ahead payload
  std::vector<bool> live_;
  std::vector<uint32_t> free_;  // handles not in use, the next at the back
  size_t held_ = 0;
  std::string error_;
};

/// A described valid/stop or valid/ready router behind the look-ahead pins (noc::LaPins), whose
/// in_stop/out_stop carry !ready for valid/ready.
class DescribedCore : public noc::LaCore {
 public:
  DescribedCore(const DescribedRouter& r, int node, const noc::MeshGeometry& geo, int buffer_flits);
  void reset() override;
  void edge(noc::LaPins& pins) override;
  void open_vcd(const std::string& path) override { io_->open_vcd(path); }
  std::string error() const override { return format_.error(); }

 private:
  const RouterDescription& d_;
  FlitFormat format_;
  std::unique_ptr<RtlPinIo> io_;
  // The router word of the flit presented on each input (until taken) and each output (until
  // taken, valid/ready), so that a flit keeps one handle while it waits.
  std::array<FlitBits, noc::kNumPorts> in_word_{}, out_word_{};
  std::array<bool, noc::kNumPorts> in_pending_{}, out_pending_{};
};

/// Described routers `name` (behind the adapter their protocol needs) where at(node); `other`
/// elsewhere.
noc::RouterFactory described_factory(const std::string& name, std::function<bool(int)> at, noc::RouterFactory other);

}  // namespace nmpsim::rtl
