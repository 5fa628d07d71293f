#include "nmpsim/base/parse.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "nmpsim/base/errors.h"

namespace nmpsim::base {

double parse_number(const std::string& text, const std::string& what) {
  const std::string shown_text = "'" + shown(text) + "'";
  // Digits, one point, an exponent: strtod alone would also take hex, inf, nan and leading spaces.
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  size_t digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  }
  if (digits > 0 && i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    size_t exp_digits = 0;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j, ++exp_digits;
    if (exp_digits > 0) i = j;
  }
  if (digits == 0 || i != text.size()) throw InputError(what + ": expected a number, got " + shown_text);
  errno = 0;
  const double v = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(v)) throw InputError(what + ": " + shown_text + " is too large");
  if (errno == ERANGE && v == 0) {
    // Zero itself ("0e-999") is fine; a non-zero number that underflows is not what the user meant.
    if (text.find_first_of("123456789") < text.find_first_of("eE"))
      throw InputError(what + ": " + shown_text + " is too small to represent (it would be 0)");
  }
  return v;
}

std::vector<std::string> split_items(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (item.empty()) throw InputError(what + ": an empty item in '" + shown(text) + "'");
    out.push_back(item);
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

}  // namespace nmpsim::base
