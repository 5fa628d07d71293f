#include "nmpsim/rtl_checks/described_router.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "nmpsim/noc/valid_stop_adapter.h"
#include "nmpsim/rtl_checks/described_credit.h"

namespace nmpsim::rtl {

void register_all_described_routers();  // generated (cmake/NmpsimRouterRtl.cmake)

namespace {
std::vector<DescribedRouter>& registry() {
  static std::vector<DescribedRouter> all;
  return all;
}

}  // namespace

void register_described_router(const std::string& name, const std::string& json, PinIoMaker make) {
  registry().push_back(DescribedRouter{RouterDescription::parse(name, json), std::move(make)});
}

const std::vector<DescribedRouter>& described_routers() {
  register_all_described_routers();
  return registry();
}

const DescribedRouter* find_described_router(const std::string& name) {
  for (const DescribedRouter& r : described_routers())
    if (r.description.name == name) return &r;
  return nullptr;
}

void check_fits(const DescribedRouter& r, int buffer_flits, int width, int height) {
  const RouterDescription& d = r.description;
  if (buffer_flits < 1 || buffer_flits > d.max_buffer_flits)
    throw noc::ConfigError("noc: the RTL router '" + d.name + "' holds 1.." + std::to_string(d.max_buffer_flits) +
                           " flits per input, not " + std::to_string(buffer_flits) +
                           " (noc.buffer_flits; max_buffer_flits in its description)");
  for (const auto& [f, extent, key] : {std::tuple{d.dst_x, width, "flit.dst_x"}, {d.dst_y, height, "flit.dst_y"}})
    if (extent > 0 && static_cast<uint64_t>(extent - 1) > f.mask())
      throw noc::ConfigError("noc: the RTL router '" + d.name + "' names destinations in " + std::to_string(f.width) +
                             " bits (" + key + "), too few for a " + std::to_string(width) + "x" +
                             std::to_string(height) + " mesh");
}

FlitFormat::FlitFormat(const RouterDescription& d, int node, const noc::MeshGeometry& geo)
    : d_(d), node_(node), geo_(geo), handles_(d.payload.width < kDirectPayloadBits) {
  if (!handles_) return;
  const size_t n = size_t{1} << std::min(d.payload.width, 16);
  payload_.assign(n, 0);
  live_.assign(n, false);
  clear();
}

void FlitFormat::clear() {
  if (!handles_) return;
  free_.clear();
  for (size_t h = payload_.size(); h-- > 0;) free_.push_back(static_cast<uint32_t>(h));
  live_.assign(live_.size(), false);
  held_ = 0;
}

FlitBits FlitFormat::to_router(uint64_t la) {
  using noc::LaFlit;
  uint64_t payload = LaFlit::payload(la);
  if (handles_) {
    if (free_.empty()) {
      if (error_.empty())
        error_ = "holds more than " + std::to_string(payload_.size()) + " flits, all its " +
                 std::to_string(d_.payload.width) + "-bit payload can name (flit.payload)";
      return {};
    }
    const uint32_t h = free_.back();
    free_.pop_back();
    payload_[h] = payload;
    live_[h] = true;
    ++held_;
    payload = h;
  }
  FlitBits w;
  d_.head.put(w, LaFlit::head(la));
  d_.tail.put(w, LaFlit::tail(la));
  d_.dst_x.put(w, static_cast<uint64_t>(LaFlit::x(la)));
  d_.dst_y.put(w, static_cast<uint64_t>(LaFlit::y(la)));
  d_.lookahead_port.put(w, static_cast<uint64_t>(LaFlit::la_port(la)));
  d_.payload.put(w, payload);
  return w;
}

void FlitFormat::release(const FlitBits& w) {
  const uint64_t h = d_.payload.get(w);
  if (!handles_ || h >= live_.size() || !live_[h]) return;
  live_[h] = false;
  free_.push_back(static_cast<uint32_t>(h));
  --held_;
}

uint64_t FlitFormat::from_router(const FlitBits& w, int out_port, bool keep) {
  const int x = static_cast<int>(d_.dst_x.get(w)), y = static_cast<int>(d_.dst_y.get(w));
  int la = static_cast<int>(d_.lookahead_port.get(w));
  if (d_.lookahead_port.width == 0) {  // no look-ahead field: the adapter's check has nothing to check
    const int next = geo_.neighbour(node_, out_port);
    la = out_port == noc::kLocal || next < 0 ? 0 : geo_.route_xy(next, geo_.id(x, y));
  }
  uint64_t payload = d_.payload.get(w);
  if (handles_) {
    const uint64_t h = payload;
    if (h >= live_.size() || !live_[h]) {
      if (error_.empty())
        error_ = "sent a flit whose payload handle " + std::to_string(h) +
                 " names no flit it holds (duplicated, forged or payload not carried unchanged)";
      payload = 0;
    } else {
      payload = payload_[h];
      if (!keep) release(w);
    }
  }
  return noc::LaFlit::make(d_.head.get(w) != 0, d_.tail.get(w) != 0, x, y, la, payload);
}

DescribedCore::DescribedCore(const DescribedRouter& r, int node, const noc::MeshGeometry& geo, int buffer_flits)
    : d_(r.description), format_(r.description, node, geo) {
  check_fits(r, buffer_flits, geo.width, geo.height);
  io_ = r.make(StrapValues{geo.x(node), geo.y(node), geo.width, geo.height, buffer_flits});
  DescribedCore::reset();
}

void DescribedCore::reset() {
  const bool ready = d_.protocol == Protocol::kValidReady;  // idle flow control: no stop, ready
  for (int p = 0; p < noc::kNumPorts; ++p) {
    io_->set_in_valid(p, false);
    io_->set_flow_in(p, ready);
  }
  io_->clock(true);
  format_.clear();
  in_pending_.fill(false);
  out_pending_.fill(false);
}

void DescribedCore::edge(noc::LaPins& pins) {
  const bool ready = d_.protocol == Protocol::kValidReady;  // the pins carry !ready as stop
  for (int p = 0; p < noc::kNumPorts; ++p) {
    // valid/ready: the flit presented on output p since the last edge moves at this one if ready.
    if (out_pending_[p] && !pins.out_stop[p]) {
      format_.release(out_word_[p]);
      out_pending_[p] = false;
    }
    if (pins.in_valid[p] && !in_pending_[p]) {  // a flit presented for the first time
      in_word_[p] = format_.to_router(pins.in_flit[p]);
      in_pending_[p] = true;
    }
    io_->set_in_valid(p, pins.in_valid[p]);
    io_->set_in_flit(p, pins.in_valid[p] ? in_word_[p] : FlitBits{});
    io_->set_flow_in(p, pins.out_stop[p] != ready);
    if (pins.in_valid[p] && !pins.in_stop[p]) in_pending_[p] = false;  // taken at this edge
  }
  io_->clock(false);
  for (int p = 0; p < noc::kNumPorts; ++p) {
    pins.out_valid[p] = io_->out_valid(p);
    out_pending_[p] = ready && pins.out_valid[p];
    out_word_[p] = io_->out_flit(p);
    pins.out_flit[p] = pins.out_valid[p] ? format_.from_router(out_word_[p], p, ready) : 0;
    pins.in_stop[p] = io_->flow_out(p) != ready;
  }
}

noc::RouterFactory described_factory(const std::string& name, std::function<bool(int)> at, noc::RouterFactory other) {
  const DescribedRouter* r = find_described_router(name);
  if (!r) throw noc::ConfigError("noc: no RTL router named '" + name + "'");
  return [r, at = std::move(at), other = std::move(other)](
             const std::string& module, const noc::RouterParams& p) -> std::unique_ptr<noc::RouterPins> {
    if (!at(p.node)) return other(module, p);
    if (r->description.protocol == Protocol::kCredit)
      return std::make_unique<DescribedCreditRouter>(module.c_str(), p, *r);
    const noc::Handshake hs =
        r->description.protocol == Protocol::kValidReady ? noc::Handshake::kValidReady : noc::Handshake::kValidStop;
    return std::make_unique<noc::ValidStopAdapter>(
        module.c_str(), p, std::make_unique<DescribedCore>(*r, p.node, p.geo, p.buffer_flits), "rtl", hs);
  };
}

}  // namespace nmpsim::rtl
