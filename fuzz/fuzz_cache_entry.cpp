// Fuzz target: placement cache entries (mapping::PlacementCache::find): whatever a cache file holds,
// find() answers a miss or a placement with the dimensions of its key, and never throws.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fuzz_common.h"
#include "nmpsim/mapping/placement_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nmpsim;
  static const std::string dir = [] {
    std::string d = std::filesystem::temp_directory_path().string() + "/nmpsim-fuzz-cache-" + std::to_string(getpid());
    std::filesystem::create_directories(d);
    return d;
  }();
  const nlohmann::json key = {{"format", 1},
                              {"strategy", "s"},
                              {"model", {{"experts", 2}, {"moe_layers", 1}}},
                              {"hardware", {{"mesh", {2, 1}}}}};
  mapping::PlacementCache cache(dir, [](const std::string&) {});
  { std::ofstream(cache.path_for(key), std::ios::binary | std::ios::trunc) << fuzz::text(data, size); }
  try {
    const std::optional<mapping::Placement> p = cache.find(key);
    if (p && (p->experts != 2 || p->nodes != 2 || p->layers() != 1)) std::abort();
  } catch (...) {
    std::abort();  // a cache entry is never an error: a miss at worst
  }
  return 0;
}
