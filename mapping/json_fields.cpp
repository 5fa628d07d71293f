#include "mapping/json_fields.h"

#include <zlib.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace nmpsim::mapping {

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
  if (!v.is_number()) fail(key, "expected a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(key, "must be finite");
  return d;
}

double JsonFields::positive(const char* key) const {
  const double d = number(key);
  if (!(d > 0)) fail(key, "must be positive (got " + get(key).dump() + ")");
  return d;
}

double JsonFields::non_negative(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  const double d = number(key);
  if (d < 0) fail(key, "must be zero or positive (got " + get(key).dump() + ")");
  return d;
}

long long JsonFields::integer(const char* key, long long min, long long max) const {
  const auto& v = get(key);
  if (!v.is_number_integer()) fail(key, "expected an integer");
  const long long i = v.get<long long>();
  if (i < min || i > max)
    fail(key, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "] (got " + std::to_string(i) + ")");
  return i;
}

std::string JsonFields::string(const char* key) const {
  const auto& v = get(key);
  if (!v.is_string()) fail(key, "expected a string");
  return v.get<std::string>();
}

JsonFields JsonFields::object(const char* key) const {
  const auto& v = get(key);
  if (!v.is_object()) fail(key, "expected an object");
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

std::string read_text_file(const std::string& path) {
  // zlib reads gzip-compressed and plain files alike (a plain file passes through unchanged).
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError(path + ": cannot open file: " + std::strerror(errno ? errno : ENOENT));
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  int err = Z_OK;
  const char* why = n < 0 ? gzerror(f, &err) : nullptr;
  const std::string reason = why ? why : "";
  gzclose(f);
  if (n < 0) throw InputError(path + ": cannot read file: " + (err == Z_ERRNO ? std::strerror(errno) : reason));
  return text;
}

nlohmann::json read_json_file(const std::string& path) {
  const std::string text = read_text_file(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    const auto pos = msg.find("parse error");
    throw InputError(path + ": malformed JSON: " + (pos == std::string::npos ? msg : msg.substr(pos)));
  }
}

}  // namespace nmpsim::mapping
