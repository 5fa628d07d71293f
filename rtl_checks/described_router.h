// Routers of your own, described by a JSON file and built by one CMake call
// (nmpsim_add_router_rtl, cmake/NmpsimRouterRtl.cmake): the pin names, the flit format, the
// handshake and the straps come from the description, and generated glue reads and writes the
// Verilated model's pins, so plugging a router in takes no C++ (docs/RTL.md "Bring your own
// router"). Handshakes: valid/stop and valid/ready (behind noc::ValidStopAdapter) and credits
// (DescribedCreditRouter); no virtual channels; flits of up to 512 bits. Routers come from the
// build (rtl_checks/routers.cmake) or from plugins built out of tree (load_rtl_plugin).
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
/// or (width, height > 0) when its destination fields or coordinate straps cannot name every node
/// of such a mesh, or (max_packet_flits > 0) its length field cannot count such a packet.
void check_fits(const DescribedRouter& r, int buffer_flits, int width = 0, int height = 0, int max_packet_flits = 0);
/// Called by the generated registry (one call per nmpsim_add_router_rtl). Throws noc::ConfigError
/// when the description is wrong or the name is taken.
void register_described_router(const std::string& name, const std::string& json, PinIoMaker make);
/// Loads the routers of a plugin built out of tree (docs/RTL.md "Out of tree"); throws
/// noc::ConfigError (one line naming the file) when it is not one, is built for another interface
/// version, or names a router that exists. Loading the same file twice is a no-op. Returns the
/// file's canonical path.
std::string load_rtl_plugin(const std::string& path);

/// Converts between a described router's flit word and the look-ahead flit word (noc::LaFlit).
/// A payload field of 42 bits or more carries the mesh's sequence number and packet id; a
/// narrower one carries a handle instead, which names the flit while it is inside this router (a
/// table of the flits it holds, each entered on the way in and removed on the way out).
class FlitFormat {
 public:
  static constexpr int kDirectPayloadBits = 42;
  /// `packet_flits`: a live packet's flit count by id, for a description with a length field.
  FlitFormat(const RouterDescription& d, int node, const noc::MeshGeometry& geo,
             std::function<int(uint32_t)> packet_flits = {});
  /// The router's word for a flit entering it; with handles, enters the flit in the table.
  FlitBits to_router(uint64_t la);
  /// The look-ahead word of a flit leaving on `out_port`; without a look-ahead field in the
  /// description, the port it takes at the next router is computed here; without head and tail
  /// fields, they follow from the length of the packet a mesh output is sending (counted down, as
  /// its downstream would), and on Local, which may interleave packets, from the flit's sequence
  /// number and its packet's length. Unless `keep` (it
  /// is only presented: call moved() when it moves) the flit has moved. A handle naming no flit
  /// held makes error() non-empty.
  uint64_t from_router(const FlitBits& w, int out_port, bool keep = false);
  /// The flit of router word `w` left on `out_port`: removes it from the table (handles) and
  /// counts it against the packet that output is sending (length framing).
  void moved(const FlitBits& w, int out_port);
  /// The first problem found (a forged or reused handle, a full table), or empty.
  const std::string& error() const { return error_; }
  /// Flits entered and not yet out (handles only).
  size_t held() const { return held_; }
  /// Forgets every held flit (the router was reset).
  void clear();

 private:
  /// Head and tail of a flit leaving on `port`, by the description's fields or by length framing.
  /// (`payload`: the flit's look-ahead payload, sequence number and packet id.)
  std::pair<bool, bool> framing(const FlitBits& w, int port, uint64_t payload) const;
  const RouterDescription& d_;
  int node_;
  noc::MeshGeometry geo_;
  std::function<int(uint32_t)> packet_flits_;
  std::array<int, noc::kNumPorts> left_{};  // length framing: flits still to come of each output's packet
  bool handles_;
  std::vector<uint64_t> payload_;  // by handle: the look-ahead payload
  std::vector<bool> live_;
  std::vector<uint32_t> free_;  // handles not in use, the next at the back
  size_t held_ = 0;
  std::string error_;
};

/// Empty, or the first output of `io` whose value differs from `before` (outputs read after the
/// last edge) now that its inputs changed without a clock edge: a combinational path from an input
/// pin to an output pin (docs/RTL.md "Registered outputs"). `before` is refreshed.
struct PinSnapshot {
  std::array<bool, noc::kNumPorts> valid{}, flow{};
  std::array<FlitBits, noc::kNumPorts> flit{};
  void take(const RtlPinIo& io);
  /// Port p's outputs, as the caller just read them (saves reading them twice per edge).
  void set(int p, bool valid, const FlitBits& flit, bool flow);
  std::string changed_since(const RtlPinIo& io, bool check_flow = true) const;
};

/// A described valid/stop or valid/ready router behind the look-ahead pins (noc::LaPins), whose
/// in_stop/out_stop carry !ready for valid/ready.
class DescribedCore : public noc::LaCore {
 public:
  DescribedCore(const DescribedRouter& r, const noc::RouterParams& p);
  /// Alone (no mesh network: no packet lengths), at `node` with `buffer_flits` per input.
  DescribedCore(const DescribedRouter& r, int node, const noc::MeshGeometry& geo, int buffer_flits);
  void reset() override;
  void edge(noc::LaPins& pins) override;
  std::string error() const override { return error_.empty() ? format_.error() : error_; }
  void open_vcd(const std::string& path) override;

 private:
  const RouterDescription& d_;
  FlitFormat format_;
  std::string error_;
  std::unique_ptr<RtlPinIo> io_;
  // The router word of the flit presented on each input (until taken) and each output (until
  // taken, valid/ready), so that a flit keeps one handle while it waits.
  std::array<FlitBits, noc::kNumPorts> in_word_{}, out_word_{};
  std::array<bool, noc::kNumPorts> in_pending_{}, out_pending_{};
  PinSnapshot outputs_;  // as of the last edge
};

/// Described routers `name` (behind the adapter their protocol needs) where at(node); `other`
/// elsewhere.
noc::RouterFactory described_factory(const std::string& name, std::function<bool(int)> at, noc::RouterFactory other);

}  // namespace nmpsim::rtl
