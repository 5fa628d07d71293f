#include "mapping/placement_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "mapping/json_fields.h"
#include "mapping/strategy.h"

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

std::optional<Placement> PlacementCache::find(const nlohmann::json& key) const {
  const auto m = memory_.find(key.dump());
  if (m != memory_.end()) return m->second;
  if (dir_.empty()) return std::nullopt;
  const std::string path = path_for(key);
  std::ifstream probe(path);
  if (!probe) return std::nullopt;
  try {
    const nlohmann::json j = read_json_file(path);
    if (!j.is_object() || !j.contains("key") || j["key"] != key || !j.contains("placement")) return std::nullopt;
    return placement_from_json(j["placement"], path);
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable or stale: solve again (and overwrite)
  }
}

void PlacementCache::store(const nlohmann::json& key, const Placement& p) {
  memory_[key.dump()] = p;
  if (dir_.empty()) return;
  const std::string path = path_for(key);
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long long>(getpid()));
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  bool ok = !ec;
  if (ok) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << nlohmann::json{{"key", key}, {"placement", placement_to_json(p)}}.dump() << "\n";
    out.close();
    ok = static_cast<bool>(out) && std::rename(tmp.c_str(), path.c_str()) == 0;
  }
  if (!ok) {
    std::remove(tmp.c_str());
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
