#include "nmpsim/mapping/data_files.h"

#include <cstdlib>

#ifndef NMPSIM_DATA_DIR
#error "NMPSIM_DATA_DIR must be defined by the build (mapping/CMakeLists.txt)"
#endif

namespace nmpsim::mapping {

namespace {
const char* const kCategories[] = {"coding",    "extraction", "humanities", "math",
                                   "reasoning", "roleplay",   "stem",       "writing"};
constexpr const char* kPrefix = "mtbench-";
}  // namespace

std::string data_dir() {
  const char* env = std::getenv("NMPSIM_DATA_DIR");
  return env && *env ? std::string(env) : std::string(NMPSIM_DATA_DIR);
}

std::vector<std::string> vendored_trace_names() {
  std::vector<std::string> names;
  for (const char* c : kCategories) names.push_back(std::string(kPrefix) + c);
  return names;
}

std::string resolve_trace_path(const std::string& name_or_path) {
  for (const char* c : kCategories)
    if (name_or_path == std::string(kPrefix) + c)
      return data_dir() + "/traces/mixtral/experts_" + c + "_mixtral.json.gz";
  return name_or_path;
}

}  // namespace nmpsim::mapping
