// Helpers shared by the nmpsim subcommands: usage errors, option parsing, safe output files.
#pragma once

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::apps {

/// Bad command-line input or configuration: reported on one line, exit code 2.
class UsageError : public base::InputError {
 public:
  explicit UsageError(const std::string& what) : base::InputError(what) {}
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;  ///< the simulation ran but a check (stall, conservation) failed
inline constexpr int kExitUsage = 2;

/// Checks a signed count read from the command line and returns it as unsigned.
/// (Boost parses "-5" into an unsigned option by wrapping around, so counts are read signed.)
uint64_t checked_count(long long value, const char* option, long long min, long long max = (1LL << 53));

/// Parses "WxH" (e.g. "8x8"); both at least 1.
void parse_mesh(const std::string& text, int& width, int& height);

/// Parses args with unix style but without single-dash short options, so negative numbers reach
/// the validators ("--injection-rate -0.1" is a value, not an option). "-h" is accepted as --help.
boost::program_options::variables_map parse_options(const std::vector<std::string>& args,
                                                    const boost::program_options::options_description& desc);

/// Where solved placements are kept: none with --no-cache, else `given_dir` (--cache-dir), else
/// $NMPSIM_CACHE_DIR, $XDG_CACHE_HOME/nmpsim or ~/.cache/nmpsim ("" when none is set).
std::string placement_cache_dir(const boost::program_options::variables_map& vm, const std::string& given_dir);

}  // namespace nmpsim::apps
