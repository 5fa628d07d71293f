#include "nmpsim/methods/hybridep/partition.h"

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::methods::hybridep {

int Levels::nodes() const {
  int n = 1;
  for (int s : sf) n *= s;
  return n;
}

Levels levels_of(const common::Hierarchy& h) {
  Levels lv;
  int groups = 1;
  for (const common::HierarchyLevel& l : h.levels) {
    lv.sf.push_back(l.groups / groups);
    groups = l.groups;
  }
  lv.sf.push_back(h.nodes() / groups);
  return lv;
}

std::vector<int> locate(const Levels& lv, int m) {
  std::vector<int> x(lv.sf.size());
  for (int i = lv.count() - 1; i >= 0; --i) {
    x[static_cast<size_t>(i)] = m % lv.sf[static_cast<size_t>(i)];
    m /= lv.sf[static_cast<size_t>(i)];
  }
  return x;
}

int index_of(const Levels& lv, const std::vector<int>& x) {
  int m = 0;
  for (int i = 0; i < lv.count(); ++i) m = m * lv.sf[static_cast<size_t>(i)] + x[static_cast<size_t>(i)];
  return m;
}

Comm comm_type(const Levels& lv, const std::vector<int>& sed, int m, int n, int l) {
  const std::vector<int> a = locate(lv, m), b = locate(lv, n);
  for (int i = 0; i < lv.count(); ++i)
    if (i != l && a[static_cast<size_t>(i)] != b[static_cast<size_t>(i)]) return Comm::kNone;
  const int s = sed[static_cast<size_t>(l)], wa = a[static_cast<size_t>(l)], wb = b[static_cast<size_t>(l)];
  if (wa == wb) return Comm::kNone;
  if (wa / s == wb / s) return Comm::kAllGather;
  if (wa % s == wb % s) return Comm::kAllToAll;
  return Comm::kNone;
}

std::vector<LevelPairs> pair_counts(const Levels& lv, const std::vector<int>& sed) {
  std::vector<LevelPairs> out(lv.sf.size());
  const int G = lv.nodes();
  for (int l = 0; l < lv.count(); ++l) {
    out[static_cast<size_t>(l)].sed = sed[static_cast<size_t>(l)];
    for (int m = 0; m < G; ++m)
      for (int n = 0; n < G; ++n) {
        const Comm c = comm_type(lv, sed, m, n, l);
        if (c == Comm::kAllGather) ++out[static_cast<size_t>(l)].ag_pairs;
        if (c == Comm::kAllToAll) ++out[static_cast<size_t>(l)].a2a_pairs;
      }
  }
  return out;
}

void check_sed(const Levels& lv, const std::vector<int>& sed, const std::string& where) {
  if (sed.size() != lv.sf.size())
    throw mapping::InputError(where + ": " + std::to_string(sed.size()) + " domain sizes for " +
                              std::to_string(lv.sf.size()) + " levels (scaling factors " +
                              [&] {
                                std::string s;
                                for (int f : lv.sf) s += (s.empty() ? "" : ",") + std::to_string(f);
                                return s;
                              }() +
                              ")");
  for (size_t l = 0; l < sed.size(); ++l)
    if (sed[l] < 1 || lv.sf[l] % sed[l] != 0)
      throw mapping::InputError(where + ": domain size " + std::to_string(sed[l]) + " at level " + std::to_string(l) +
                                " does not divide its " + std::to_string(lv.sf[l]) + " workers");
}

int box_size(const std::vector<int>& sed) {
  int b = 1;
  for (int s : sed) b *= s;
  return b;
}

int serving_rank(const Levels& lv, const std::vector<int>& sed, int h, int v) {
  const std::vector<int> xh = locate(lv, h);
  std::vector<int> x = locate(lv, v);
  for (size_t l = 0; l < x.size(); ++l) x[l] = sed[l] * (x[l] / sed[l]) + xh[l] % sed[l];
  return index_of(lv, x);
}

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int k = 1; k <= n; ++k)
    if (n % k == 0) d.push_back(k);
  return d;
}

}  // namespace nmpsim::methods::hybridep
