#include "nmpsim/base/json_fields.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "nmpsim/base/input_file.h"

namespace nmpsim::base {

JsonFields::JsonFields(const nlohmann::json& obj, std::string where, std::string path)
    : obj_(obj), where_(std::move(where)), path_(std::move(path)) {
  if (!obj_.is_object())
    throw InputError(where_ + ": " + (path_.empty() ? "top level" : path_) + ": expected an object");
}

void JsonFields::fail(const std::string& key, const std::string& why) const {
  throw InputError(where_ + ": " + field(key) + ": " + why);
}

const nlohmann::json& JsonFields::get(const char* key) const {
  used_.insert(key);
  auto it = obj_.find(key);
  if (it == obj_.end()) fail(key, "missing");
  return *it;
}

const nlohmann::json& JsonFields::raw(const char* key) const { return get(key); }

double JsonFields::number(const char* key) const {
  const auto& v = get(key);
  if (!v.is_number()) fail(key, "expected a number, got " + describe_json(v));
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(key, "must be finite");
  return d;
}

double JsonFields::positive(const char* key) const {
  const double d = number(key);
  if (!(d > 0)) fail(key, "must be positive (got " + number_text(d) + ")");
  return d;
}

double JsonFields::non_negative(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  const double d = number(key);
  if (d < 0) fail(key, "must be zero or positive (got " + number_text(d) + ")");
  return d;
}

std::string NumberRange::violation(double v) const {
  const std::string u = unit && *unit ? std::string(" ") + unit : "";
  return "must be in [" + number_text(lo) + ", " + number_text(hi) + "]" + u + " (got " + number_text(v) + ")";
}

double JsonFields::number_in(const char* key, double lo, double hi, const char* unit) const {
  const double d = number(key);
  const NumberRange r{lo, hi, unit};
  if (!r.contains(d)) fail(key, r.violation(d));
  return d;
}

long long JsonFields::integer(const char* key, long long min, long long max) const {
  const auto& v = get(key);
  if (v.is_number_float()) {  // 1e3 and 1024.0 are integers written as floats
    const double d = v.get<double>();
    if (!(d == std::floor(d)) || !std::isfinite(d)) fail(key, "expected an integer, got " + describe_json(v));
    const auto range = "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    if (d < static_cast<double>(min) || d > static_cast<double>(max))
      fail(key, range + " (got " + number_text(d) + ")");
    return static_cast<long long>(d);
  }
  if (!v.is_number_integer()) fail(key, "expected an integer, got " + describe_json(v));
  const auto range = "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  // Unsigned values above the signed range would wrap: report them as written.
  if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(max))
    fail(key, range + " (got " + std::to_string(v.get<unsigned long long>()) + ")");
  const long long i = v.get<long long>();
  if (i < min || i > max) fail(key, range + " (got " + std::to_string(i) + ")");
  return i;
}

std::string JsonFields::string(const char* key) const {
  const auto& v = get(key);
  if (!v.is_string()) fail(key, "expected a string, got " + describe_json(v));
  return v.get<std::string>();
}

bool JsonFields::boolean(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  const auto& v = get(key);
  if (!v.is_boolean()) fail(key, "expected true or false, got " + describe_json(v));
  return v.get<bool>();
}

JsonFields JsonFields::object(const char* key) const {
  const auto& v = get(key);
  if (!v.is_object()) fail(key, "expected an object, got " + describe_json(v));
  return JsonFields(v, where_, field(key));
}

void JsonFields::no_unknown_keys() const {
  for (auto it = obj_.begin(); it != obj_.end(); ++it)
    if (!used_.count(it.key())) fail(it.key(), "unknown field");
}

bool is_valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-')) return false;
  return name != "." && name != "..";
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string describe_json(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      return "an object of " + std::to_string(v.size()) + " keys";
    case nlohmann::json::value_t::array:
      return "an array of " + std::to_string(v.size()) + " elements";
    case nlohmann::json::value_t::string: {
      const std::string& t = v.get_ref<const std::string&>();
      std::string shown;
      for (char c : t.substr(0, 40)) shown += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
      return "the string \"" + shown + (t.size() > 40 ? "...\"" : "\"");
    }
    case nlohmann::json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::number_unsigned:
      return "the number " + std::to_string(v.get<unsigned long long>());
    case nlohmann::json::value_t::number_integer:
      return "the number " + std::to_string(v.get<long long>());
    default:
      return "the number " + number_text(v.get<double>());
  }
}

std::string read_text_file(const std::string& path) { return base::read_input_file(path); }

void check_no_nul(const std::string& text, const std::string& where) {
  const size_t nul = text.find('\0');
  if (nul != std::string::npos)
    throw InputError(where + ": malformed JSON: a NUL byte at offset " + std::to_string(nul));
}

void check_underflow(double v, const std::string& text, const std::string& where) {
  if (v != 0) return;
  const size_t exp = text.find_first_of("eE");
  if (text.substr(0, exp).find_first_of("123456789") != std::string::npos)
    throw InputError(where + ": malformed JSON: number underflow: " + text.substr(0, 40) +
                     " is too small to represent");
}

namespace {
/// Every number of the text written with an exponent, checked for underflow (the parser reads
/// "1e-400" as 0 silently). Strings are skipped.
void check_json_numbers(const std::string& text, const std::string& where) {
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      continue;
    }
    if (c != '-' && (c < '0' || c > '9')) continue;
    size_t j = i;
    bool exponent = false;
    while (j < n && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.' || text[j] == 'e' ||
                     text[j] == 'E' || text[j] == '+' || text[j] == '-')) {
      exponent = exponent || text[j] == 'e' || text[j] == 'E';
      ++j;
    }
    if (exponent) {
      const std::string token = text.substr(i, j - i);
      check_underflow(std::strtod(token.c_str(), nullptr), token, where);
    }
    i = j - 1;
  }
}
}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& where) {
  check_no_nul(text, where);
  check_json_numbers(text, where);
  // Depth and duplicate keys are checked as the parser goes (nlohmann's parser does neither).
  std::vector<std::set<std::string>> keys;
  auto check = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if ((event == E::object_start || event == E::array_start) && depth >= kMaxJsonDepth)
      throw InputError(where + ": malformed JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (event == E::object_start) keys.emplace_back();
    if (event == E::object_end && !keys.empty()) keys.pop_back();
    if (event == E::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
      throw InputError(where + ": malformed JSON: key \"" + parsed.get<std::string>() +
                       "\" appears twice in an object");
    return true;
  };
  try {
    return nlohmann::json::parse(text, check);
  } catch (const nlohmann::json::exception& e) {
    std::string msg = e.what();
    const auto pos = msg.find("] ");  // drop nlohmann's "[json.exception.parse_error.101] " prefix
    throw InputError(where + ": malformed JSON: " + (pos == std::string::npos ? msg : msg.substr(pos + 2)));
  }
}

nlohmann::json read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

}  // namespace nmpsim::base
