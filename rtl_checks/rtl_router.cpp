#include "nmpsim/rtl_checks/rtl_router.h"

#include <verilated.h>
#include <verilated_vcd_sc.h>

#include <cstdio>

#include "Vnmp_router.h"
#include "nmpsim/noc/sc_router.h"

namespace nmpsim::rtl {

RtlCapacity rtl_capacity() { return {NMPSIM_RTL_MAX_VCS, NMPSIM_RTL_MAX_DEPTH, NMPSIM_RTL_MAX_DELAY}; }

void check_rtl_fits(const noc::NocConfig& cfg) {
  noc::RouterParams p;
  p.vcs = cfg.vcs;
  p.buffer_flits = cfg.buffer_flits;
  p.router_delay_cycles = cfg.router_delay_cycles;
  p.ni_ports = cfg.ni_ports;
  check_rtl_fits(p);
}

void check_rtl_fits(const noc::RouterParams& cfg) {
  const RtlCapacity cap = rtl_capacity();
  auto need = [](bool ok, const std::string& msg) {
    if (!ok) throw noc::ConfigError(msg);
  };
  need(cfg.ni_ports == 1, "rtl router: one local port (noc.ni_ports " + std::to_string(cfg.ni_ports) + ")");
  need(cfg.vcs <= cap.max_vcs, "rtl router: vcs " + std::to_string(cfg.vcs) + " exceeds the RTL's MAX_VCS " +
                                   std::to_string(cap.max_vcs) + " (reconfigure with -DNMPSIM_RTL_MAX_VCS=N)");
  need(cfg.buffer_flits <= cap.max_buffer_flits,
       "rtl router: buffer_flits " + std::to_string(cfg.buffer_flits) + " exceeds the RTL's MAX_DEPTH " +
           std::to_string(cap.max_buffer_flits) + " (reconfigure with -DNMPSIM_RTL_MAX_DEPTH=N, a power of two)");
  need(cfg.router_delay_cycles <= cap.max_router_delay_cycles,
       "rtl router: router_delay_cycles " + std::to_string(cfg.router_delay_cycles) + " exceeds the RTL's MAX_DELAY " +
           std::to_string(cap.max_router_delay_cycles) +
           " (reconfigure with -DNMPSIM_RTL_MAX_DELAY=N, a power of two)");
}

RtlRouter::RtlRouter(sc_core::sc_module_name name, const noc::RouterParams& p)
    : RouterPins(name, p), rtl_((check_rtl_fits(p), std::make_unique<Vnmp_router>("rtl"))) {
  Verilated::traceEverOn(true);  // lets open_vcd() attach a trace later; costs nothing until then
  cfg_x_.write(static_cast<uint32_t>(p.geo.x(p.node)));
  cfg_y_.write(static_cast<uint32_t>(p.geo.y(p.node)));
  cfg_vcs_.write(static_cast<uint32_t>(p.vcs));
  cfg_depth_.write(static_cast<uint32_t>(p.buffer_flits));
  cfg_delay_.write(static_cast<uint32_t>(p.router_delay_cycles));
  for (int d = 0; d < noc::kNumMeshDirs; ++d) cfg_cpf_q_[d].write(static_cast<uint32_t>(p.links[d].cycles_per_flit_q));

  Vnmp_router& r = *rtl_;
  r.clk(clk);
  r.rst(rst);
  r.cfg_x(cfg_x_);
  r.cfg_y(cfg_y_);
  r.cfg_vcs(cfg_vcs_);
  r.cfg_depth(cfg_depth_);
  r.cfg_delay(cfg_delay_);
  r.cfg_cpf_q_n(cfg_cpf_q_[noc::kNorth]);
  r.cfg_cpf_q_e(cfg_cpf_q_[noc::kEast]);
  r.cfg_cpf_q_s(cfg_cpf_q_[noc::kSouth]);
  r.cfg_cpf_q_w(cfg_cpf_q_[noc::kWest]);
  r.in_flit_n(in_flit[noc::kNorth]);
  r.in_flit_e(in_flit[noc::kEast]);
  r.in_flit_s(in_flit[noc::kSouth]);
  r.in_flit_w(in_flit[noc::kWest]);
  r.in_flit_l(in_flit[noc::kLocal]);
  r.in_credit_n(in_credit[noc::kNorth]);
  r.in_credit_e(in_credit[noc::kEast]);
  r.in_credit_s(in_credit[noc::kSouth]);
  r.in_credit_w(in_credit[noc::kWest]);
  // in_credit[kLocal] stays unconnected inside: the local output needs no credits.
  r.out_flit_n(out_flit[noc::kNorth]);
  r.out_flit_e(out_flit[noc::kEast]);
  r.out_flit_s(out_flit[noc::kSouth]);
  r.out_flit_w(out_flit[noc::kWest]);
  r.out_flit_l(out_flit[noc::kLocal]);
  r.out_credit_n(out_credit[noc::kNorth]);
  r.out_credit_e(out_credit[noc::kEast]);
  r.out_credit_s(out_credit[noc::kSouth]);
  r.out_credit_w(out_credit[noc::kWest]);
  r.out_credit_l(out_credit[noc::kLocal]);
}

RtlRouter::~RtlRouter() { close_vcd(); }

void RtlRouter::open_vcd(const std::string& path) {
  close_vcd();
  vcd_ = std::make_unique<VerilatedVcdSc>();
  rtl_->trace(vcd_.get(), 99);
  vcd_->open(path.c_str());
  if (!vcd_->isOpen()) {
    vcd_.reset();
    throw std::runtime_error("rtl router: cannot write VCD file " + path);
  }
}

void RtlRouter::close_vcd() {
  if (vcd_) {
    vcd_->close();
    vcd_.reset();
  }
}

noc::RouterFactory rtl_router_factory() {
  return mixed_router_factory([](int) { return true; });
}

noc::RouterFactory mixed_router_factory(std::function<bool(int node)> rtl_at) {
  return [rtl_at = std::move(rtl_at)](const std::string& name,
                                      const noc::RouterParams& p) -> std::unique_ptr<noc::RouterPins> {
    if (rtl_at(p.node)) return std::make_unique<RtlRouter>(name.c_str(), p);
    return std::make_unique<noc::ScRouter>(name.c_str(), p);
  };
}

}  // namespace nmpsim::rtl
