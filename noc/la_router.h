// The look-ahead router: a second, independently designed router micro-architecture, with its own
// pins (valid/stop handshakes, its own flit format, no virtual channels). This is its cycle model in
// plain C++; rtl_checks/rtl/la_router.sv is the RTL, held to this model cycle for cycle
// (sc_tests/test_la_router.cpp). In a mesh it sits behind noc::ValidStopAdapter, which turns its
// valid/stop pins into the mesh's credit protocol (docs/RTL.md, docs/MODEL.md "Look-ahead router").
//
// Micro-architecture, per rising edge (every output registered):
//   - one FIFO of `depth` flits per input port, no virtual channels, wormhole switching;
//   - look-ahead routing: a head flit carries the output port it takes at this router (`la_port`,
//     computed by the upstream router or the adapter); each flit leaves with the port it will take
//     at the next router, computed here from its destination (X then Y);
//   - single-cycle bypass: an arriving flit whose input FIFO is empty competes in its arrival
//     cycle and, if granted, leaves in that cycle without being written into the FIFO;
//   - per output, wormhole lock: a granted head holds the output for its input until its tail;
//     a free output goes to the requesting head flits round-robin (pointer = last winner + 1);
//   - an output with `out_stop` high sends nothing; the local output is never stopped;
//   - `in_stop[p]` goes high when input p's FIFO is full after the edge.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nmpsim/noc/noc_config.h"

namespace nmpsim::noc {

/// The look-ahead router's flit word (64 bits): [0] head [1] tail [9:2] dst x [17:10] dst y
/// [20:18] la_port (output port at the router it enters) [63:21] payload, carried unchanged.
struct LaFlit {
  static constexpr int kPayloadShift = 21;
  static uint64_t make(bool head, bool tail, int x, int y, int la_port, uint64_t payload) {
    return uint64_t{head} | uint64_t{tail} << 1 | (uint64_t(x) & 0xff) << 2 | (uint64_t(y) & 0xff) << 10 |
           (uint64_t(la_port) & 7) << 18 | payload << kPayloadShift;
  }
  static bool head(uint64_t w) { return w & 1u; }
  static bool tail(uint64_t w) { return w & 2u; }
  static int x(uint64_t w) { return static_cast<int>((w >> 2) & 0xff); }
  static int y(uint64_t w) { return static_cast<int>((w >> 10) & 0xff); }
  static int la_port(uint64_t w) { return static_cast<int>((w >> 18) & 7); }
  static uint64_t with_la_port(uint64_t w, int p) { return (w & ~(uint64_t{7} << 18)) | (uint64_t(p) & 7) << 18; }
  static uint64_t payload(uint64_t w) { return w >> kPayloadShift; }
};

/// What the look-ahead router sees and drives in one cycle (one entry per port N E S W L).
struct LaPins {
  std::array<bool, kNumPorts> in_valid{}, out_stop{};  // inputs
  std::array<uint64_t, kNumPorts> in_flit{};
  std::array<bool, kNumPorts> out_valid{}, in_stop{};  // registered outputs
  std::array<uint64_t, kNumPorts> out_flit{};
};

/// Anything behind look-ahead pins that can be clocked: the C++ model or the Verilated RTL.
class LaCore {
 public:
  virtual ~LaCore() = default;
  /// Synchronous reset (all FIFOs empty, outputs low, pointers at 0).
  virtual void reset() = 0;
  /// One rising edge: reads the inputs of `pins`, writes its outputs.
  virtual void edge(LaPins& pins) = 0;
  /// The first internal error (e.g. a flit a described router returns that it was never given),
  /// or empty; the adapter reports it as the router's.
  virtual std::string error() const { return ""; }
  /// Dumps the core's signals to a VCD file (Verilated cores only; see RouterPins::open_vcd).
  virtual void open_vcd(const std::string& path) {
    (void)path;
    throw ConfigError("--vcd: the look-ahead router's cycle model writes no VCD (use --router rtl:NAME)");
  }
};

/// The cycle model.
class LaRouterModel : public LaCore {
 public:
  LaRouterModel(int node, const MeshGeometry& geo, int depth);
  void reset() override;
  void edge(LaPins& pins) override;

 private:
  struct Fifo {
    std::vector<uint64_t> slot;
    int head = 0, count = 0;
  };
  /// The port a flit leaving on output `o` takes at the next router (0 on the local output).
  int next_port(int o, uint64_t f) const;

  int node_, depth_;
  MeshGeometry geo_;
  std::array<Fifo, kNumPorts> q_;
  std::array<int, kNumPorts> lock_{}, rr_{};  // lock_: input holding the output, -1 free
};

}  // namespace nmpsim::noc
