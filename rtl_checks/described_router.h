// Routers of your own, described by a JSON file and built by one CMake call
// (nmpsim_add_router_rtl, cmake/NmpsimRouterRtl.cmake): the pin names, the flit format, the
// handshake and the straps come from the description, and generated glue reads and writes the
// Verilated model's pins, so plugging a router in takes no C++ (docs/RTL.md "Bring your own
// router"). Supported handshake today: valid/stop (noc::ValidStopAdapter); flits of up to 64 bits.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "noc/la_router.h"
#include "noc/pin_mesh.h"

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
  virtual void set_in_flit(int port, uint64_t w) = 0;
  virtual void set_out_stop(int port, bool v) = 0;
  virtual bool out_valid(int port) const = 0;
  virtual uint64_t out_flit(int port) const = 0;
  virtual bool in_stop(int port) const = 0;
};

/// A bit field of the router's flit word.
struct Field {
  int pos = 0, width = 0;  ///< width 0: absent
  uint64_t get(uint64_t w) const { return width == 0 ? 0 : (w >> pos) & mask(); }
  uint64_t put(uint64_t w, uint64_t v) const { return width == 0 ? w : (w & ~(mask() << pos)) | (v & mask()) << pos; }
  uint64_t mask() const { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }
};

/// What the description says, checked (every problem is a one-line error naming the field).
struct RouterDescription {
  std::string name, protocol;
  Field head, tail, dst_x, dst_y, lookahead_port, payload;
  int max_buffer_flits = 1;
  static RouterDescription parse(const std::string& name, const std::string& json);
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
/// Throws noc::ConfigError (one line) when `buffer_flits` per input exceed what router `r` holds.
void check_fits(const DescribedRouter& r, int buffer_flits);
/// Called by the generated registry (one call per nmpsim_add_router_rtl).
void register_described_router(const std::string& name, const std::string& json, PinIoMaker make);

/// A described valid/stop router behind the look-ahead pins (noc::LaPins), converting flit formats.
class DescribedCore : public noc::LaCore {
 public:
  DescribedCore(const DescribedRouter& r, int node, const noc::MeshGeometry& geo, int buffer_flits);
  void reset() override;
  void edge(noc::LaPins& pins) override;

 private:
  uint64_t to_router(uint64_t la) const;
  uint64_t from_router(uint64_t w, int out_port) const;
  const RouterDescription& d_;
  std::unique_ptr<RtlPinIo> io_;
  int node_;
  noc::MeshGeometry geo_;
};

/// Described routers `name` (behind noc::ValidStopAdapter) where at(node); `other` elsewhere.
noc::RouterFactory described_factory(const std::string& name, std::function<bool(int)> at, noc::RouterFactory other);

}  // namespace nmpsim::rtl
