#include "nmpsim/noc/valid_stop_adapter.h"

#include <algorithm>

#include "nmpsim/noc/flit_word.h"

namespace nmpsim::noc {

uint64_t mesh_to_la(uint64_t w, int node, const MeshGeometry& geo) {
  const Flit f = decode_flit_word(w, geo);
  const uint64_t payload = uint64_t{f.seq} | uint64_t{f.packet} << 16;
  return LaFlit::make(f.head(), f.tail(), flit_word_x(w), flit_word_y(w), geo.route_xy(node, static_cast<int>(f.dst)),
                      payload);
}

uint64_t la_to_mesh(uint64_t w, const MeshGeometry& geo) {
  Flit f;
  f.flags = static_cast<uint8_t>((LaFlit::head(w) ? kHeadFlit : 0) | (LaFlit::tail(w) ? kTailFlit : 0));
  f.dst = static_cast<uint32_t>(geo.id(LaFlit::x(w), LaFlit::y(w)));
  f.seq = static_cast<uint16_t>(LaFlit::payload(w) & 0xffff);
  f.packet = static_cast<uint32_t>(LaFlit::payload(w) >> 16);
  return encode_flit_word(f, geo);
}

std::string la_port_error(uint64_t f, int node, int out_port, const MeshGeometry& geo) {
  const int next = geo.neighbour(node, out_port);
  if (out_port == kLocal || next < 0 || LaFlit::la_port(f) == geo.route_xy(next, geo.id(LaFlit::x(f), LaFlit::y(f))))
    return "";
  return std::string("look-ahead port ") + port_name(LaFlit::la_port(f)) + " for the router beyond " +
         port_name(out_port) + " is not its XY route";
}

ValidStopAdapter::ValidStopAdapter(sc_core::sc_module_name name, const RouterParams& p, std::unique_ptr<LaCore> core,
                                   const char* implementation, Handshake handshake)
    : RouterPins(name, p), core_(std::move(core)), impl_(implementation), handshake_(handshake) {
  if (p.vcs != 1)
    throw ConfigError("noc: the look-ahead router has no virtual channels: noc.vcs must be 1 (got " +
                      std::to_string(p.vcs) + ")");
  if (p.ni_ports != 1)
    throw ConfigError("noc: the look-ahead router has one local port: noc.ni_ports must be 1 (got " +
                      std::to_string(p.ni_ports) + ")");
  reset_state();
  SC_METHOD(on_edge);
  sensitive << clk.pos();
  dont_initialize();
}

void ValidStopAdapter::fail(const std::string& what) {
  if (error_.empty())
    error_ = "cycle " + std::to_string(cycle_) + ": router " + std::to_string(params_.node) + " " +
             params_.geo.coord(params_.node) + " (" + impl_ + "): " + what;
}

void ValidStopAdapter::reset_state() {
  pins_ = LaPins{};
  for (auto& q : in_q_) q.clear();
  std::fill(std::begin(credits_), std::end(credits_), params_.buffer_flits);
  std::fill(std::begin(link_free_q_), std::end(link_free_q_), 0);
  std::fill(std::begin(held_), std::end(held_), false);
  cycle_ = 0;
}

void ValidStopAdapter::take_inputs(uint32_t (&credit_out)[kNumPorts]) {
  for (int p = 0; p < kNumPorts; ++p) {
    const bool has = !in_q_[p].empty();
    // valid/stop: offer only when not stopped; valid/ready: whenever there is a flit.
    pins_.in_valid[p] = has && (handshake_ != Handshake::kValidStop || !pins_.in_stop[p]);
    pins_.in_flit[p] = pins_.in_valid[p] ? mesh_to_la(in_q_[p].front(), params_.node, params_.geo) : 0;
    if (!pins_.in_valid[p] || pins_.in_stop[p]) continue;
    in_q_[p].pop_front();
    credit_out[p] = encode_credit_word(0);
  }
}

bool ValidStopAdapter::leaves(int o, uint64_t now_q) {
  const bool valid = pins_.out_valid[o];
  if (handshake_ == Handshake::kValidStop) return valid;
  if (handshake_ == Handshake::kValidReady && held_[o] && (!valid || pins_.out_flit[o] != held_flit_[o]))
    fail(std::string("the flit presented on ") + port_name(o) + (valid ? " changed" : " was withdrawn") +
         " before ready took it (valid/ready)");
  const bool ready = o == kLocal || (credits_[o] > 0 && link_free_q_[o] <= now_q);
  pins_.out_stop[o] = !ready;  // registered: the router sees it at the next edge
  held_[o] = valid && !ready;
  held_flit_[o] = pins_.out_flit[o];
  return valid && ready;
}

void ValidStopAdapter::on_edge() {
  if (rst.read()) {
    core_->reset();
    reset_state();
    for (int p = 0; p < kNumPorts; ++p) {
      out_flit[p].write(0);
      out_credit[p].write(0);
    }
    return;
  }
  const MeshGeometry& geo = params_.geo;
  for (int p = 0; p < kNumPorts; ++p) {
    const uint64_t w = in_flit[p].read();
    if (!flit_word_valid(w)) continue;
    if (static_cast<int>(in_q_[p].size()) >= params_.buffer_flits)
      fail(std::string("flit into a full buffer on port ") + port_name(p));
    else
      in_q_[p].push_back(w);
  }
  for (int o = 0; o < kNumMeshDirs; ++o)
    if (credit_word_valid(in_credit[o].read())) ++credits_[o];
  uint32_t credit_out[kNumPorts] = {};
  take_inputs(credit_out);
  const uint64_t now_q = cycle_ << kCycleFracBits;
  if (handshake_ == Handshake::kValidStop) {
    for (int o = 0; o < kNumMeshDirs; ++o) pins_.out_stop[o] = credits_[o] <= 0 || link_free_q_[o] > now_q;
    pins_.out_stop[kLocal] = false;
  }
  core_->edge(pins_);
  if (error_.empty() && !core_->error().empty()) fail(core_->error());
  for (int o = 0; o < kNumPorts; ++o) {
    uint64_t w = 0;
    if (leaves(o, now_q)) {
      const uint64_t f = pins_.out_flit[o];
      w = la_to_mesh(f, geo);
      const std::string bad_port = la_port_error(f, params_.node, o, geo);
      if (!bad_port.empty()) fail(bad_port);
      if (o != kLocal) {
        --credits_[o];  // below zero: the router ignored out_stop; the mesh's checks name it
        link_free_q_[o] = std::max(link_free_q_[o], now_q) + params_.links[o].cycles_per_flit_q;
      }
    }
    out_flit[o].write(w);
    out_credit[o].write(credit_out[o]);
  }
  ++cycle_;
}

RouterFactory la_model_factory() {
  return [](const std::string& name, const RouterParams& p) -> std::unique_ptr<RouterPins> {
    return std::make_unique<ValidStopAdapter>(name.c_str(), p,
                                              std::make_unique<LaRouterModel>(p.node, p.geo, p.buffer_flits), "la-sc");
  };
}

}  // namespace nmpsim::noc
