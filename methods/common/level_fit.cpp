#include "nmpsim/methods/common/level_fit.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "nmpsim/flow/flow_executor.h"

namespace nmpsim::methods::common {

using namespace nmpsim::mapping;  // the base layer this method builds on

namespace {

using Sets = std::vector<std::vector<int>>;

/// The node sets of one kind of all-to-all, all exchanging at once.
Sets inter_sets(const Hierarchy& h, int level) {
  const int U = h.levels[static_cast<size_t>(level - 1)].groups;
  const int prev = level == 1 ? 1 : h.levels[static_cast<size_t>(level - 2)].groups;
  const int fan = U / prev;  // level-i groups inside one level-(i-1) group
  Sets sets;
  for (int g = 0; g < prev; ++g)
    for (int pos = 0; pos < h.group_size(level); ++pos) {
      std::vector<int> s;
      for (int sub = 0; sub < fan; ++sub) s.push_back(h.member(level, g * fan + sub, pos));
      sets.push_back(std::move(s));
    }
  return sets;
}

Sets intra_sets(const Hierarchy& h, int level) {
  Sets sets;
  const int groups = level == 0 ? 1 : h.levels[static_cast<size_t>(level - 1)].groups;
  for (int g = 0; g < groups; ++g) {
    std::vector<int> s;
    for (int pos = 0; pos < h.group_size(level); ++pos) s.push_back(h.member(level, g, pos));
    sets.push_back(std::move(s));
  }
  return sets;
}

double exchange_seconds(const AnalyticalHardware& hw, const Sets& sets, double bytes) {
  auto s = std::make_shared<LayerSchedule>();
  const int ph = s->phase("alltoall", PhaseFamily::kMoeComm);
  for (const auto& set : sets)
    for (size_t a = 0; a < set.size(); ++a)
      for (size_t k = 1; k < set.size(); ++k)  // shifted order, as the layer's exchanges
        s->transfer(ph, PhysicalNode(set[a]), PhysicalNode(set[(a + k) % set.size()]), bytes);
  if (s->size() == 0) return 0.0;
  flow::FlowExecutor ex(hw);
  ex.execute(s);
  return ex.now_s();
}

/// `sets_per_n`: how many of the sets one n of the paper's formula covers (the sets inside one group of
/// the level above for an inter level: Eq. 4 counts every token bound for a group, whichever position
/// carries it; 1 for the flat and intra kinds, Eq. 2 and 5).
KindFit fit_kind(const AnalyticalHardware& hw, const std::string& kind, const Sets& sets, int sets_per_n,
                 const std::vector<double>& sizes) {
  KindFit k;
  k.kind = kind;
  k.participants = sets.empty() ? 0 : static_cast<int>(sets[0].size());
  for (double m : sizes)
    k.points.push_back(
        FitPoint{double(sets_per_n) * k.participants * (k.participants - 1) * m, exchange_seconds(hw, sets, m)});
  k.cost = fit_line(k.points, &k.r2);
  return k;
}

}  // namespace

LinkCost fit_line(const std::vector<FitPoint>& points, double* r2) {
  // Weighted least squares on relative error (weights 1 / t^2), so that the small sizes, where the
  // start-up alpha shows, count as much as the large ones.
  double sw = 0, mx = 0, my = 0;
  for (const FitPoint& p : points) {
    const double w = p.seconds > 0 ? 1.0 / (p.seconds * p.seconds) : 1.0;
    sw += w;
    mx += w * p.bytes;
    my += w * p.seconds;
  }
  mx /= sw;
  my /= sw;
  double sxx = 0, sxy = 0;
  for (const FitPoint& p : points) {
    const double w = p.seconds > 0 ? 1.0 / (p.seconds * p.seconds) : 1.0;
    sxx += w * (p.bytes - mx) * (p.bytes - mx);
    sxy += w * (p.bytes - mx) * (p.seconds - my);
  }
  LinkCost c;
  c.beta_s_per_byte = sxx > 0 ? sxy / sxx : 0.0;
  c.alpha_s = std::max(0.0, my - c.beta_s_per_byte * mx);
  if (r2) {  // of the times themselves
    double mean = 0, ss = 0, st = 0;
    for (const FitPoint& p : points) mean += p.seconds / static_cast<double>(points.size());
    for (const FitPoint& p : points) {
      ss += (p.seconds - c.seconds(p.bytes)) * (p.seconds - c.seconds(p.bytes));
      st += (p.seconds - mean) * (p.seconds - mean);
    }
    *r2 = st > 0 ? 1.0 - ss / st : 1.0;
  }
  return c;
}

LevelFit fit_levels(const AnalyticalHardware& hw, const Hierarchy& h, const std::vector<double>& sizes) {
  std::vector<double> m = sizes;
  if (m.empty())
    for (double b = 512; b <= 512.0 * 1024 + 1; b *= 4) m.push_back(b);
  LevelFit f;
  f.kinds.push_back(fit_kind(hw, "flat", intra_sets(h, 0), 1, m));
  f.costs.flat = f.kinds.back().cost;
  for (int i = 1; i < h.dimensions(); ++i) {
    const std::string name = h.levels[static_cast<size_t>(i - 1)].name;
    f.kinds.push_back(fit_kind(hw, "inter-" + name, inter_sets(h, i), h.group_size(i), m));
    f.costs.inter.push_back(f.kinds.back().cost);
    f.kinds.push_back(fit_kind(hw, "intra-" + name, intra_sets(h, i), 1, m));
    f.costs.intra.push_back(f.kinds.back().cost);
  }
  return f;
}

HierarchyCosts fitted_costs(const AnalyticalHardware& hw, const Hierarchy& h) {
  static std::mutex mutex;
  static std::map<std::string, HierarchyCosts> fitted;
  std::string key = analytical_to_json(hw).dump();
  for (int r : h.node_at) key += "," + std::to_string(r);
  for (const auto& l : h.levels) key += ";" + l.name + ":" + std::to_string(l.groups);
  const std::lock_guard<std::mutex> lock(mutex);
  const auto it = fitted.find(key);
  if (it != fitted.end()) return it->second;
  return fitted[key] = fit_levels(hw, h).costs;
}

}  // namespace nmpsim::methods::common
