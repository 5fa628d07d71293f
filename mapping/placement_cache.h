// A cache of solved placements on disk, keyed by every input they were built from
// (StrategyContext::cache_key), so that rerunning an experiment does not solve again. One JSON file per
// key: {"key": ..., "placement": ..., "checksum": FNV-1a of both}; a file whose stored key differs (a
// hash collision), whose checksum or dimensions do not match its key (edited or damaged: a warning) or
// that cannot be read is a miss. Writes are all or nothing (base::write_file), so parallel runs share it.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "nmpsim/mapping/placement.h"
#include "nmpsim/mapping/trace.h"

namespace nmpsim::mapping {

class PlacementCache {
 public:
  /// `dir` is created when the first placement is stored; an empty `dir` keeps placements in memory
  /// only (for this process). `warn` receives one-line warnings.
  explicit PlacementCache(std::string dir, std::function<void(const std::string&)> warn = {});
  std::optional<Placement> find(const nlohmann::json& key) const;
  /// Best effort: a cache that cannot be written only warns (once).
  void store(const nlohmann::json& key, const Placement& p);
  const std::string& dir() const { return dir_; }
  std::string path_for(const nlohmann::json& key) const;

 private:
  std::string dir_;
  std::map<std::string, Placement> memory_;  // by key.dump(): this process's placements
  std::function<void(const std::string&)> warn_;
  bool warned_ = false;
};

/// FNV-1a (64 bit) of a string, as 16 hex digits.
std::string fnv1a_hex(const std::string& text);
/// Identifies a routing trace by its contents (dimensions and every expert id).
std::string trace_fingerprint(const RoutingTrace& t);
/// Identifies the running program (size and modification time of its executable): a rebuilt binary
/// may place differently, so its placements are not reused.
std::string binary_identity();

}  // namespace nmpsim::mapping
