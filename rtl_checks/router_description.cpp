#include "nmpsim/rtl_checks/router_description.h"

#include <nlohmann/json.hpp>
#include <regex>

#include "nmpsim/noc/noc_config.h"

namespace nmpsim::rtl {

namespace {

[[noreturn]] void bad(const std::string& name, const std::string& field, const std::string& why) {
  throw noc::ConfigError("router description '" + name + "': " + field + ": " + why);
}

/// Read as 64-bit first: a huge index must not wrap into range.
bool small_int(const nlohmann::json& x, long long lo, long long hi) {
  return x.is_number_integer() && x.get<long long>() >= lo && x.get<long long>() <= hi;
}

/// A field given as a bit index (one bit) or [position, width], within `bits`.
Field field(const std::string& name, const nlohmann::json& flit, const char* key, bool required, int bits) {
  if (!flit.contains(key)) {
    if (required) bad(name, std::string("flit.") + key, "missing");
    return {};
  }
  const nlohmann::json& v = flit[key];
  auto small = [](const nlohmann::json& x) { return small_int(x, -1, FlitBits::kMaxBits); };
  Field f;
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

/// One of `choices` (the first is the default when absent).
std::string choice(const std::string& name, const nlohmann::json& j, const char* key,
                   std::initializer_list<const char*> choices, const std::string& prefix = "") {
  if (!j.contains(key)) return *choices.begin();
  std::string all;
  for (const char* c : choices) all += (all.empty() ? "" : ", ") + std::string(c);
  if (!j[key].is_string()) bad(name, prefix + key, "must be a string: one of " + all);
  const std::string v = j[key].get<std::string>();
  for (const char* c : choices)
    if (v == c) return v;
  bad(name, prefix + key, "'" + v + "' is not one of " + all);
}

void parse_flit(const std::string& name, const nlohmann::json& j, RouterDescription& d) {
  if (!j.contains("flit") || !j["flit"].is_object()) bad(name, "flit", "missing");
  const nlohmann::json& f = j["flit"];
  const int bits = d.flit_bits;
  d.length = field(name, f, "length", false, bits);
  const bool framed = d.length.width > 0;  // a length frames the packet: head and tail are optional
  d.head = field(name, f, "head", !framed, bits);
  d.tail = field(name, f, "tail", !framed, bits);
  if ((d.head.width == 0) != (d.tail.width == 0))
    bad(name, d.head.width == 0 ? "flit.head" : "flit.tail", "give both head and tail, or neither (with a length)");
  d.length_total = choice(name, f, "length_counts", {"after_head", "total"}, "flit.") == "total";
  if (f.contains("length_counts") && !framed) bad(name, "flit.length_counts", "given without flit.length");
  d.dst_x = field(name, f, "dst_x", true, bits);
  d.dst_y = field(name, f, "dst_y", true, bits);
  d.lookahead_port = field(name, f, "lookahead_port", false, bits);
  d.payload = field(name, f, "payload", true, bits);
  if (d.payload.width < 8)
    bad(name, "flit.payload",
        "needs at least 8 bits (a handle for each flit inside the router; 42 bits carry the mesh's ids)");
  const std::pair<const char*, Field> all[] = {{"head", d.head},      {"tail", d.tail},
                                               {"dst_x", d.dst_x},    {"dst_y", d.dst_y},
                                               {"length", d.length},  {"lookahead_port", d.lookahead_port},
                                               {"payload", d.payload}};
  for (size_t a = 0; a < std::size(all); ++a)
    for (size_t b = a + 1; b < std::size(all); ++b) {
      const Field &x = all[a].second, &y = all[b].second;
      if (x.width && y.width && x.pos < y.pos + y.width && y.pos < x.pos + x.width)
        bad(name, std::string("flit.") + all[b].first, std::string("overlaps flit.") + all[a].first);
    }
}

/// "pin", "pin[3]" or "pin[4 +: 4]".
void parse_straps(const std::string& name, const nlohmann::json& j, RouterDescription& d) {
  if (!j.contains("straps")) return;
  if (!j["straps"].is_object()) bad(name, "straps", "must be an object: {\"pin\": \"x\", ...}");
  static const std::regex key_re(R"(^[A-Za-z_][A-Za-z0-9_]*(\[([0-9]{1,4})\]|\[([0-9]{1,4}) *\+: *([0-9]{1,2})\])?$)");
  for (const auto& [key, v] : j["straps"].items()) {
    std::smatch m;
    if (!std::regex_match(key, m, key_re))
      bad(name, "straps." + key, "not a pin, a bit (pin[3]) or a slice (pin[4 +: 4])");
    Strap s;
    s.key = key;
    s.width = m[2].matched ? 1 : m[4].matched ? std::stoi(m[4].str()) : 0;
    if (m[4].matched && (s.width < 1 || s.width > 64)) bad(name, "straps." + key, "a slice is 1 to 64 bits wide");
    if (v.is_string()) {
      s.value = v.get<std::string>();
      if (s.value != "x" && s.value != "y" && s.value != "width" && s.value != "height" && s.value != "buffer_flits")
        bad(name, "straps." + key, "'" + s.value + "' is not one of x, y, width, height, buffer_flits or a constant");
    } else if (small_int(v, 0, (1LL << 53))) {
      s.constant = v.get<uint64_t>();
      if (s.width > 0 && s.width < 64 && s.constant >> s.width)
        bad(name, "straps." + key, std::to_string(s.constant) + " does not fit " + std::to_string(s.width) + " bits");
    } else {
      bad(name, "straps." + key, "must be x, y, width, height, buffer_flits or a non-negative integer");
    }
    d.straps.push_back(s);
  }
}

void parse_port_index(const std::string& name, const nlohmann::json& j, RouterDescription& d) {
  if (!j.contains("port_index")) return;
  const nlohmann::json& m = j["port_index"];
  static const char* const kNames[] = {"north", "east", "south", "west", "local"};
  if (!m.is_object() || m.size() != 5)
    bad(name, "port_index", "must give the router's index of each of north, east, south, west, local");
  for (int p = 0; p < 5; ++p) {
    if (!m.contains(kNames[p])) bad(name, "port_index", std::string("'") + kNames[p] + "' is missing");
    if (!small_int(m[kNames[p]], 0, 63)) bad(name, std::string("port_index.") + kNames[p], "must be an index in 0..63");
    d.port_index[p] = m[kNames[p]].get<int>();
    for (int q = 0; q < p; ++q)
      if (d.port_index[q] == d.port_index[p])
        bad(name, std::string("port_index.") + kNames[p], std::string("is also ") + kNames[q] + "'s index");
  }
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
  for (const char* key : {"max_buffer_flits", "flit_bits"})
    if (j.contains(key) && !small_int(j[key], 0, 1 << 20)) bad(name, key, "must be an integer in 0..2^20");
  RouterDescription d;
  d.name = name;
  if (!j.contains("protocol")) bad(name, "protocol", "missing (valid_stop, valid_ready or credit)");
  const std::string protocol = choice(name, j, "protocol", {"valid_stop", "valid_ready", "credit"});
  d.protocol = protocol == "valid_stop"    ? Protocol::kValidStop
               : protocol == "valid_ready" ? Protocol::kValidReady
                                           : Protocol::kCredit;
  if (j.contains("valid_hold")) {
    if (!j["valid_hold"].is_boolean()) bad(name, "valid_hold", "must be true or false");
    if (d.protocol != Protocol::kValidReady) bad(name, "valid_hold", "applies to protocol valid_ready only");
    d.valid_hold = j["valid_hold"].get<bool>();
  }
  d.reset_low = choice(name, j, "reset_active", {"high", "low"}) == "low";
  d.flit_bits = j.value("flit_bits", 64);
  if (d.flit_bits < 8 || d.flit_bits > FlitBits::kMaxBits)
    bad(name, "flit_bits", "must be in 8.." + std::to_string(FlitBits::kMaxBits));
  parse_flit(name, j, d);
  parse_straps(name, j, d);
  parse_port_index(name, j, d);
  d.max_buffer_flits = j.value("max_buffer_flits", 0);
  if (j.contains("max_buffer_flits") && (d.max_buffer_flits < 1 || d.max_buffer_flits > 1024))
    bad(name, "max_buffer_flits", "must be in 1..1024");
  if (d.protocol == Protocol::kCredit && d.max_buffer_flits == 0)
    bad(name, "max_buffer_flits", "required with protocol credit (the upstream's credits count the router's slots)");
  return d;
}

}  // namespace nmpsim::rtl
