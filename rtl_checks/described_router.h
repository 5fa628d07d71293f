// Routers of your own, described by a JSON file and built by one CMake call
// (nmpsim_add_router_rtl, cmake/NmpsimRouterRtl.cmake): the pin names, the flit format, the
// handshake and the straps come from the description, and generated glue reads and writes the
// Verilated model's pins, so plugging a router in takes no C++ (docs/RTL.md "Bring your own
// router"). Handshakes: valid/stop and valid/ready (behind noc::ValidStopAdapter) and credits
// (DescribedCreditRouter); no virtual channels; flits of up to 64 bits.
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
  /// The flow control the router receives about output `port`: out_stop, out_ready or in_credit.
  virtual void set_flow_in(int port, bool v) = 0;
  virtual bool out_valid(int port) const = 0;
  virtual uint64_t out_flit(int port) const = 0;
  /// The flow control the router sends about input `port`: in_stop, in_ready or out_credit.
  virtual bool flow_out(int port) const = 0;
  /// Dumps every signal to a VCD file from the next edge on (one time unit = half a cycle);
  /// throws noc::ConfigError when the file cannot be opened.
  virtual void open_vcd(const std::string& path) = 0;
  virtual void close_vcd() = 0;
};

enum class Protocol { kValidStop, kValidReady, kCredit };

/// A bit field of the router's flit word.
struct Field {
  int pos = 0, width = 0;  ///< width 0: absent
  uint64_t get(uint64_t w) const { return width == 0 ? 0 : (w >> pos) & mask(); }
  uint64_t put(uint64_t w, uint64_t v) const { return width == 0 ? w : (w & ~(mask() << pos)) | (v & mask()) << pos; }
  uint64_t mask() const { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }
};

/// What the description says, checked (every problem is a one-line error naming the field).
struct RouterDescription {
  std::string name;
  Protocol protocol = Protocol::kValidStop;
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

/// Converts between a described router's flit word and the look-ahead flit word (noc::LaFlit).
class FlitFormat {
 public:
  FlitFormat(const RouterDescription& d, int node, const noc::MeshGeometry& geo) : d_(d), node_(node), geo_(geo) {}
  uint64_t to_router(uint64_t la) const;
  /// The look-ahead word of a flit leaving on `out_port`; without a look-ahead field in the
  /// description, the port it takes at the next router is computed here.
  uint64_t from_router(uint64_t w, int out_port) const;

 private:
  const RouterDescription& d_;
  int node_;
  noc::MeshGeometry geo_;
};

/// A described valid/stop or valid/ready router behind the look-ahead pins (noc::LaPins), whose
/// in_stop/out_stop carry !ready for valid/ready.
class DescribedCore : public noc::LaCore {
 public:
  DescribedCore(const DescribedRouter& r, int node, const noc::MeshGeometry& geo, int buffer_flits);
  void reset() override;
  void edge(noc::LaPins& pins) override;
  void open_vcd(const std::string& path) override { io_->open_vcd(path); }

 private:
  const RouterDescription& d_;
  FlitFormat format_;
  std::unique_ptr<RtlPinIo> io_;
};

/// Described routers `name` (behind the adapter their protocol needs) where at(node); `other`
/// elsewhere.
noc::RouterFactory described_factory(const std::string& name, std::function<bool(int)> at, noc::RouterFactory other);

}  // namespace nmpsim::rtl
