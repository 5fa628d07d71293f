// The one error type for bad input (files, options, values): what() is the whole message, on one line,
// naming the file or option and the field. Every layer throws it; the command line reports it with
// exit code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace nmpsim::base {

/// `s` on one line: control characters (a newline in a user's name or key) become '?'.
inline std::string one_line(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

/// Thrown for any malformed input; what() is the whole message, always one line.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(one_line(what)) {}
};

/// At most 40 characters of a user's string for an error message, control characters shown as '?'.
inline std::string shown(const std::string& s) {
  std::string out = one_line(s.substr(0, 40));
  return s.size() > 40 ? out + "..." : out;
}

/// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool is_utf8(const std::string& s);

}  // namespace nmpsim::base
