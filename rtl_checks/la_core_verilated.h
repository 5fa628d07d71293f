// A Verilated look-ahead router model (class V, Verilated to plain C++ from rtl/la_router.sv or a
// mutant of it) behind the noc::LaCore interface. Internal to rtl_checks/ and its tests: include it
// only next to the Verilated header of V.
#pragma once

#include <cstdint>
#include <memory>

#include "noc/la_router.h"
#include "verilated.h"

namespace nmpsim::rtl {

template <class V>
class VerilatedLaCore : public noc::LaCore {
 public:
  VerilatedLaCore(int node, const noc::MeshGeometry& geo, int depth)
      : ctx_(std::make_unique<VerilatedContext>()), rtl_(std::make_unique<V>(ctx_.get(), "la_router")) {
    rtl_->cfg_x = static_cast<uint8_t>(geo.x(node));
    rtl_->cfg_y = static_cast<uint8_t>(geo.y(node));
    rtl_->cfg_depth = static_cast<uint32_t>(depth);
    VerilatedLaCore::reset();
  }
  ~VerilatedLaCore() override { rtl_->final(); }

  void reset() override {
    rtl_->rst = 1;
    rtl_->in_valid = 0;
    rtl_->out_stop = 0;
    tick();
    rtl_->rst = 0;
  }

  void edge(noc::LaPins& pins) override {
    V& r = *rtl_;
    uint8_t valid = 0, stop = 0;
    for (int p = 0; p < noc::kNumPorts; ++p) {
      valid |= static_cast<uint8_t>(pins.in_valid[p] ? 1u << p : 0u);
      stop |= static_cast<uint8_t>(pins.out_stop[p] ? 1u << p : 0u);
    }
    r.in_valid = valid;
    r.out_stop = stop;
    r.in_flit_n = pins.in_flit[0];
    r.in_flit_e = pins.in_flit[1];
    r.in_flit_s = pins.in_flit[2];
    r.in_flit_w = pins.in_flit[3];
    r.in_flit_l = pins.in_flit[4];
    tick();
    const uint64_t out[noc::kNumPorts] = {r.out_flit_n, r.out_flit_e, r.out_flit_s, r.out_flit_w, r.out_flit_l};
    for (int p = 0; p < noc::kNumPorts; ++p) {
      pins.out_valid[p] = (r.out_valid >> p) & 1u;
      pins.in_stop[p] = (r.in_stop >> p) & 1u;
      pins.out_flit[p] = out[p];
    }
  }

 private:
  void tick() {
    rtl_->clk = 0;
    rtl_->eval();
    rtl_->clk = 1;
    rtl_->eval();
  }
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> rtl_;
};

}  // namespace nmpsim::rtl
