#include "nmpsim/mapping/topology.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace nmpsim::mapping {

std::vector<Level> classic_levels() { return {Level{"die", 1, 1}, Level{"wafer", 1, 1}, Level{"system", 1, 1}}; }

int Topology::group_of(int node, int level) const {
  const int w = level_width(level), h = level_height(level);
  return (y(node) / h) * (width / w) + x(node) / w;
}

int Topology::level_of_link(int a, int b) const {
  const int top = num_levels() - 1;
  for (int l = 0; l < top; ++l)
    if (group_of(a, l) == group_of(b, l)) return l;
  return top;
}

std::string Topology::link_name(int level) const {
  return level == 0
             ? "on-" + levels[0].name
             : levels[static_cast<size_t>(level - 1)].name + "-to-" + levels[static_cast<size_t>(level - 1)].name;
}

std::string Topology::link_key(int level) const {
  std::string k = link_name(level);
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}

std::string Topology::link_field(int level) const {
  return classic ? "links." + link_key(level) : "levels." + std::to_string(level) + ".link";
}

int Topology::hops(int a, int b) const { return std::abs(x(a) - x(b)) + std::abs(y(a) - y(b)); }

namespace {

std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

/// Names become output keys and file columns: [a-z0-9-], 1..32 characters, unique.
std::string name_violation(const std::vector<Level>& levels, size_t i) {
  const std::string& n = levels[i].name;
  if (n.empty() || n.size() > 32) return "must have 1 to 32 characters";
  for (char c : n)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      return "'" + n + "' may hold only a-z, 0-9 and '-'";
  for (size_t j = 0; j < i; ++j)
    if (levels[j].name == n) return "'" + n + "' is used by level " + std::to_string(j) + " too";
  return "";
}

}  // namespace

void Topology::validate(const std::string& where) const {
  auto fail = [&](const std::string& msg) { throw std::invalid_argument(where + ": " + msg); };
  if (width < 1 || height < 1) fail("mesh must be at least 1x1 (got " + size_text(width, height) + ")");
  if (width > 256 || height > 256) fail("mesh dimensions must be at most 256");
  const int L = num_levels();
  if (L < 2 || L > kMaxLevels)
    fail("levels: " + std::to_string(L) + " levels; give 2 to " + std::to_string(kMaxLevels) +
         " (the finest first, the whole system last)");
  if (classic && L != kNumLinkLevels)
    fail("levels: the classic form has 3 levels (die, wafer, system), not " + std::to_string(L));
  for (int l = 0; l < L; ++l) {
    const std::string at = classic ? "" : "levels." + std::to_string(l) + ": ";
    if (!classic)
      if (const std::string why = name_violation(levels, static_cast<size_t>(l)); !why.empty())
        fail("levels." + std::to_string(l) + ".name: " + why);
    if (level_width(l) < 1 || level_height(l) < 1)
      fail(classic ? "die and wafer sizes must be at least 1x1" : at + "width and height must be at least 1");
  }
  for (int l = 0; l + 1 < L; ++l) {
    const int w = level_width(l), h = level_height(l), pw = level_width(l + 1), ph = level_height(l + 1);
    if (pw % w == 0 && ph % h == 0) continue;
    const std::string at = classic ? "" : "levels." + std::to_string(l) + ": ";
    const std::string parent =
        l + 2 == L ? "the mesh (" + size_text(pw, ph) + ")"
                   : "a " + levels[static_cast<size_t>(l + 1)].name + " (" + size_text(pw, ph) + " nodes)";
    const std::string& child = levels[static_cast<size_t>(l)].name;
    fail(at + parent + " must hold a whole number of " + (classic ? child + "s" : child + " groups") + " (" +
         size_text(w, h) + ")");
  }
  for (int l = 0; l < L; ++l) {
    const LinkParams& p = links[static_cast<size_t>(l)];
    const std::string f = link_field(l);
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
