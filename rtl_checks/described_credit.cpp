#include "nmpsim/rtl_checks/described_credit.h"

#include <cstdio>

#include "nmpsim/noc/flit_word.h"
#include "nmpsim/noc/valid_stop_adapter.h"

namespace nmpsim::rtl {

void check_credit_links(const DescribedRouter& r, const noc::RouterParams& p) {
  if (r.description.protocol != Protocol::kCredit) return;
  for (int o = 0; o < noc::kNumMeshDirs; ++o)
    if (p.links[o].cycles_per_flit_q != noc::kCycleOne) {
      char cpf[32];
      std::snprintf(cpf, sizeof cpf, "%.2f", static_cast<double>(p.links[o].cycles_per_flit_q) / noc::kCycleOne);
      throw noc::ConfigError("noc: the RTL router '" + r.description.name +
                             "' (credit protocol) has no link-speed straps, so every link must carry one flit per "
                             "cycle; the " +
                             noc::port_name(o) + " link of router " + std::to_string(p.node) + " takes " + cpf +
                             " cycles per flit (noc.link_gbytes_per_s)");
    }
}

DescribedCreditRouter::DescribedCreditRouter(sc_core::sc_module_name name, const noc::RouterParams& p,
                                             const DescribedRouter& r)
    : RouterPins(name, p), d_(r.description), format_(r.description, p.node, p.geo, p.packet_flits) {
  if (p.vcs != 1)
    throw noc::ConfigError("noc: the RTL router '" + d_.name + "' has no virtual channels: noc.vcs must be 1 (got " +
                           std::to_string(p.vcs) + ")");
  if (p.ni_ports != 1)
    throw noc::ConfigError("noc: the RTL router '" + d_.name + "' has one local port: noc.ni_ports must be 1 (got " +
                           std::to_string(p.ni_ports) + ")");
  check_credit_links(r, p);
  check_fits(r, p.buffer_flits, p.geo.width, p.geo.height, p.max_packet_flits);
  io_ = r.make(StrapValues{p.geo.x(p.node), p.geo.y(p.node), p.geo.width, p.geo.height, p.buffer_flits});
  reset_pins();
  io_->clock(true);
  outputs_.take(*io_);
  SC_METHOD(on_edge);
  sensitive << clk.pos();
  dont_initialize();
}

void DescribedCreditRouter::reset_pins() {
  for (int p = 0; p < noc::kNumPorts; ++p) {
    io_->set_in_valid(p, false);
    io_->set_in_flit(p, FlitBits{});
    io_->set_flow_in(p, false);
  }
}

void DescribedCreditRouter::on_edge() {
  if (rst.read()) {
    reset_pins();
    io_->clock(true);
    outputs_.take(*io_);
    format_.clear();
    for (int p = 0; p < noc::kNumPorts; ++p) {
      out_flit[p].write(0);
      out_credit[p].write(0);
    }
    cycle_ = 0;
    return;
  }
  const noc::MeshGeometry& geo = params_.geo;
  for (int p = 0; p < noc::kNumPorts; ++p) {
    const uint64_t w = in_flit[p].read();
    const bool valid = noc::flit_word_valid(w);
    io_->set_in_valid(p, valid);
    io_->set_in_flit(p, valid ? format_.to_router(noc::mesh_to_la(w, params_.node, geo)) : FlitBits{});
    io_->set_flow_in(p, p != noc::kLocal && noc::credit_word_valid(in_credit[p].read()));
  }
  io_->settle();
  if (const std::string path = outputs_.changed_since(*io_); !path.empty()) fail(path);
  io_->clock(false);
  for (int p = 0; p < noc::kNumPorts; ++p) {
    uint64_t w = 0;
    const bool valid = io_->out_valid(p), flow = io_->flow_out(p);
    const FlitBits word = valid ? io_->out_flit(p) : FlitBits{};
    if (valid) {
      const uint64_t la = format_.from_router(word, p);
      const std::string bad = noc::la_port_error(la, params_.node, p, geo);
      if (!bad.empty()) fail(bad);
      w = noc::la_to_mesh(la, geo);
    }
    out_flit[p].write(w);
    out_credit[p].write(flow ? noc::encode_credit_word(0) : 0);
    outputs_.set(p, valid, word, flow);  // what changed_since() compares next cycle
  }
  if (!format_.error().empty()) fail(format_.error());
  ++cycle_;
}

void DescribedCreditRouter::open_vcd(const std::string& path) {
  if (const std::string why = io_->open_vcd(path); !why.empty()) throw noc::ConfigError(why);
}

void DescribedCreditRouter::fail(const std::string& what) {
  if (error_.empty())
    error_ = "cycle " + std::to_string(cycle_) + ": router " + std::to_string(params_.node) + " " +
             params_.geo.coord(params_.node) + " (rtl:" + d_.name + "): " + what;
}

}  // namespace nmpsim::rtl
