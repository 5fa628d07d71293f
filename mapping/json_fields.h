// Strict JSON object reading with one-line errors that name the source and the field path:
// "hw.json: memory.peak_gbytes_per_s: expected a number". Unknown keys are errors, so a typo
// never silently falls back to a default.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

namespace nmpsim::mapping {

/// Thrown for any malformed input file; what() is the whole one-line message.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class JsonFields {
 public:
  /// `where` is the file name (or preset), `path` the object's field path ("" for the root).
  JsonFields(const nlohmann::json& obj, std::string where, std::string path);

  bool has(const char* key) const { return obj_.contains(key); }
  double number(const char* key) const;
  double number(const char* key, double fallback) const { return has(key) ? number(key) : fallback; }
  double positive(const char* key) const;
  double positive(const char* key, double fallback) const { return has(key) ? positive(key) : fallback; }
  double non_negative(const char* key, double fallback) const;
  long long integer(const char* key, long long min, long long max) const;
  long long integer(const char* key, long long min, long long max, long long fallback) const {
    return has(key) ? integer(key, min, max) : fallback;
  }
  std::string string(const char* key) const;
  std::string string(const char* key, const std::string& fallback) const { return has(key) ? string(key) : fallback; }
  JsonFields object(const char* key) const;
  const nlohmann::json& raw(const char* key) const;
  /// Throws if the object has a key that was never asked for.
  void no_unknown_keys() const;
  [[noreturn]] void fail(const std::string& key, const std::string& why) const;
  std::string field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

 private:
  const nlohmann::json& get(const char* key) const;
  const nlohmann::json& obj_;
  std::string where_, path_;
  mutable std::set<std::string> used_;
};

/// A name that also names files and plot labels (strategies, policies, phases): 1 to 64 letters, digits
/// and . _ + - (not "." or "..").
bool is_valid_name(const std::string& name);

/// The whole file as text; gzip-compressed files (e.g. `trace.json.gz`) are decompressed.
std::string read_text_file(const std::string& path);
/// Parses a file (plain or gzip-compressed) as JSON; errors name the file (and the parser's position).
nlohmann::json read_json_file(const std::string& path);

}  // namespace nmpsim::mapping
