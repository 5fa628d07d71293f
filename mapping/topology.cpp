#include "nmpsim/mapping/topology.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace nmpsim::mapping {

const char* link_level_key(LinkLevel l) {
  static const char* const kKeys[kNumLinkLevels] = {"on_die", "die_to_die", "wafer_to_wafer"};
  return kKeys[static_cast<int>(l)];
}

const char* link_level_name(LinkLevel l) {
  switch (l) {
    case LinkLevel::kOnDie:
      return "on-die";
    case LinkLevel::kDieToDie:
      return "die-to-die";
    case LinkLevel::kWaferToWafer:
      return "wafer-to-wafer";
  }
  return "?";
}

int Topology::die_of(int node) const {
  const int per_row = width / die_width;
  return (y(node) / die_height) * per_row + x(node) / die_width;
}

int Topology::wafer_of(int node) const {
  const int per_row = width / wafer_width;
  return (y(node) / wafer_height) * per_row + x(node) / wafer_width;
}

LinkLevel Topology::link_level(int a, int b) const {
  if (!same_wafer(a, b)) return LinkLevel::kWaferToWafer;
  if (!same_die(a, b)) return LinkLevel::kDieToDie;
  return LinkLevel::kOnDie;
}

int Topology::hops(int a, int b) const { return std::abs(x(a) - x(b)) + std::abs(y(a) - y(b)); }

void Topology::validate(const std::string& where) const {
  auto fail = [&](const std::string& msg) { throw std::invalid_argument(where + ": " + msg); };
  if (width < 1 || height < 1)
    fail("mesh must be at least 1x1 (got " + std::to_string(width) + "x" + std::to_string(height) + ")");
  if (width > 256 || height > 256) fail("mesh dimensions must be at most 256");
  if (die_width < 1 || die_height < 1 || wafer_width < 1 || wafer_height < 1)
    fail("die and wafer sizes must be at least 1x1");
  if (wafer_width % die_width || wafer_height % die_height)
    fail("a wafer (" + std::to_string(wafer_width) + "x" + std::to_string(wafer_height) +
         " nodes) must hold a whole number of dies (" + std::to_string(die_width) + "x" + std::to_string(die_height) +
         ")");
  if (width % wafer_width || height % wafer_height)
    fail("the mesh (" + std::to_string(width) + "x" + std::to_string(height) +
         ") must hold a whole number of wafers (" + std::to_string(wafer_width) + "x" + std::to_string(wafer_height) +
         ")");
  for (int l = 0; l < kNumLinkLevels; ++l) {
    const LinkParams& p = links[l];
    const std::string f = std::string("links.") + link_level_key(static_cast<LinkLevel>(l));
    if (!(std::isfinite(p.gbytes_per_s) && p.gbytes_per_s > 0)) fail(f + ".gbytes_per_s: must be positive");
    if (!(std::isfinite(p.latency_ns) && p.latency_ns >= 0)) fail(f + ".latency_ns: must be zero or positive");
    if (!(std::isfinite(p.pj_per_bit) && p.pj_per_bit >= 0)) fail(f + ".pj_per_bit: must be zero or positive");
  }
}

double path_gbytes_per_s(const Topology& t, int s, int d) {
  double bw = 0;
  walk_xy(t, s, d, [&](int a, int b, LinkDir) {
    const double g = t.link(a, b).gbytes_per_s;
    bw = bw > 0 ? std::min(bw, g) : g;
  });
  return bw;
}

}  // namespace nmpsim::mapping
