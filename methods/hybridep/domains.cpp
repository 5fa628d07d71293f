#include "nmpsim/methods/hybridep/domains.h"

#include <algorithm>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::methods::hybridep {

DomainLayout make_layout(const common::Hierarchy& h, const Levels& lv, const std::vector<int>& sed) {
  DomainLayout d;
  d.sed = sed;
  d.box = box_size(sed);
  const int N = h.nodes();
  d.serve.assign(static_cast<size_t>(N) * N, 0);
  d.box_of.assign(static_cast<size_t>(N), {});
  for (int rv = 0; rv < N; ++rv)
    for (int rh = 0; rh < N; ++rh) {
      const int v = h.node_at[static_cast<size_t>(rv)], home = h.node_at[static_cast<size_t>(rh)];
      const int n = h.node_at[static_cast<size_t>(serving_rank(lv, sed, rh, rv))];
      d.serve[static_cast<size_t>(v) * N + home] = n;
      if (n == home && v != home) d.box_of[static_cast<size_t>(home)].push_back(v);  // home holds v's experts
    }
  for (int v = 0; v < N; ++v) d.box_of[static_cast<size_t>(v)].insert(d.box_of[static_cast<size_t>(v)].begin(), v);
  return d;
}

double box_ring_bytes_per_s(const mapping::Topology& t, std::vector<int> box) {
  std::sort(box.begin(), box.end());
  double bw = 0;
  const size_t hops = box.size() < 2 ? 0 : box.size() == 2 ? 1 : box.size();
  for (size_t k = 0; k < hops; ++k) {
    const double g = mapping::path_gbytes_per_s(t, box[k], box[(k + 1) % box.size()]) * 1e9;
    bw = bw > 0 ? std::min(bw, g) : g;
  }
  return bw;
}

std::vector<std::vector<int>> all_seds(const Levels& lv) {
  std::vector<std::vector<int>> out{{}};
  for (int sf : lv.sf) {
    std::vector<std::vector<int>> next;
    for (const auto& prefix : out)
      for (int s : divisors(sf)) {
        next.push_back(prefix);
        next.back().push_back(s);
      }
    out = std::move(next);
  }
  return out;
}

WorkerLoads loads_of(const mapping::LayerPlan& p) {
  const int N = p.nodes;
  WorkerLoads w;
  w.a2a_bytes.assign(static_cast<size_t>(N), 0.0);
  w.expert_flops.assign(static_cast<size_t>(N), 0.0);
  w.expert_bytes.assign(static_cast<size_t>(N), 0.0);
  for (int a = 0; a < N; ++a) {
    for (int b = 0; b < N; ++b) w.a2a_bytes[static_cast<size_t>(a)] += p.dispatch[static_cast<size_t>(a) * N + b];
    for (const mapping::ExpertWork& x : p.expert_work[static_cast<size_t>(a)]) {
      w.expert_flops[static_cast<size_t>(a)] += x.flops;
      w.expert_bytes[static_cast<size_t>(a)] += x.bytes;
    }
  }
  return w;
}

std::string sed_text(const std::vector<int>& sed) {
  std::string s;
  for (int x : sed) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::vector<int> parse_sed(const std::string& text, const std::string& where) {
  std::vector<int> out;
  size_t i = 0;
  while (i <= text.size()) {
    const size_t j = std::min(text.find(',', i), text.size());
    const std::string tok = text.substr(i, j - i);
    if (tok.empty() || tok.size() > 6 || tok.find_first_not_of("0123456789") != std::string::npos)
      throw mapping::InputError(where + ": expected domain sizes like 2,4 (one positive integer per level), got '" +
                                text + "'");
    out.push_back(std::stoi(tok));
    i = j + 1;
  }
  return out;
}

void ServedDispatch::plan(const mapping::DispatchInputs& in, mapping::LayerPlan& p) const {
  const std::vector<int>& serve = *serve_;
  const int N = p.nodes, E = in.model.experts;
  std::vector<std::vector<int>> pieces(static_cast<size_t>(E));
  for (int e = 0; e < E; ++e)
    for (int v = 0; v < N; ++v)
      if (in.rows[static_cast<size_t>(e)][static_cast<size_t>(v)] > 0) pieces[static_cast<size_t>(e)].push_back(v);
  std::vector<double> tokens(static_cast<size_t>(N) * E, 0.0);
  std::vector<int> stamp(static_cast<size_t>(N) * E, -1);
  mapping::TokenTraffic traffic(*this, p, in.model.token_bytes());
  for (int i = 0; i < static_cast<int>(p.home.size()); ++i) {
    const int h = p.home[static_cast<size_t>(i)];
    const uint16_t* ex = in.experts_of(i);
    for (int k = 0; k < in.top_k(); ++k)
      for (int v : pieces[ex[k]]) {
        const int n = serve[static_cast<size_t>(v) * N + h];
        const size_t ne = static_cast<size_t>(n) * E + ex[k];
        p.routed_token_work[static_cast<size_t>(n)] += in.rows[ex[k]][static_cast<size_t>(v)];
        if (stamp[ne] != i) {
          stamp[ne] = i;
          tokens[ne] += 1;
        }
        traffic.visit(i, h, n);
      }
  }
  for (int n = 0; n < N; ++n)
    for (int e = 0; e < E; ++e) {
      const double t = tokens[static_cast<size_t>(n) * E + e];
      if (t == 0) continue;
      // n holds the pieces of e whose copies it serves for its own tokens' offsets: those in its box.
      double share = 0;
      for (int v : pieces[static_cast<size_t>(e)])
        if (serve[static_cast<size_t>(v) * N + n] == n)
          share += in.rows[static_cast<size_t>(e)][static_cast<size_t>(v)];
      p.expert_work[static_cast<size_t>(n)].push_back(mapping::ExpertWork{
          e, t, share, t * in.model.expert_flops_per_token() * share, in.model.expert_bytes() * share});
    }
  traffic.finish(static_cast<double>(in.model.hidden));
}

}  // namespace nmpsim::methods::hybridep
