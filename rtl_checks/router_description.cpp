#include "nmpsim/rtl_checks/router_description.h"

#include <nlohmann/json.hpp>

#include "nmpsim/noc/noc_config.h"

namespace nmpsim::rtl {

namespace {

[[noreturn]] void bad(const std::string& name, const std::string& field, const std::string& why) {
  throw noc::ConfigError("router description '" + name + "': " + field + ": " + why);
}

/// A field given as a bit index (one bit) or [position, width], within `bits`.
Field field(const std::string& name, const nlohmann::json& flit, const char* key, bool required, int bits) {
  if (!flit.contains(key)) {
    if (required) bad(name, std::string("flit.") + key, "missing");
    return {};
  }
  const nlohmann::json& v = flit[key];
  Field f;
  // Read as 64-bit first: a huge index must not wrap into range.
  auto small = [](const nlohmann::json& x) {
    return x.is_number_integer() && x.get<long long>() >= -1 && x.get<long long>() <= FlitBits::kMaxBits;
  };
  if (small(v)) {
    f = Field{v.get<int>(), 1};
  } else if (v.is_array() && v.size() == 2 && small(v[0]) && small(v[1])) {
    f = Field{v[0].get<int>(), v[1].get<int>()};
  } else {
    bad(name, std::string("flit.") + key, "expected a bit index or [position, width]");
  }
  if (f.pos < 0 || f.width < 1 || f.width > 64 || f.pos + f.width > bits)
    bad(name, std::string("flit.") + key,
        "must be 1 to 64 bits within the " + std::to_string(bits) + "-bit flit word (flit_bits)");
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
  for (const char* key : {"protocol", "max_buffer_flits", "flit_bits"})
    if (j.contains(key) && (key[0] == 'p' ? !j[key].is_string()
                                          : !j[key].is_number_integer() || j[key].get<long long>() < 0 ||
                                                j[key].get<long long>() > 1 << 20))
      bad(name, key, key[0] == 'p' ? "must be a string" : "must be an integer in 0..2^20");
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
  d.flit_bits = j.value("flit_bits", 64);
  if (d.flit_bits < 8 || d.flit_bits > FlitBits::kMaxBits)
    bad(name, "flit_bits", "must be in 8.." + std::to_string(FlitBits::kMaxBits));
  if (!j.contains("flit") || !j["flit"].is_object()) bad(name, "flit", "missing");
  const nlohmann::json& f = j["flit"];
  const int bits = d.flit_bits;
  d.head = field(name, f, "head", true, bits);
  d.tail = field(name, f, "tail", true, bits);
  d.dst_x = field(name, f, "dst_x", true, bits);
  d.dst_y = field(name, f, "dst_y", true, bits);
  d.lookahead_port = field(name, f, "lookahead_port", false, bits);
  d.payload = field(name, f, "payload", true, bits);
  if (d.payload.width < 8)
    bad(name, "flit.payload",
        "needs at least 8 bits (a handle for each flit inside the router; 42 bits carry the mesh's ids)");
  d.max_buffer_flits = j.value("max_buffer_flits", 0);
  if (d.max_buffer_flits < 1 || d.max_buffer_flits > 1024) bad(name, "max_buffer_flits", "must be in 1..1024");
  return d;
}

}  // namespace nmpsim::rtl
