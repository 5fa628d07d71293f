// Numbers and lists as a user types them on a command line, read strictly: the whole text or an error
// naming the option.
#pragma once

#include <string>
#include <vector>

namespace nmpsim::base {

/// A finite decimal number ("0.5", "1e-3", "1e-320" (subnormal) are numbers; "", "1abc", "0x10", "inf",
/// "nan", "1e400" (overflow) and "1e-400" (a non-zero number that underflows to 0) are not). Throws
/// InputError "<what>: ...".
double parse_number(const std::string& text, const std::string& what);

/// "a,b,c" split at commas; an empty item (",a", "a,,b", "a,") is an error naming `what`.
std::vector<std::string> split_items(const std::string& text, const std::string& what);

}  // namespace nmpsim::base
