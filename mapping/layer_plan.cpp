#include "nmpsim/mapping/layer_plan.h"

#include <algorithm>
#include <numeric>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/dispatch_planner.h"

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

Groups groups_with_rings(const std::vector<std::vector<int>>& rings, int nodes, const std::string& where) {
  Groups g;
  g.ring = rings;
  index_rings(rings, nodes, where, "tp_rings", g.group_of, &g.ring_pos);
  return g;
}

Groups groups_for(const Placement& p, const Topology& t, int attn_tp) {
  if (p.tp_rings.empty()) return make_groups(t, attn_tp);
  const int size = static_cast<int>(p.tp_rings[0].size()), want = attn_tp > 0 ? attn_tp : t.nodes();
  if (size != want || p.nodes != t.nodes())
    throw InputError("placement '" + p.strategy + "' lays out attention TP groups of " + std::to_string(size) + " of " +
                     std::to_string(p.nodes) + " nodes; the run has groups of " + std::to_string(want) + " of " +
                     std::to_string(t.nodes()) + " (--attn-tp)");
  return groups_with_rings(p.tp_rings, p.nodes, "placement '" + p.strategy + "'");
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

/// A plan of `n` nodes and `tokens` tokens with every per-node quantity zero.
LayerPlan empty_plan(int n, int tokens, bool dense) {
  LayerPlan p;
  p.nodes = n;
  p.dense = dense;
  const auto N = static_cast<size_t>(n);
  p.home.resize(static_cast<size_t>(tokens));
  for (auto* v : {&p.home_bytes, &p.attn_flops, &p.attn_bytes, &p.gate_flops, &p.gate_bytes, &p.shared_flops,
                  &p.shared_bytes, &p.partials, &p.reduce_flops, &p.routed_token_work})
    v->assign(N, 0.0);
  p.dispatch.assign(N * N, 0.0);
  p.combine.assign(N * N, 0.0);
  p.expert_work.assign(N, {});
  return p;
}

/// What each attention group computes and streams for the step's tokens, before the split over its
/// g nodes: tokens, prompt tokens, attention FLOPs and KV-cache bytes (read and, for prompts, written).
struct GroupWork {
  std::vector<double> tokens, prompt_tokens, attn_flops, kv_bytes;
  explicit GroupWork(int groups)
      : tokens(static_cast<size_t>(groups), 0.0), prompt_tokens(tokens), attn_flops(tokens), kv_bytes(tokens) {}
};

/// Homes of the step's tokens (request r -> group r mod G, its token j -> ring position
/// ((r / G) tokens + j) mod g), their bytes, and each group's attention work.
GroupWork place_tokens(const ModelSpec& m, const Groups& groups, const StepTokens& step, LayerPlan& p) {
  const int G = groups.size();
  GroupWork w(G);
  const double kvb = m.kv_bytes_per_token();
  int token = 0, request = step.first_request;
  for (const Segment& seg : step.segments) {
    std::vector<double> requests(static_cast<size_t>(G), 0.0);
    for (int r = 0; r < seg.requests; ++r, ++request) {
      const int grp = request % G;
      const auto& ring = groups.ring[static_cast<size_t>(grp)];
      const long long base = static_cast<long long>(request / G) * seg.tokens;
      for (int j = 0; j < seg.tokens; ++j, ++token) {
        p.home[static_cast<size_t>(token)] =
            ring[static_cast<size_t>((base + j) % static_cast<long long>(ring.size()))];
        p.home_bytes[static_cast<size_t>(p.home[static_cast<size_t>(token)])] += m.token_bytes();
      }
      requests[static_cast<size_t>(grp)] += 1;
    }
    const double flops = m.attention_flops(seg), read = seg.kv_read_tokens(step.attention_tile_tokens);
    for (int grp = 0; grp < G; ++grp) {
      const double r = requests[static_cast<size_t>(grp)];
      if (r == 0) continue;
      w.tokens[static_cast<size_t>(grp)] += r * seg.tokens;
      w.attn_flops[static_cast<size_t>(grp)] += r * flops;
      w.kv_bytes[static_cast<size_t>(grp)] += r * read * kvb;
      if (!seg.prompt) continue;
      w.prompt_tokens[static_cast<size_t>(grp)] += r * seg.tokens;
      w.kv_bytes[static_cast<size_t>(grp)] += r * seg.tokens * kvb;  // the prompt's own K and V, written
    }
  }
  return w;
}

/// Prompt tokens' activations go through DRAM (docs/MODEL.md "Steps: decode, prefill, mixed"): every
/// expert piece reads its tokens' inputs and writes their partial outputs, in proportion to the
/// expert's tokens that are prompt tokens.
void add_expert_activations(const ModelSpec& m, const RoutingTrace& trace, int trace_layer, size_t first_token,
                            const StepTokens& step, LayerPlan& p) {
  std::vector<double> all(static_cast<size_t>(m.experts), 0.0), prompt(all);
  int token = 0;
  for (const Segment& seg : step.segments)
    for (int i = 0; i < seg.requests * seg.tokens; ++i, ++token) {
      const uint16_t* ex = trace.experts_of(trace_layer, (first_token + static_cast<size_t>(token)) % trace.tokens());
      for (int k = 0; k < trace.top_k(); ++k) {
        all[ex[k]] += 1;
        if (seg.prompt) prompt[ex[k]] += 1;
      }
    }
  for (auto& node : p.expert_work)
    for (ExpertWork& w : node)
      if (all[static_cast<size_t>(w.expert)] > 0)
        w.bytes += 2.0 * w.tokens * m.token_bytes() * prompt[static_cast<size_t>(w.expert)] /
                   all[static_cast<size_t>(w.expert)];
}

}  // namespace

LayerPlan plan_layer(const ModelSpec& m, const std::vector<std::vector<std::vector<double>>>& physical, int layer,
                     const RoutingTrace& trace, size_t first_token, const Groups& groups, const StepTokens& step,
                     const DispatchPlanner* planner, const std::vector<std::vector<double>>* layer_rows) {
  const int N = static_cast<int>(groups.group_of.size());
  LayerPlan p = empty_plan(N, step.tokens(), layer < m.dense_layers);
  const GroupWork gw = place_tokens(m, groups, step, p);
  // Attention: tensor parallel over the group, every group node does 1/g of every token; prompt tokens'
  // inputs are read from DRAM and partial outputs written back, in full on every node.
  const double wb = m.weight_bytes;
  for (int v = 0; v < N; ++v) {
    const auto grp = static_cast<size_t>(groups.group_of[v]);
    const double g = static_cast<double>(groups.ring[grp].size());
    const double t = gw.tokens[grp], acts = 2.0 * gw.prompt_tokens[grp] * m.token_bytes();
    p.attn_flops[v] = gw.attn_flops[grp] / g;
    p.attn_bytes[v] = m.attention_params() * wb / g + gw.kv_bytes[grp] / g + acts;
    if (p.dense) {
      const double ffn = double(m.ffn_matrices) * m.hidden * m.dense_intermediate;
      p.attn_flops[v] += t * 2.0 * ffn / g;
      p.attn_bytes[v] += ffn * wb / g + acts;
    } else if (m.shared_experts > 0) {
      p.shared_flops[v] = t * 2.0 * m.shared_params() / g;
      p.shared_bytes[v] = m.shared_params() * wb / g + acts;
    }
  }
  if (p.dense) return p;

  const int moe_layer = layer - m.dense_layers;
  const auto& rows = layer_rows ? *layer_rows : physical[moe_layer];
  const int trace_layer = moe_layer % trace.layers();
  // Gate at homes: hidden x E weights, 2 FLOPs per weight per token; prompt tokens' inputs from DRAM.
  std::vector<double> home_prompt(static_cast<size_t>(N), 0.0);
  int token = 0;
  for (const Segment& seg : step.segments)
    for (int i = 0; i < seg.requests * seg.tokens; ++i, ++token) {
      p.gate_flops[p.home[token]] += 2.0 * m.gate_params();
      if (seg.prompt) home_prompt[p.home[token]] += m.token_bytes();
    }
  for (int v = 0; v < N; ++v)
    if (p.gate_flops[v] > 0) p.gate_bytes[v] = m.gate_params() * wb + home_prompt[v];

  // The routed experts: the planner decides where they run and how tokens travel.
  const DispatchPlanner& dp = planner ? *planner : direct_dispatch();
  dp.plan(DispatchInputs{m, trace, trace_layer, first_token, groups, rows}, p);
  if (const auto* rings = dp.token_rings()) p.token_rings = *rings;
  if (step.prompt_tokens() > 0) add_expert_activations(m, trace, trace_layer, first_token, step, p);
  return p;
}

}  // namespace nmpsim::mapping
