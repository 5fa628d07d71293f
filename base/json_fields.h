// Strict JSON object reading with one-line errors that name the source and the field path:
// "hw.json: memory.peak_gbytes_per_s: expected a number". Unknown keys are errors, so a typo
// never silently falls back to a default.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "nmpsim/base/errors.h"

namespace nmpsim::base {

/// The accepted range of a numeric input field, with its unit (docs/FORMATS.md lists them all).
struct NumberRange {
  double lo, hi;
  const char* unit;
  bool contains(double v) const { return v >= lo && v <= hi; }  // false for NaN
  /// "must be in [lo, hi] unit (got v)"
  std::string violation(double v) const;
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
  /// A finite number in [lo, hi] (`unit` is shown in the error, e.g. "TFLOP/s").
  double number_in(const char* key, double lo, double hi, const char* unit = "") const;
  double number_in(const char* key, double lo, double hi, double fallback, const char* unit = "") const {
    return has(key) ? number_in(key, lo, hi, unit) : fallback;
  }
  double number_in(const char* key, const NumberRange& r) const { return number_in(key, r.lo, r.hi, r.unit); }
  double number_in(const char* key, const NumberRange& r, double fallback) const {
    return number_in(key, r.lo, r.hi, fallback, r.unit);
  }
  long long integer(const char* key, long long min, long long max) const;
  long long integer(const char* key, long long min, long long max, long long fallback) const {
    return has(key) ? integer(key, min, max) : fallback;
  }
  std::string string(const char* key) const;
  bool boolean(const char* key, bool fallback) const;
  std::string string(const char* key, const std::string& fallback) const { return has(key) ? string(key) : fallback; }
  JsonFields object(const char* key) const;
  const nlohmann::json& raw(const char* key) const;
  /// Throws if the object has a key that was never asked for.
  void no_unknown_keys() const;
  [[noreturn]] void fail(const std::string& key, const std::string& why) const;
  std::string field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& where() const { return where_; }

 private:
  const nlohmann::json& get(const char* key) const;
  const nlohmann::json& obj_;
  std::string where_, path_;
  mutable std::set<std::string> used_;
};

/// A name that also names files and plot labels (strategies, policies, phases): 1 to 64 letters, digits
/// and . _ + - (not "." or "..").
bool is_valid_name(const std::string& name);

/// A short description of a JSON value for error messages ("an array of 3 elements", "the string \"x\"",
/// "the number 2.5"); never the whole value (which may be huge or nested deep).
std::string describe_json(const nlohmann::json& v);
/// "1e+300", "0.5": a number as it should appear in an error message.
std::string number_text(double v);

/// Deepest nesting accepted in any JSON input (objects and arrays); deeper documents are errors.
inline constexpr int kMaxJsonDepth = 64;
/// The whole file as text; gzip-compressed files (e.g. `trace.json.gz`) are decompressed. Errors (not
/// found, a directory, unreadable, corrupt gzip) name the file.
std::string read_text_file(const std::string& path);
/// Parses JSON text strictly: no NUL bytes, no duplicate keys in an object, at most kMaxJsonDepth levels,
/// numbers that fit a double, nothing after the value. Errors are one line starting with `where`.
nlohmann::json parse_json_text(const std::string& text, const std::string& where);
/// Throws InputError "<where>: malformed JSON: a NUL byte at offset N" if `text` holds a NUL byte.
void check_no_nul(const std::string& text, const std::string& where);
/// Throws InputError if the number written `text` is not zero but was read as `v` == 0 (it underflows:
/// "1e-400" is not the 0 that often means "the default").
void check_underflow(double v, const std::string& text, const std::string& where);
/// read_text_file + parse_json_text.
nlohmann::json read_json_file(const std::string& path);

}  // namespace nmpsim::base
