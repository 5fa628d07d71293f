#include "nmpsim/noc/pin_mesh.h"

#include <cmath>

#include "nmpsim/noc/flit_word.h"
#include "nmpsim/noc/sc_router.h"

namespace nmpsim::noc {

RouterFactory sc_router_factory() {
  return [](const std::string& name, const RouterParams& p) -> std::unique_ptr<RouterPins> {
    return std::make_unique<ScRouter>(name.c_str(), p);
  };
}

namespace {
/// The clock period in SystemC time-resolution steps (at least 2, so both phases are non-empty).
uint64_t period_steps(const NocConfig& cfg) {
  const double res_s = sc_core::sc_get_time_resolution().to_seconds();
  const auto steps = static_cast<uint64_t>(std::llround(1e-9 / cfg.clock_ghz / res_s));
  if (steps < 2) throw ConfigError("noc: clock period is shorter than two SystemC time-resolution steps");
  return steps;
}
}  // namespace

PinMesh::PinMesh(sc_core::sc_module_name name, const NocConfig& cfg, const RouterFactory& factory)
    : sc_module(name),
      net_(cfg),
      ports_(static_cast<size_t>(cfg.router_ports())),
      steps_(period_steps(cfg)),
      period_(sc_core::sc_get_time_resolution() * static_cast<double>(steps_)),
      // Rising edge k at k periods (edge 0 resets the routers), falling edge k a high phase later,
      // at k periods plus floor(steps / 2) (so odd periods, e.g. 3 GHz at 1 ps resolution, stay on
      // the time grid): exactly when noc::MeshModule evaluates cycle k.
      clk_("clk", period_, static_cast<double>(steps_ / 2) / static_cast<double>(steps_), sc_core::SC_ZERO_TIME, true),
      in_flit_("in_flit", static_cast<size_t>(cfg.nodes()) * ports_),
      out_flit_("out_flit", static_cast<size_t>(cfg.nodes()) * ports_),
      in_credit_("in_credit", static_cast<size_t>(cfg.nodes()) * ports_),
      out_credit_("out_credit", static_cast<size_t>(cfg.nodes()) * ports_) {
  const int n = cfg.nodes();
  routers_.resize(static_cast<size_t>(n));
  for (int node = 0; node < n; ++node) {
    RouterParams params = RouterParams::of(cfg, node);
    params.packet_flits = [this](uint32_t packet) { return net_.packet_flits(packet); };
    std::unique_ptr<RouterPins> r = factory("router_" + std::to_string(node), params);
    if (!r) continue;
    r->clk(clk_);
    r->rst(rst_);
    for (int p = 0; p < static_cast<int>(ports_); ++p) {
      r->in_flit[p](in_flit_[pin(node, p)]);
      r->out_flit[p](out_flit_[pin(node, p)]);
      r->in_credit[p](in_credit_[pin(node, p)]);
      r->out_credit[p](out_credit_[pin(node, p)]);
    }
    net_.set_external_router(node);
    pin_nodes_.push_back(node);
    routers_[node] = std::move(r);
  }
  SC_METHOD(drive);
  sensitive << clk_.negedge_event();
  dont_initialize();
}

void PinMesh::drive() {
  // Falling edge k: collect cycle k - 1 (evaluated at the rising edge just before), finish it, then
  // begin cycle k.
  const uint64_t k = falling_edges_++;
  if (k >= 1) {
    for (int node : pin_nodes_) {
      for (int p = 0; p < static_cast<int>(ports_); ++p) {
        const uint64_t w = out_flit_[pin(node, p)].read();
        if (flit_word_valid(w)) net_.pin_output_flit(node, p, decode_flit_word(w, net_.geometry()));
        const uint32_t c = out_credit_[pin(node, p)].read();
        if (credit_word_valid(c)) net_.pin_output_credit(node, p, credit_word_vc(c));
      }
    }
    if (!net_.end_cycle()) {
      stop();  // the watchdog fired; the network keeps the stall report
      return;
    }
  }
  rst_.write(false);
  const uint64_t c = k;
  if (hook_ && !hook_(c)) {
    stop();
    return;
  }
  net_.begin_cycle(c);
  begun_ = c + 1;
  const MeshGeometry& geo = net_.geometry();
  for (int node : pin_nodes_) {
    Network::PinInputs& in = net_.pin_inputs(node);
    for (int p = 0; p < static_cast<int>(ports_); ++p) {
      in_flit_[pin(node, p)].write(in.has_flit[p] ? encode_flit_word(in.flit[p], geo) : 0);
      in_credit_[pin(node, p)].write(in.credit_vc[p] >= 0 ? encode_credit_word(in.credit_vc[p]) : 0);
    }
    in.clear();
  }
}

void PinMesh::stop() {
  // A planned end, not news: keep SystemC's "stopped by user" note off the user's terminal.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_stop();
}

std::string PinMesh::router_error() const {
  for (const auto& r : routers_)
    if (r && !r->error().empty()) return r->error();
  return "";
}

}  // namespace nmpsim::noc
