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
  for (const DescribedRouter& r : registry())
    if (r.description.name == name) throw noc::ConfigError("RTL router '" + name + "' is registered twice");
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

void check_fits(const DescribedRouter& r, int buffer_flits, int width, int height, int max_packet_flits) {
  const RouterDescription& d = r.description;
  if (d.max_buffer_flits > 0 && (buffer_flits < 1 || buffer_flits > d.max_buffer_flits))
    throw noc::ConfigError("noc: the RTL router '" + d.name + "' holds 1.." + std::to_string(d.max_buffer_flits) +
                           " flits per input, not " + std::to_string(buffer_flits) +
                           " (noc.buffer_flits; max_buffer_flits in its description)");
  const std::string mesh = std::to_string(width) + "x" + std::to_string(height) + " mesh";
  for (const auto& [f, extent, key] : {std::tuple{d.dst_x, width, "flit.dst_x"}, {d.dst_y, height, "flit.dst_y"}})
    if (extent > 0 && static_cast<uint64_t>(extent - 1) > f.mask())
      throw noc::ConfigError("noc: the RTL router '" + d.name + "' names destinations in " + std::to_string(f.width) +
                             " bits (" + key + "), too few for a " + mesh);
  for (const Strap& s : d.straps) {
    const int most = s.value == "x"              ? width - 1
                     : s.value == "y"            ? height - 1
                     : s.value == "width"        ? width
                     : s.value == "height"       ? height
                     : s.value == "buffer_flits" ? buffer_flits
                                                 : 0;
    if ((width > 0 || s.value == "buffer_flits") && s.width > 0 && s.width < 31 && most >> s.width)
      throw noc::ConfigError("noc: the RTL router '" + d.name + "' takes " + s.value + " in " +
                             std::to_string(s.width) + " bits (straps." + s.key + "), too few for " +
                             (s.value == "buffer_flits" ? std::to_string(most) + " (noc.buffer_flits)" : "a " + mesh));
  }
  const int longest = static_cast<int>(d.length_value(max_packet_flits));
  if (max_packet_flits > 0 && d.length.width > 0 && d.length.width < 31 && longest >> d.length.width)
    throw noc::ConfigError("noc: the RTL router '" + d.name + "' counts packet lengths in " +
                           std::to_string(d.length.width) + " bits (flit.length), too few for packets of " +
                           std::to_string(max_packet_flits) + " flits (noc.max_packet_flits)");
}

FlitFormat::FlitFormat(const RouterDescription& d, int node, const noc::MeshGeometry& geo,
                       std::function<int(uint32_t)> packet_flits)
    : d_(d),
      node_(node),
      geo_(geo),
      packet_flits_(std::move(packet_flits)),
      handles_(d.payload.width < kDirectPayloadBits) {
  if (d.length.width > 0 && !packet_flits_)
    throw noc::ConfigError("noc: the RTL router '" + d.name +
                           "' reads packet lengths (flit.length), which only a mesh's network can give");
  if (!handles_) return;
  const size_t n = size_t{1} << std::min(d.payload.width, 16);
  payload_.assign(n, 0);
  live_.assign(n, false);
  clear();
}

void FlitFormat::clear() {
  left_.fill(0);
  if (!handles_) return;
  free_.clear();
  for (size_t h = payload_.size(); h-- > 0;) free_.push_back(static_cast<uint32_t>(h));
  live_.assign(live_.size(), false);
  held_ = 0;
}

FlitBits FlitFormat::to_router(uint64_t la) {
  using noc::LaFlit;
  uint64_t payload = LaFlit::payload(la);
  uint64_t length = 0;
  if (d_.length.width > 0) {
    const int n = packet_flits_(static_cast<uint32_t>(payload >> 16));
    if (n < 1 || d_.length_value(n) > d_.length.mask()) {
      if (error_.empty())
        error_ = "was given a packet of " + std::to_string(n) + " flits, which its " + std::to_string(d_.length.width) +
                 "-bit length field (flit.length) cannot count";
    } else {
      length = d_.length_value(n);
    }
  }
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
  d_.length.put(w, length);  // in every flit: a router reads it in the head and carries the rest
  d_.payload.put(w, payload);
  return w;
}

std::pair<bool, bool> FlitFormat::framing(const FlitBits& w, int port, uint64_t payload) const {
  if (d_.head.width > 0) return {d_.head.get(w) != 0, d_.tail.get(w) != 0};
  if (port == noc::kLocal) {  // the Local output may interleave packets: its sequence number and length
    const uint64_t seq = payload & 0xffff;
    return {seq == 0, static_cast<int64_t>(seq) + 1 == packet_flits_(static_cast<uint32_t>(payload >> 16))};
  }
  if (left_[port] > 0) return {false, left_[port] == 1};
  const uint64_t n = d_.length.get(w) + (d_.length_total ? 0 : 1);  // the packet's flits, from its head
  return {true, n <= 1};
}

void FlitFormat::moved(const FlitBits& w, int port) {
  if (d_.head.width == 0 && port != noc::kLocal) {
    const uint64_t n = d_.length.get(w) + (d_.length_total ? 0 : 1);
    left_[port] = left_[port] > 0 ? left_[port] - 1 : static_cast<int>(n > 0 ? n - 1 : 0);
  }
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
    payload = 0;
    if (h < live_.size() && live_[h])
      payload = payload_[h];
    else if (error_.empty())
      error_ = "sent a flit whose payload handle " + std::to_string(h) +
               " names no flit it holds (duplicated, forged or payload not carried unchanged)";
  }
  const auto [head, tail] = framing(w, out_port, payload);
  if (!keep) moved(w, out_port);
  return noc::LaFlit::make(head, tail, x, y, la, payload);
}

DescribedCore::DescribedCore(const DescribedRouter& r, const noc::RouterParams& p)
    : d_(r.description), format_(r.description, p.node, p.geo, p.packet_flits) {
  const noc::MeshGeometry& geo = p.geo;
  check_fits(r, p.buffer_flits, geo.width, geo.height, p.max_packet_flits);
  io_ = r.make(StrapValues{geo.x(p.node), geo.y(p.node), geo.width, geo.height, p.buffer_flits});
  DescribedCore::reset();
}

namespace {
noc::RouterParams alone(int node, const noc::MeshGeometry& geo, int buffer_flits) {
  noc::RouterParams p;
  p.node = node;
  p.geo = geo;
  p.buffer_flits = buffer_flits;
  return p;
}
}  // namespace

DescribedCore::DescribedCore(const DescribedRouter& r, int node, const noc::MeshGeometry& geo, int buffer_flits)
    : DescribedCore(r, alone(node, geo, buffer_flits)) {}

void DescribedCore::open_vcd(const std::string& path) {
  if (const std::string why = io_->open_vcd(path); !why.empty()) throw noc::ConfigError(why);
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
  outputs_.take(*io_);
}

void DescribedCore::edge(noc::LaPins& pins) {
  const bool ready = d_.protocol == Protocol::kValidReady;  // the pins carry !ready as stop
  for (int p = 0; p < noc::kNumPorts; ++p) {
    // valid/ready: the flit presented on output p since the last edge moves at this one if ready.
    if (out_pending_[p] && !pins.out_stop[p]) {
      format_.moved(out_word_[p], p);
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
  io_->settle();
  if (const std::string path = outputs_.changed_since(*io_); !path.empty() && error_.empty()) error_ = path;
  io_->clock(false);
  for (int p = 0; p < noc::kNumPorts; ++p) {
    pins.out_valid[p] = io_->out_valid(p);
    out_pending_[p] = ready && pins.out_valid[p];
    out_word_[p] = io_->out_flit(p);
    pins.out_flit[p] = pins.out_valid[p] ? format_.from_router(out_word_[p], p, ready) : 0;
    const bool flow = io_->flow_out(p);
    pins.in_stop[p] = flow != ready;
    outputs_.set(p, pins.out_valid[p], out_word_[p], flow);  // what changed_since() compares next cycle
  }
}

void PinSnapshot::take(const RtlPinIo& io) {
  for (int p = 0; p < noc::kNumPorts; ++p) {
    const bool v = io.out_valid(p);
    set(p, v, v ? io.out_flit(p) : FlitBits{}, io.flow_out(p));
  }
}

void PinSnapshot::set(int p, bool v, const FlitBits& f, bool fl) {
  valid[p] = v;
  flit[p] = v ? f : FlitBits{};
  flow[p] = fl;
}

std::string PinSnapshot::changed_since(const RtlPinIo& io, bool check_flow) const {
  for (int p = 0; p < noc::kNumPorts; ++p) {
    const char* what = io.out_valid(p) != valid[p]               ? "out_valid"
                       : valid[p] && io.out_flit(p) != flit[p]   ? "out_flit"
                       : check_flow && io.flow_out(p) != flow[p] ? "its flow control (ready, stop or credit)"
                                                                 : nullptr;
    if (what)
      return std::string("output ") + what + " on " + noc::port_name(p) +
             " changed between clock edges when the router's inputs did: a combinational path from an input "
             "pin to an output pin (outputs must come from registers; docs/RTL.md \"Registered outputs\")";
  }
  return "";
}

noc::RouterFactory described_factory(const std::string& name, std::function<bool(int)> at, noc::RouterFactory other) {
  const DescribedRouter* r = find_described_router(name);
  if (!r) throw noc::ConfigError("noc: no RTL router named '" + name + "'");
  return [r, at = std::move(at), other = std::move(other)](
             const std::string& module, const noc::RouterParams& p) -> std::unique_ptr<noc::RouterPins> {
    if (!at(p.node)) return other(module, p);
    if (r->description.protocol == Protocol::kCredit)
      return std::make_unique<DescribedCreditRouter>(module.c_str(), p, *r);
    const RouterDescription& d = r->description;
    const noc::Handshake hs = d.protocol == Protocol::kValidStop ? noc::Handshake::kValidStop
                              : d.valid_hold                     ? noc::Handshake::kValidReady
                                                                 : noc::Handshake::kValidReadyNoHold;
    return std::make_unique<noc::ValidStopAdapter>(module.c_str(), p, std::make_unique<DescribedCore>(*r, p), "rtl",
                                                   hs);
  };
}

}  // namespace nmpsim::rtl
