#include "rtl_checks/described_router.h"

#include <nlohmann/json.hpp>

#include "noc/valid_stop_adapter.h"
#include "rtl_checks/described_credit.h"

namespace nmpsim::rtl {

void register_all_described_routers();  // generated (cmake/NmpsimRouterRtl.cmake)

namespace {
std::vector<DescribedRouter>& registry() {
  static std::vector<DescribedRouter> all;
  return all;
}

[[noreturn]] void bad(const std::string& name, const std::string& field, const std::string& why) {
  throw noc::ConfigError("router description '" + name + "': " + field + ": " + why);
}

/// A field given as a bit index (one bit) or [position, width].
Field field(const std::string& name, const nlohmann::json& flit, const char* key, bool required) {
  if (!flit.contains(key)) {
    if (required) bad(name, std::string("flit.") + key, "missing");
    return {};
  }
  const nlohmann::json& v = flit[key];
  Field f;
  if (v.is_number_integer()) {
    f = Field{v.get<int>(), 1};
  } else if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer()) {
    f = Field{v[0].get<int>(), v[1].get<int>()};
  } else {
    bad(name, std::string("flit.") + key, "expected a bit index or [position, width]");
  }
  if (f.pos < 0 || f.width < 1 || f.pos + f.width > 64)
    bad(name, std::string("flit.") + key, "must lie within the 64-bit flit word");
  return f;
}
}  // namespace

RouterDescription RouterDescription::parse(const std::string& name, const std::string& json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    bad(name, "(file)", std::string("not JSON: ") + e.what());
  }
  if (!j.is_object()) bad(name, "(file)", "not a JSON object");
  for (const char* key : {"protocol", "max_buffer_flits"})
    if (j.contains(key) && (key[0] == 'p' ? !j[key].is_string() : !j[key].is_number_integer()))
      bad(name, key, key[0] == 'p' ? "must be a string" : "must be an integer");
  RouterDescription d;
  d.name = name;
  const std::string protocol = j.value("protocol", "");
  if (protocol == "valid_stop")
    d.protocol = Protocol::kValidStop;
  else if (protocol == "valid_ready")
    d.protocol = Protocol::kValidReady;
  else if (protocol == "credit")
    d.protocol = Protocol::kCredit;
  else
    bad(name, "protocol", "'" + protocol + "' is not one of valid_stop, valid_ready, credit");
  if (!j.contains("flit") || !j["flit"].is_object()) bad(name, "flit", "missing");
  const nlohmann::json& f = j["flit"];
  d.head = field(name, f, "head", true);
  d.tail = field(name, f, "tail", true);
  d.dst_x = field(name, f, "dst_x", true);
  d.dst_y = field(name, f, "dst_y", true);
  d.lookahead_port = field(name, f, "lookahead_port", false);
  d.payload = field(name, f, "payload", true);
  if (d.payload.width < 42)
    bad(name, "flit.payload", "needs at least 42 bits (the mesh's 16-bit sequence number and 26-bit packet id)");
  d.max_buffer_flits = j.value("max_buffer_flits", 0);
  if (d.max_buffer_flits < 1 || d.max_buffer_flits > 1024) bad(name, "max_buffer_flits", "must be in 1..1024");
  return d;
}

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

void check_fits(const DescribedRouter& r, int buffer_flits) {
  const RouterDescription& d = r.description;
  if (buffer_flits < 1 || buffer_flits > d.max_buffer_flits)
    throw noc::ConfigError("noc: the RTL router '" + d.name + "' holds 1.." + std::to_string(d.max_buffer_flits) +
                           " flits per input, not " + std::to_string(buffer_flits) +
                           " (noc.buffer_flits; max_buffer_flits in its description)");
}

uint64_t FlitFormat::to_router(uint64_t la) const {
  using noc::LaFlit;
  uint64_t w = 0;
  w = d_.head.put(w, LaFlit::head(la));
  w = d_.tail.put(w, LaFlit::tail(la));
  w = d_.dst_x.put(w, static_cast<uint64_t>(LaFlit::x(la)));
  w = d_.dst_y.put(w, static_cast<uint64_t>(LaFlit::y(la)));
  w = d_.lookahead_port.put(w, static_cast<uint64_t>(LaFlit::la_port(la)));
  return d_.payload.put(w, LaFlit::payload(la));
}

uint64_t FlitFormat::from_router(uint64_t w, int out_port) const {
  const int x = static_cast<int>(d_.dst_x.get(w)), y = static_cast<int>(d_.dst_y.get(w));
  int la = static_cast<int>(d_.lookahead_port.get(w));
  if (d_.lookahead_port.width == 0) {  // no look-ahead field: the adapter's check has nothing to check
    const int next = geo_.neighbour(node_, out_port);
    la = out_port == noc::kLocal || next < 0 ? 0 : geo_.route_xy(next, geo_.id(x, y));
  }
  return noc::LaFlit::make(d_.head.get(w) != 0, d_.tail.get(w) != 0, x, y, la, d_.payload.get(w));
}

DescribedCore::DescribedCore(const DescribedRouter& r, int node, const noc::MeshGeometry& geo, int buffer_flits)
    : d_(r.description), format_(r.description, node, geo) {
  check_fits(r, buffer_flits);
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
}

void DescribedCore::edge(noc::LaPins& pins) {
  const bool ready = d_.protocol == Protocol::kValidReady;  // the pins carry !ready as stop
  for (int p = 0; p < noc::kNumPorts; ++p) {
    io_->set_in_valid(p, pins.in_valid[p]);
    io_->set_in_flit(p, pins.in_valid[p] ? format_.to_router(pins.in_flit[p]) : 0);
    io_->set_flow_in(p, pins.out_stop[p] != ready);
  }
  io_->clock(false);
  for (int p = 0; p < noc::kNumPorts; ++p) {
    pins.out_valid[p] = io_->out_valid(p);
    pins.out_flit[p] = pins.out_valid[p] ? format_.from_router(io_->out_flit(p), p) : 0;
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
