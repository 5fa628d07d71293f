#include "nmpsim/apps/cli_common.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "nmpsim/base/parse.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

uint64_t checked_count(long long value, const char* option, long long min, long long max) {
  if (value < min || value > max)
    throw UsageError(std::string("--") + option + ": must be in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "], got " + std::to_string(value));
  return static_cast<uint64_t>(value);
}

void parse_mesh(const std::string& text, int& width, int& height) {
  const size_t x = text.find_first_of("xX");
  auto number = [&](size_t from, size_t to, int& out) {
    if (to <= from || to - from > 6) return false;
    out = 0;
    for (size_t i = from; i < to; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  if (x == std::string::npos || !number(0, x, width) || !number(x + 1, text.size(), height))
    throw UsageError("--mesh: expected WxH such as 8x8, got '" + text + "'");
  if (width < 1 || height < 1) throw UsageError("--mesh: both dimensions must be at least 1, got '" + text + "'");
}

namespace {
/// At most 40 characters of `s`, control characters shown as '?'.
std::string printable(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 40)) out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
  return s.size() > 40 ? out + "..." : out;
}

/// Whether `s` contains one of the placeholders Boost.Program_options 1.74 substitutes into its error
/// messages ("%option%", "%value%", ...): its substitution loop never ends when a replacement contains
/// the placeholder it replaces. Other "%...%" text (a Slurm file name pattern such as %j%A) is fine.
bool has_placeholder(const std::string& s) {
  for (const char* p :
       {"%option%", "%original_token%", "%value%", "%prefix%", "%canonical_option%", "%invalid_line%", "%parameter%"})
    if (s.find(p) != std::string::npos) return true;
  return false;
}

/// The first argument that is neither an option nor an option's value.
std::string first_positional(const std::vector<std::string>& args, const po::options_description& desc) {
  po::options_description with_extra = desc;
  with_extra.add_options()("nmpsim-positional", po::value<std::vector<std::string>>());
  po::positional_options_description all;
  all.add("nmpsim-positional", -1);
  const auto style = po::command_line_style::unix_style ^ po::command_line_style::allow_short;
  try {
    const po::parsed_options p = po::command_line_parser(args).options(with_extra).positional(all).style(style).run();
    for (const auto& o : p.options)
      if (o.position_key >= 0 && !o.value.empty()) return o.value[0];
  } catch (const po::error&) {
  }
  return "?";
}
/// Every number option is read by base::parse_number first: Boost would take "1e-400" as 0 (a
/// default meaning "the model's") and "inf" or "nan" as numbers.
void check_numbers(const po::parsed_options& parsed, const po::options_description& desc) {
  for (const po::option& o : parsed.options) {
    const po::option_description* d = desc.find_nothrow(o.string_key, false);
    if (!d) continue;
    const auto* semantic = d->semantic().get();
    const bool text = dynamic_cast<const po::typed_value<std::string>*>(semantic) ||
                      dynamic_cast<const po::typed_value<std::vector<std::string>>*>(semantic);
    for (const std::string& v : o.value)
      if (text && v.empty()) throw UsageError("--" + o.string_key + ": empty value");
    if (!dynamic_cast<const po::typed_value<double>*>(semantic)) continue;
    for (const std::string& v : o.value) (void)base::parse_number(v, "--" + o.string_key);
  }
}
}  // namespace

po::variables_map parse_options(const std::vector<std::string>& args, const po::options_description& desc) {
  std::vector<std::string> fixed;
  fixed.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i)  // every string that reaches a JSON output must be UTF-8
    if (!base::is_utf8(args[i]))
      throw UsageError("argument " + std::to_string(i + 1) +
                       " is not valid UTF-8 (names, values and file names must be)");
  for (const auto& a : args) {
    if (has_placeholder(a))
      throw UsageError("argument '" + printable(a) +
                       "': contains a %option%-like placeholder of Boost.Program_options, which is not accepted");
    // Option names are lower-case words; anything else is unknown.
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      const std::string name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
      if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
        throw UsageError("unrecognised option '--" + printable(name) + "'");
      }
    }
    fixed.push_back(a == "-h" ? "--help" : a == "-j" ? "--jobs" : a);  // the two short forms
  }
  po::variables_map vm;
  try {
    const auto style = po::command_line_style::unix_style ^ po::command_line_style::allow_short;
    const po::positional_options_description none;  // no command takes positional arguments
    const po::parsed_options parsed = po::command_line_parser(fixed).options(desc).positional(none).style(style).run();
    check_numbers(parsed, desc);
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::too_many_positional_options_error&) {
    throw UsageError("unexpected argument '" + first_positional(fixed, desc) + "' (options start with --)");
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

std::string placement_cache_dir(const boost::program_options::variables_map& vm, const std::string& given_dir) {
  if (vm.count("cache-dir") && vm.count("no-cache")) throw UsageError("--cache-dir and --no-cache: give one of them");
  if (vm.count("no-cache")) return "";
  if (vm.count("cache-dir") && given_dir.empty()) throw UsageError("--cache-dir: empty value (use --no-cache)");
  if (!given_dir.empty()) return given_dir;
  if (const char* d = std::getenv("NMPSIM_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/nmpsim";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/nmpsim";
  return "";
}

}  // namespace nmpsim::apps
