#include "mapping/layer_plan.h"

#include <algorithm>
#include <numeric>

#include "mapping/json_fields.h"

namespace nmpsim::mapping {

std::vector<int> ring_order(const Topology& t, int x0, int y0, int w, int h) {
  std::vector<int> order;
  auto add = [&](int x, int y) { order.push_back(t.id(x0 + x, y0 + y)); };
  if (w >= 2 && h >= 2 && (h % 2 == 0 || w % 2 == 0)) {
    const bool rows_even = h % 2 == 0;
    // Along the first row, snake back through columns 1.., return up column 0 (or the transpose).
    const int a = rows_even ? w : h, b = rows_even ? h : w;
    auto put = [&](int i, int j) { rows_even ? add(i, j) : add(j, i); };
    for (int i = 0; i < a; ++i) put(i, 0);
    for (int j = 1; j < b; ++j) {
      if (j % 2 == 1)
        for (int i = a - 1; i >= 1; --i) put(i, j);
      else
        for (int i = 1; i < a; ++i) put(i, j);
    }
    for (int j = b - 1; j >= 1; --j) put(0, j);
    return order;
  }
  for (int y = 0; y < h; ++y)
    for (int i = 0; i < w; ++i) add(y % 2 ? w - 1 - i : i, y);
  return order;
}

Groups make_groups(const Topology& t, int group_size) {
  const int n = t.nodes();
  if (group_size <= 0) group_size = n;
  if (group_size > n || n % group_size)
    throw InputError("attention TP group size " + std::to_string(group_size) + " must divide the " + std::to_string(n) +
                     " nodes");
  const int count = n / group_size;
  const std::vector<int> region = mesh_regions(t, count);
  // Region rectangles: find each region's corner and size.
  Groups g;
  g.ring.resize(static_cast<size_t>(count));
  g.group_of.assign(static_cast<size_t>(n), 0);
  g.ring_pos.assign(static_cast<size_t>(n), 0);
  for (int r = 0; r < count; ++r) {
    int x0 = t.width, y0 = t.height, x1 = -1, y1 = -1;
    for (int v = 0; v < n; ++v)
      if (region[v] == r) {
        x0 = std::min(x0, t.x(v));
        y0 = std::min(y0, t.y(v));
        x1 = std::max(x1, t.x(v));
        y1 = std::max(y1, t.y(v));
      }
    g.ring[r] = ring_order(t, x0, y0, x1 - x0 + 1, y1 - y0 + 1);
    for (size_t p = 0; p < g.ring[r].size(); ++p) {
      g.group_of[g.ring[r][p]] = r;
      g.ring_pos[g.ring[r][p]] = static_cast<int>(p);
    }
  }
  return g;
}

namespace {

/// Checks that `rings` partition the n nodes into rings of equal size and fills each node's ring and
/// position; InputError "<where>: <what>: ..." otherwise.
void index_rings(const std::vector<std::vector<int>>& rings, int n, const std::string& where, const char* what,
                 std::vector<int>& ring_of, std::vector<int>* pos) {
  ring_of.assign(static_cast<size_t>(n), -1);
  if (pos) pos->assign(static_cast<size_t>(n), -1);
  if (rings.empty() || rings[0].empty() || static_cast<int>(rings.size() * rings[0].size()) != n)
    throw InputError(where + ": " + what + ": the rings must be of equal size and cover all " + std::to_string(n) +
                     " nodes");
  for (size_t r = 0; r < rings.size(); ++r) {
    if (rings[r].size() != rings[0].size())
      throw InputError(where + ": " + what + ": every ring must have " + std::to_string(rings[0].size()) + " nodes");
    for (size_t q = 0; q < rings[r].size(); ++q) {
      const int v = rings[r][q];
      if (v < 0 || v >= n || ring_of[static_cast<size_t>(v)] >= 0)
        throw InputError(where + ": " + what + ": node " + std::to_string(v) + " is out of range or in two rings");
      ring_of[static_cast<size_t>(v)] = static_cast<int>(r);
      if (pos) (*pos)[static_cast<size_t>(v)] = static_cast<int>(q);
    }
  }
}

}  // namespace

Groups groups_with_domains(const std::vector<std::vector<int>>& tp_rings,
                           const std::vector<std::vector<int>>& token_rings, const std::vector<int>& domain_of,
                           const std::string& where) {
  const int n = static_cast<int>(domain_of.size());
  Groups g;
  g.ring = tp_rings;
  index_rings(tp_rings, n, where, "tp_rings", g.group_of, &g.ring_pos);
  g.token_ring = token_rings.empty() ? tp_rings : token_rings;
  index_rings(g.token_ring, n, where, "token_rings", g.token_ring_of, nullptr);
  const int domains = static_cast<int>(g.token_ring[0].size());
  g.domain_of = domain_of;
  g.domain_member.assign(g.token_ring.size(), std::vector<int>(static_cast<size_t>(domains), -1));
  for (int v = 0; v < n; ++v) {
    const int d = domain_of[static_cast<size_t>(v)];
    const std::string why = where + ": token_domain: every domain must hold exactly one member of every token ring " +
                            "(node " + std::to_string(v) + ", domain " + std::to_string(d) + ")";
    if (d < 0 || d >= domains) throw InputError(why);
    int& member = g.domain_member[static_cast<size_t>(g.token_ring_of[static_cast<size_t>(v)])][static_cast<size_t>(d)];
    if (member >= 0) throw InputError(why);
    member = v;
  }
  return g;
}

Groups groups_for(const Placement& p, const Topology& t, int attn_tp) {
  if (p.tp_rings.empty()) return make_groups(t, attn_tp);
  const int size = static_cast<int>(p.tp_rings[0].size()), want = attn_tp > 0 ? attn_tp : t.nodes();
  if (size != want || static_cast<int>(p.token_domain.size()) != t.nodes())
    throw InputError("placement '" + p.strategy + "' lays out attention TP groups of " + std::to_string(size) + " of " +
                     std::to_string(p.token_domain.size()) + " nodes; the run has groups of " + std::to_string(want) +
                     " of " + std::to_string(t.nodes()) + " (--attn-tp)");
  return groups_with_domains(p.tp_rings, p.token_rings, p.token_domain, "placement '" + p.strategy + "'");
}

double LayerPlan::dispatch_total() const { return std::accumulate(dispatch.begin(), dispatch.end(), 0.0); }
double LayerPlan::combine_total() const { return std::accumulate(combine.begin(), combine.end(), 0.0); }

std::vector<std::vector<std::vector<double>>> physical_shares(const Placement& p) {
  std::vector<std::vector<std::vector<double>>> out(static_cast<size_t>(p.layers()));
  for (int l = 0; l < p.layers(); ++l)
    for (int e = 0; e < p.experts; ++e) out[l].push_back(p.physical_row(l, e));
  return out;
}

namespace {

/// Replaces the flat dispatch and combine of `p` by the stages of a hierarchical all-to-all.
void plan_hierarchical(LayerPlan& p, const ModelSpec& m, const std::vector<std::vector<double>>& rows,
                       const RoutingTrace& trace, int trace_layer, size_t first_token, const HierDispatch& hier,
                       const Groups& groups) {
  if (groups.has_domains())
    throw InputError("hierarchical all-to-all: a placement with token domains (a MoEntwine layout) cannot use it");
  const int N = p.nodes;
  std::vector<std::vector<std::pair<int, int>>> dest(p.home.size());
  std::vector<int> experts_on(static_cast<size_t>(N), 0);
  for (size_t i = 0; i < p.home.size(); ++i) {
    const uint16_t* ex = trace.experts_of(trace_layer, (first_token + i) % trace.tokens());
    for (int k = 0; k < trace.top_k(); ++k)
      for (int v = 0; v < N; ++v)
        if (rows[ex[k]][v] > 0 && experts_on[static_cast<size_t>(v)]++ == 0) dest[i].push_back({v, 0});
    for (auto& [v, count] : dest[i]) {
      count = experts_on[static_cast<size_t>(v)];
      experts_on[static_cast<size_t>(v)] = 0;
    }
  }
  p.stages = hierarchical_stages(*hier.hierarchy, hier.dimensions, hier.dedup, p.home, dest, m.token_bytes(),
                                 static_cast<double>(m.hidden));
  std::fill(p.dispatch.begin(), p.dispatch.end(), 0.0);
  std::fill(p.combine.begin(), p.combine.end(), 0.0);
  std::fill(p.reduce_flops.begin(), p.reduce_flops.end(), 0.0);
}

/// Experts in fixed copies: the piece of expert e on node v that token i (home h) uses is computed at
/// serve[v * N + h]; a node streams the weights of every piece it serves for at least one token.
template <class Visit>
void plan_served(LayerPlan& p, const ModelSpec& m, const std::vector<std::vector<double>>& rows,
                 const RoutingTrace& trace, int trace_layer, size_t first_token, const std::vector<int>& serve,
                 Visit&& visit) {
  const int N = p.nodes, E = m.experts;
  std::vector<std::vector<int>> pieces(static_cast<size_t>(E));
  for (int e = 0; e < E; ++e)
    for (int v = 0; v < N; ++v)
      if (rows[e][v] > 0) pieces[static_cast<size_t>(e)].push_back(v);
  std::vector<double> tokens(static_cast<size_t>(N) * E, 0.0);
  std::vector<int> stamp(static_cast<size_t>(N) * E, -1);
  for (int i = 0; i < static_cast<int>(p.home.size()); ++i) {
    const int h = p.home[static_cast<size_t>(i)];
    const uint16_t* ex = trace.experts_of(trace_layer, (first_token + static_cast<size_t>(i)) % trace.tokens());
    for (int k = 0; k < trace.top_k(); ++k)
      for (int v : pieces[ex[k]]) {
        const int n = serve[static_cast<size_t>(v) * N + h];
        const size_t ne = static_cast<size_t>(n) * E + ex[k];
        p.routed_token_work[static_cast<size_t>(n)] += rows[ex[k]][v];
        if (stamp[ne] != i) {
          stamp[ne] = i;
          tokens[ne] += 1;
        }
        visit(i, h, n);
      }
  }
  for (int n = 0; n < N; ++n)
    for (int e = 0; e < E; ++e) {
      const double t = tokens[static_cast<size_t>(n) * E + e];
      if (t == 0) continue;
      // n holds the pieces of e whose copies it serves for its own tokens' offsets: those in its box.
      double share = 0;
      for (int v : pieces[static_cast<size_t>(e)])
        if (serve[static_cast<size_t>(v) * N + n] == n) share += rows[e][v];
      p.expert_work[static_cast<size_t>(n)].push_back(
          ExpertWork{e, t, share, t * m.expert_flops_per_token() * share, m.expert_bytes() * share});
    }
}

}  // namespace

LayerPlan plan_layer(const ModelSpec& m, const std::vector<std::vector<std::vector<double>>>& physical, int layer,
                     const RoutingTrace& trace, size_t first_token, const Groups& groups, const RunShape& shape,
                     const DynamicDispatch* dynamic, const HierDispatch* hier,
                     const std::vector<std::vector<double>>* layer_rows, const std::vector<int>* serve) {
  const int N = static_cast<int>(groups.group_of.size());
  const int B = shape.batch;
  const int G = groups.size();
  LayerPlan p;
  p.nodes = N;
  p.dense = layer < m.dense_layers;
  p.home.resize(static_cast<size_t>(B));
  p.home_bytes.assign(static_cast<size_t>(N), 0.0);
  p.attn_flops.assign(static_cast<size_t>(N), 0.0);
  p.attn_bytes.assign(static_cast<size_t>(N), 0.0);
  p.gate_flops.assign(static_cast<size_t>(N), 0.0);
  p.gate_bytes.assign(static_cast<size_t>(N), 0.0);
  p.shared_flops.assign(static_cast<size_t>(N), 0.0);
  p.shared_bytes.assign(static_cast<size_t>(N), 0.0);
  p.dispatch.assign(static_cast<size_t>(N) * N, 0.0);
  p.combine.assign(static_cast<size_t>(N) * N, 0.0);
  p.expert_work.assign(static_cast<size_t>(N), {});
  p.partials.assign(static_cast<size_t>(N), 0.0);
  p.reduce_flops.assign(static_cast<size_t>(N), 0.0);
  p.routed_token_work.assign(static_cast<size_t>(N), 0.0);

  // Homes: token i belongs to group i mod G, and within it to ring position (i / G) mod g.
  std::vector<int> group_tokens(static_cast<size_t>(G), 0);
  for (int i = 0; i < B; ++i) {
    const auto& ring = groups.ring[i % G];
    p.home[i] = ring[(i / G) % ring.size()];
    p.home_bytes[p.home[i]] += m.token_bytes();
    ++group_tokens[i % G];
  }
  // Attention: tensor parallel over the group, every group node does 1/g of every token.
  const double wb = m.weight_bytes;
  for (int v = 0; v < N; ++v) {
    const int grp = groups.group_of[v];
    const double g = static_cast<double>(groups.ring[grp].size());
    const double t = group_tokens[grp];
    p.attn_flops[v] = t * m.attention_flops_per_token(shape.context) / g;
    p.attn_bytes[v] = m.attention_params() * wb / g + t * shape.context * m.kv_bytes_per_token() / g;
    if (p.dense) {
      const double ffn = double(m.ffn_matrices) * m.hidden * m.dense_intermediate;
      p.attn_flops[v] += t * 2.0 * ffn / g;
      p.attn_bytes[v] += ffn * wb / g;
    } else if (m.shared_experts > 0) {
      p.shared_flops[v] = t * 2.0 * m.shared_params() / g;
      p.shared_bytes[v] = m.shared_params() * wb / g;
    }
  }
  if (p.dense) return p;

  const int moe_layer = layer - m.dense_layers;
  const auto& rows = layer_rows ? *layer_rows : physical[moe_layer];
  const int E = m.experts;
  const int trace_layer = moe_layer % trace.layers();
  // Gate at homes: hidden x E weights, 2 FLOPs per weight per token.
  for (int i = 0; i < B; ++i) p.gate_flops[p.home[i]] += 2.0 * m.gate_params();
  for (int v = 0; v < N; ++v)
    if (p.gate_flops[v] > 0) p.gate_bytes[v] = m.gate_params() * wb;

  // Routing: each token's routed experts (shared experts ran in the group, above).
  auto is_dynamic = [&](int e) { return dynamic && !dynamic->full_copies[e].empty(); };
  std::vector<double> tokens_of(static_cast<size_t>(E), 0.0);
  std::vector<int> stamp(static_cast<size_t>(N), -1);
  auto visit = [&](int i, int h, int v) {  // token i (home h) needs node v
    if (stamp[v] == i) return;             // already travels to v (for another expert)
    stamp[v] = i;
    // With token domains the token leaves from its group's member in v's domain (it holds the
    // group's tokens after the token all-gather), and the partial result returns there.
    if (groups.has_domains())
      h = groups.domain_member[static_cast<size_t>(groups.token_ring_of[static_cast<size_t>(h)])]
                              [static_cast<size_t>(groups.domain_of[static_cast<size_t>(v)])];
    p.partials[h] += 1;
    if (v != h) {
      p.dispatch[static_cast<size_t>(h) * N + v] += m.token_bytes();
      p.combine[static_cast<size_t>(v) * N + h] += m.token_bytes();
    }
  };
  for (int i = 0; i < B; ++i) {
    const uint16_t* ex = trace.experts_of(trace_layer, (first_token + i) % trace.tokens());
    for (int k = 0; k < trace.top_k(); ++k) tokens_of[ex[k]] += 1;
  }
  if (serve) {
    if (dynamic || (hier && hier->dimensions > 1))
      throw InputError("expert copies (HybridEP domains) cannot combine with replicas or the hierarchical all-to-all");
    plan_served(p, m, rows, trace, trace_layer, first_token, *serve, visit);
    for (int v = 0; v < N; ++v) p.reduce_flops[v] = p.partials[v] * m.hidden;
    return p;
  }
  for (int e = 0; e < E; ++e) {
    if (tokens_of[e] == 0 || is_dynamic(e)) continue;  // an expert no token chose streams no weights
    for (int v = 0; v < N; ++v) {
      const double s = rows[e][v];
      if (s <= 0) continue;
      p.expert_work[v].push_back(
          ExpertWork{e, tokens_of[e], s, tokens_of[e] * m.expert_flops_per_token() * s, m.expert_bytes() * s});
    }
  }
  // Least-loaded dispatch for experts with full copies: start from each node's static expert time.
  std::vector<double> load(static_cast<size_t>(N), 0.0);
  std::vector<std::vector<double>> dyn_tokens;
  if (dynamic) {
    auto roof = [&](double flops, double bytes) {
      return std::max(flops / dynamic->peak_flops, bytes / dynamic->memory_bytes_per_s);
    };
    for (int v = 0; v < N; ++v)
      for (const ExpertWork& w : p.expert_work[v]) load[v] += roof(w.flops, w.bytes);
    dyn_tokens.assign(static_cast<size_t>(E), std::vector<double>(static_cast<size_t>(N), 0.0));
    for (int i = 0; i < B; ++i) {
      const uint16_t* ex = trace.experts_of(trace_layer, (first_token + i) % trace.tokens());
      for (int k = 0; k < trace.top_k(); ++k) {
        const int e = ex[k];
        if (!is_dynamic(e)) continue;
        int best = -1;
        double best_load = 0;
        for (int v : dynamic->full_copies[e]) {
          const double n = dyn_tokens[e][v];
          const double before = n > 0 ? roof(n * m.expert_flops_per_token(), m.expert_bytes()) : 0.0;
          const double after = roof((n + 1) * m.expert_flops_per_token(), m.expert_bytes());
          const double l = load[v] + after - before;
          if (best < 0 || l < best_load) {
            best = v;
            best_load = l;
          }
        }
        load[best] = best_load;
        dyn_tokens[e][best] += 1;
      }
    }
    for (int e = 0; e < E; ++e)
      for (int v = 0; v < N; ++v)
        if (!dyn_tokens.empty() && dyn_tokens[e][v] > 0)
          p.expert_work[v].push_back(
              ExpertWork{e, dyn_tokens[e][v], 1.0, dyn_tokens[e][v] * m.expert_flops_per_token(), m.expert_bytes()});
  }
  // Traffic: each token travels once to every node that works on it; the home reduces the partials.
  std::vector<std::vector<double>> dyn_left = dyn_tokens;
  for (int i = 0; i < B; ++i) {
    const int h = p.home[i];
    const uint16_t* ex = trace.experts_of(trace_layer, (first_token + i) % trace.tokens());
    for (int k = 0; k < trace.top_k(); ++k) {
      const int e = ex[k];
      if (is_dynamic(e)) {
        // Replay the least-loaded assignment: the first node with tokens left for this expert.
        for (int v = 0; v < N; ++v)
          if (dyn_left[e][v] > 0) {
            dyn_left[e][v] -= 1;
            p.routed_token_work[v] += 1;
            visit(i, h, v);
            break;
          }
        continue;
      }
      for (int v = 0; v < N; ++v) {
        if (rows[e][v] <= 0) continue;
        p.routed_token_work[v] += rows[e][v];
        visit(i, h, v);
      }
    }
  }
  for (int v = 0; v < N; ++v) p.reduce_flops[v] = p.partials[v] * m.hidden;
  if (hier && hier->dimensions > 1) {
    if (dynamic)  // replicas route tokens by load; the stages follow the static shares
      throw InputError("hierarchical all-to-all: cannot combine with replicas (a balancer or pre-broadcast policy)");
    plan_hierarchical(p, m, rows, trace, trace_layer, first_token, *hier, groups);
  }
  return p;
}

}  // namespace nmpsim::mapping
