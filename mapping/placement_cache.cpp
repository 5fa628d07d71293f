#include "nmpsim/mapping/placement_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "nmpsim/base/input_file.h"
#include "nmpsim/base/output_files.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/strategy.h"

namespace nmpsim::mapping {

namespace {
constexpr uint64_t kFnvOffset = 1469598103934665603ULL, kFnvPrime = 1099511628211ULL;

uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnvOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

std::string fnv1a_hex(const std::string& text) { return hex(fnv1a(text.data(), text.size())); }

std::string trace_fingerprint(const RoutingTrace& t) {
  const int64_t dims[4] = {t.layers(), t.experts(), t.top_k(), static_cast<int64_t>(t.tokens())};
  uint64_t h = fnv1a(dims, sizeof dims);
  for (int l = 0; l < t.layers(); ++l)
    h = fnv1a(t.experts_of(l, 0), t.tokens() * static_cast<size_t>(t.top_k()) * sizeof(uint16_t), h);
  return hex(h);
}

std::string binary_identity() {
  struct stat st {};
  if (stat("/proc/self/exe", &st) != 0) return "unknown";
  return std::to_string(static_cast<long long>(st.st_size)) + "-" + std::to_string(static_cast<long long>(st.st_mtime));
}

PlacementCache::PlacementCache(std::string dir, std::function<void(const std::string&)> warn)
    : dir_(std::move(dir)), warn_(std::move(warn)) {}

std::string PlacementCache::path_for(const nlohmann::json& key) const {
  return dir_ + "/placement-" + fnv1a_hex(key.dump()) + ".json";
}

namespace {
/// Binds an entry's placement to its key: an entry edited by hand (or damaged) no longer matches.
std::string entry_checksum(const nlohmann::json& key, const nlohmann::json& placement) {
  return fnv1a_hex(key.dump() + "\n" + placement.dump());
}

/// The placement has the dimensions its key says it was built for.
bool fits_key(const Placement& p, const nlohmann::json& key) {
  const nlohmann::json& m = key.value("model", nlohmann::json::object());
  const nlohmann::json& mesh = key.value("hardware", nlohmann::json::object()).value("mesh", nlohmann::json::array());
  if (!m.is_object() || !mesh.is_array() || mesh.size() != 2) return false;
  return p.experts == m.value("experts", -1) && p.layers() == m.value("moe_layers", -1) &&
         p.nodes == mesh[0].get<int>() * mesh[1].get<int>();
}
}  // namespace

std::optional<Placement> PlacementCache::find(const nlohmann::json& key) const {
  const auto m = memory_.find(key.dump());
  if (m != memory_.end()) return m->second;
  if (dir_.empty()) return std::nullopt;
  const std::string path = path_for(key);
  if (!base::names_a_file(path)) return std::nullopt;
  try {
    const nlohmann::json j = parse_json_text(base::read_input_file(path, size_t{256} << 20), path);
    if (!j.is_object() || !j.contains("key") || j["key"] != key || !j.contains("placement")) return std::nullopt;
    const bool intact = j.value("checksum", std::string()) == entry_checksum(key, j["placement"]);
    std::optional<Placement> p;
    if (intact) p = placement_from_json(j["placement"], path);
    if (!p || !fits_key(*p, key)) {
      if (warn_)
        warn_("warning: the cached placement " + path + " does not match what it was stored with: solving again");
      return std::nullopt;
    }
    return p;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable or stale: solve again (and overwrite)
  }
}

void PlacementCache::store(const nlohmann::json& key, const Placement& p) {
  memory_[key.dump()] = p;
  if (dir_.empty()) return;
  const std::string path = path_for(key);
  try {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    const nlohmann::json placement = placement_to_json(p);
    base::write_file(
        path,
        nlohmann::json{{"key", key}, {"placement", placement}, {"checksum", entry_checksum(key, placement)}}.dump() +
            "\n",
        "placement cache");
  } catch (const std::exception&) {
    if (warn_ && !warned_) warn_("warning: cannot write the placement cache in '" + dir_ + "' (solves are not kept)");
    warned_ = true;
  }
}

nlohmann::json StrategyContext::cache_key(const std::string& strategy, const nlohmann::json& opts) const {
  return {{"format", 1},
          {"binary", binary_identity()},
          {"strategy", strategy},
          {"options", opts},
          {"model", model_to_json(model)},
          {"hardware", analytical_to_json(hw)},
          {"profile", {{"fingerprint", trace_fingerprint(profile)}, {"tokens", profile.tokens()}}},
          {"batch", batch},
          {"context", context},
          {"phase", step_kind_name(shape.kind)},
          {"prompt_tokens", shape.prompt_tokens},
          {"prefill_chunk", shape.prefill_chunk},
          {"attn_tp", attn_tp},
          {"memory_capacity_bytes", memory_capacity_bytes},
          {"seed", seed}};
}

Placement StrategyContext::cached(const nlohmann::json& key, const std::function<Placement()>& build) const {
  if (cache) {
    if (std::optional<Placement> hit = cache->find(key)) return *hit;
  }
  Placement p = build();
  if (cache) cache->store(key, p);
  return p;
}

}  // namespace nmpsim::mapping
