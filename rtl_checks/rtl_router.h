// The Verilated SystemVerilog router (rtl/nmp_router.sv) behind the same pins as noc::ScRouter,
// so a noc::PinMesh can use it at any node. The RTL's capacities (MAX_VCS, MAX_DEPTH,
// MAX_DELAY) are fixed when it is Verilated (CMake cache variables NMPSIM_RTL_MAX_*); the
// configuration inside them is driven onto its cfg_* strap pins from noc::RouterParams.
#pragma once

#include <memory>
#include <string>

#include "nmpsim/noc/pin_mesh.h"
#include "nmpsim/noc/router_pins.h"

class Vnmp_router;
class VerilatedVcdSc;

namespace nmpsim::rtl {

/// Capacities the RTL was Verilated with.
struct RtlCapacity {
  int max_vcs;
  int max_buffer_flits;
  int max_router_delay_cycles;
};
RtlCapacity rtl_capacity();

/// Throws noc::ConfigError (one line naming the field and the CMake option that raises the
/// limit) when `cfg` does not fit the RTL router.
void check_rtl_fits(const noc::NocConfig& cfg);
void check_rtl_fits(const noc::RouterParams& p);

class RtlRouter : public noc::RouterPins {
 public:
  /// Throws noc::ConfigError when `p` does not fit the RTL's capacities.
  RtlRouter(sc_core::sc_module_name name, const noc::RouterParams& p);
  ~RtlRouter() override;
  const char* implementation() const override { return "rtl"; }
  /// Dumps every RTL signal of this router to a VCD file from now on. Call after elaboration
  /// (sc_start(SC_ZERO_TIME)); the file is complete when the router is destroyed or close_vcd().
  void open_vcd(const std::string& path) override;
  void close_vcd();

 private:
  std::unique_ptr<Vnmp_router> rtl_;
  sc_core::sc_signal<uint32_t> cfg_x_{"cfg_x"}, cfg_y_{"cfg_y"}, cfg_vcs_{"cfg_vcs"}, cfg_depth_{"cfg_depth"},
      cfg_delay_{"cfg_delay"};
  sc_core::sc_vector<sc_core::sc_signal<uint32_t>> cfg_cpf_q_{"cfg_cpf_q", noc::kNumMeshDirs};
  std::unique_ptr<VerilatedVcdSc> vcd_;
};

/// Verilated routers at every node.
noc::RouterFactory rtl_router_factory();
/// Verilated routers at the nodes where rtl_at(node) is true, ScRouters elsewhere.
noc::RouterFactory mixed_router_factory(std::function<bool(int node)> rtl_at);

}  // namespace nmpsim::rtl
