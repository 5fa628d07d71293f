#include "nmpsim/noc/traffic.h"

#include <cmath>

namespace nmpsim::noc {

TrafficPattern parse_traffic_pattern(const std::string& name) {
  if (name == "uniform") return TrafficPattern::kUniform;
  if (name == "transpose") return TrafficPattern::kTranspose;
  if (name == "bitcomp") return TrafficPattern::kBitComplement;
  if (name == "hotspot") return TrafficPattern::kHotspot;
  throw ConfigError("traffic: unknown pattern '" + name + "' (expected uniform, transpose, bitcomp or hotspot)");
}

const char* traffic_pattern_name(TrafficPattern p) {
  switch (p) {
    case TrafficPattern::kUniform:
      return "uniform";
    case TrafficPattern::kTranspose:
      return "transpose";
    case TrafficPattern::kBitComplement:
      return "bitcomp";
    case TrafficPattern::kHotspot:
      return "hotspot";
  }
  return "?";
}

void TrafficConfig::validate(const MeshGeometry& geo) const {
  if (!(std::isfinite(injection_rate) && injection_rate >= 0.0 && injection_rate <= 1.0))
    throw ConfigError("traffic: injection rate must be in [0, 1] flits per node per cycle");
  if (packet_flits < 1 || packet_flits > 65535) throw ConfigError("traffic: packet size must be 1..65535 flits");
  if (pattern == TrafficPattern::kTranspose && geo.width != geo.height)
    throw ConfigError("traffic: transpose needs a square mesh (got " + std::to_string(geo.width) + "x" +
                      std::to_string(geo.height) + ")");
  if (hotspot_node < -1 || hotspot_node >= geo.width * geo.height)
    throw ConfigError("traffic: hotspot node " + std::to_string(hotspot_node) + " is outside the mesh");
  if (!(hotspot_fraction >= 0.0 && hotspot_fraction <= 1.0))
    throw ConfigError("traffic: hotspot fraction must be in [0, 1]");
}

SyntheticTraffic::SyntheticTraffic(const MeshGeometry& geo, const TrafficConfig& cfg)
    : geo_(geo), cfg_(cfg), packet_prob_(cfg.injection_rate / cfg.packet_flits) {
  cfg_.validate(geo_);
  if (cfg_.hotspot_node < 0) cfg_.hotspot_node = geo_.id(geo_.width / 2, geo_.height / 2);
  const int n = geo_.width * geo_.height;
  rngs_.reserve(static_cast<size_t>(n));
  uint64_t s = cfg_.seed;
  for (int node = 0; node < n; ++node) rngs_.emplace_back(base::Rng::splitmix64(s));
  if (packet_prob_ <= 0.0 || n < 2) return;
  for (int node = 0; node < n; ++node) {
    heap_.push(Next{rngs_[node].geometric(packet_prob_) - 1, node});
  }
}

void SyntheticTraffic::schedule(int node, uint64_t after) {
  heap_.push(Next{after + rngs_[node].geometric(packet_prob_), node});
}

int SyntheticTraffic::destination(int src) {
  const int n = geo_.width * geo_.height;
  base::Rng& rng = rngs_[src];
  auto uniform_other = [&] {
    const int r = static_cast<int>(rng.below(static_cast<uint64_t>(n - 1)));
    return r >= src ? r + 1 : r;
  };
  switch (cfg_.pattern) {
    case TrafficPattern::kUniform:
      return uniform_other();
    case TrafficPattern::kTranspose:
      return geo_.id(geo_.y(src), geo_.x(src));
    case TrafficPattern::kBitComplement:
      return geo_.id(geo_.width - 1 - geo_.x(src), geo_.height - 1 - geo_.y(src));
    case TrafficPattern::kHotspot:
      if (rng.uniform() < cfg_.hotspot_fraction) return cfg_.hotspot_node;
      return uniform_other();
  }
  return src;
}

}  // namespace nmpsim::noc
