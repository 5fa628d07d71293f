#include "nmpsim/noc/sc_router.h"

#include "nmpsim/noc/flit_word.h"

namespace nmpsim::noc {

ScRouter::ScRouter(sc_core::sc_module_name name, const RouterParams& p) : RouterPins(name, p), router_(make_router()) {
  SC_METHOD(on_edge);
  sensitive << clk.pos();
  dont_initialize();
}

Router ScRouter::make_router() const {
  Router r(params_.node, params_.geo, params_.vcs, params_.buffer_flits, params_.router_delay_cycles, params_.ni_ports);
  for (int dir = 0; dir < kNumMeshDirs; ++dir) r.set_output_link(dir, params_.links[dir]);
  return r;
}

namespace {
struct PinSink {
  uint64_t flit[kMaxPorts] = {};
  uint32_t credit[kMaxPorts] = {};
  const MeshGeometry* geo;
  void on_flit(int port, const Flit& f) { flit[port] = encode_flit_word(f, *geo); }
  void on_credit(int port, int vc) { credit[port] = encode_credit_word(vc); }
};
}  // namespace

void ScRouter::on_edge() {
  if (rst.read()) {
    router_ = make_router();
    cycle_ = 0;
    for (int p = 0; p < params_.ports(); ++p) {
      out_flit[p].write(0);
      out_credit[p].write(0);
    }
    return;
  }
  for (int p = 0; p < params_.ports(); ++p) {
    const uint64_t w = in_flit[p].read();
    if (flit_word_valid(w) && !router_.accept_flit(p, decode_flit_word(w, params_.geo), cycle_) && error_.empty())
      error_ = "cycle " + std::to_string(cycle_) + ": router " + params_.geo.coord(params_.node) + " port " +
               port_name(p) + ": flit into a full buffer (" + describe_flit_word(w) + ")";
  }
  for (int p = 0; p < kNumMeshDirs; ++p) {
    const uint32_t c = in_credit[p].read();
    if (credit_word_valid(c)) router_.accept_credit(p, credit_word_vc(c));
  }
  PinSink sink;
  sink.geo = &params_.geo;
  router_.step(cycle_, sink);
  if (tamper_) tamper_(cycle_, sink.flit, sink.credit);
  for (int p = 0; p < params_.ports(); ++p) {
    out_flit[p].write(sink.flit[p]);
    out_credit[p].write(sink.credit[p]);
  }
  ++cycle_;
}

}  // namespace nmpsim::noc
