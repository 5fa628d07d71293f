#include "nmpsim/mapping/placement.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/layer_plan.h"

namespace nmpsim::mapping {

Placement::Placement(std::string s, int e, int n, int layers)
    : strategy(std::move(s)),
      experts(e),
      nodes(n),
      share(static_cast<size_t>(layers), std::vector<double>(static_cast<size_t>(e) * n, 0.0)),
      node_map(static_cast<size_t>(n)) {
  set_identity_map();
}

void Placement::set_identity_map() {
  node_map.resize(static_cast<size_t>(nodes));
  for (int n = 0; n < nodes; ++n) node_map[static_cast<size_t>(n)] = PhysicalNode(n);
}

std::vector<double> Placement::physical_row(int l, int e) const {
  std::vector<double> row(static_cast<size_t>(nodes), 0.0);
  for (int n = 0; n < nodes; ++n) row[static_cast<size_t>(physical(LogicalNode(n)).value())] = at(l, e, n);
  return row;
}

void Placement::validate(const std::string& where) const {
  auto fail = [&](const std::string& m) { throw InputError(where + ": " + m); };
  if (experts < 1) fail("experts must be at least 1");
  if (nodes < 1) fail("nodes must be at least 1");
  if (share.empty()) fail("no layers");
  if (static_cast<int>(node_map.size()) != nodes)
    fail("node_map has " + std::to_string(node_map.size()) + " entries for " + std::to_string(nodes) + " nodes");
  std::vector<char> seen(static_cast<size_t>(nodes), 0);
  for (int n = 0; n < nodes; ++n) {
    const int p = node_map[static_cast<size_t>(n)].value();
    if (p < 0 || p >= nodes) fail("node_map[" + std::to_string(n) + "] = " + std::to_string(p) + " is out of range");
    if (seen[p]++) fail("node_map maps two logical nodes to physical node " + std::to_string(p));
  }
  for (int l = 0; l < layers(); ++l) {
    if (share[l].size() != static_cast<size_t>(experts) * nodes) fail("layer " + std::to_string(l) + ": wrong size");
    for (int e = 0; e < experts; ++e) {
      double sum = 0;
      for (int n = 0; n < nodes; ++n) {
        const double v = at(l, e, n);
        if (!(v >= 0 && v <= 1))
          fail("layer " + std::to_string(l) + " expert " + std::to_string(e) + " node " + std::to_string(n) +
               ": share " + std::to_string(v) + " outside [0, 1]");
        sum += v;
      }
      if (std::fabs(sum - 1.0) > 1e-6)
        fail("layer " + std::to_string(l) + " expert " + std::to_string(e) + ": shares sum to " + std::to_string(sum) +
             ", not 1");
    }
  }
}

void Placement::check_against(const ModelSpec& m, const std::string& where) const {
  if (experts != m.experts)
    throw InputError(where + ": has " + std::to_string(experts) + " expert rows, model " + m.name + " has " +
                     std::to_string(m.experts) + " routed experts");
  if (layers() != m.moe_layers)
    throw InputError(where + ": has " + std::to_string(layers()) + " layers, model " + m.name + " has " +
                     std::to_string(m.moe_layers) + " MoE layers");
}

nlohmann::json placement_to_json(const Placement& p) {
  nlohmann::json layers = nlohmann::json::array();
  for (int l = 0; l < p.layers(); ++l) {
    nlohmann::json rows = nlohmann::json::array();
    for (int e = 0; e < p.experts; ++e) {
      nlohmann::json row = nlohmann::json::array();
      for (int n = 0; n < p.nodes; ++n)
        if (p.at(l, e, n) > 0) row.push_back(nlohmann::json::array({n, p.at(l, e, n)}));
      rows.push_back(row);
    }
    layers.push_back(rows);
  }
  std::vector<int> node_map;
  for (PhysicalNode v : p.node_map) node_map.push_back(v.value());
  nlohmann::json j = {{"strategy", p.strategy}, {"experts", p.experts}, {"nodes", p.nodes},
                      {"node_map", node_map},   {"solver", p.solver},   {"layers", layers}};
  if (!p.stats.empty()) j["stats"] = p.stats;
  if (!p.runtime.empty()) j["runtime"] = p.runtime;
  if (!p.tp_rings.empty()) j["layout"] = {{"tp_rings", p.tp_rings}};
  if (!p.dispatch.empty()) j["dispatch"] = p.dispatch;
  return j;
}

namespace {

/// A JSON integer in [lo, hi], or an InputError "<at>: <what> must be ...".
long long json_index(const nlohmann::json& v, long long lo, long long hi, const std::string& at, const char* what) {
  if (!v.is_number_integer()) throw InputError(at + ": " + what + ": expected an integer, got " + describe_json(v));
  const bool huge = v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(hi);
  if (huge || v.get<long long>() < lo || v.get<long long>() > hi) {
    const std::string got =
        v.is_number_unsigned() ? std::to_string(v.get<unsigned long long>()) : std::to_string(v.get<long long>());
    throw InputError(at + ": " + what + " " + got + " out of range [" + std::to_string(lo) + ", " +
                     std::to_string(hi + 1) + ")");
  }
  return v.get<long long>();
}

void read_rows(const nlohmann::json& layers, Placement& p, const std::string& where) {
  std::vector<long long> row_of(static_cast<size_t>(p.nodes), -1);  // the last row that named each node
  long long row_id = 0;
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::string at = where + ": layers[" + std::to_string(l) + "]";
    if (!layers[l].is_array() || static_cast<int>(layers[l].size()) != p.experts)
      throw InputError(at + ": expected " + std::to_string(p.experts) + " expert rows, got " +
                       describe_json(layers[l]));
    for (int e = 0; e < p.experts; ++e) {
      const std::string row = at + " expert " + std::to_string(e);
      const nlohmann::json& pairs = layers[l][static_cast<size_t>(e)];
      ++row_id;
      if (!pairs.is_array())
        throw InputError(row + ": expected a list of [node, share] pairs, got " + describe_json(pairs));
      for (const auto& pair : pairs) {
        if (!pair.is_array() || pair.size() != 2 || !pair[1].is_number())
          throw InputError(row + ": entries must be [node, share], got " + describe_json(pair));
        if (!(pair[1].get<double>() > 0))
          throw InputError(row + ": share " + describe_json(pair[1]) +
                           " must be above 0 (leave out the nodes without one)");
        const int n = static_cast<int>(json_index(pair[0], 0, p.nodes - 1, row, "node"));
        if (row_of[static_cast<size_t>(n)] == row_id)
          throw InputError(row + ": node " + std::to_string(n) + " appears twice (one [node, share] pair per node)");
        row_of[static_cast<size_t>(n)] = row_id;
        p.at(static_cast<int>(l), e, n) = pair[1].get<double>();
      }
    }
  }
}

/// {"tp_rings": [[node, ...], ...]}: rings of physical nodes that partition the nodes.
void read_layout(const JsonFields& f, Placement& p, const std::string& where) {
  const nlohmann::json& rings = f.raw("tp_rings");
  if (!rings.is_array() || rings.empty()) f.fail("tp_rings", "expected a non-empty list of rings of node ids");
  for (const auto& ring : rings) {
    if (!ring.is_array()) f.fail("tp_rings", "expected a list of node ids, got " + describe_json(ring));
    p.tp_rings.emplace_back();
    for (const auto& v : ring)
      p.tp_rings.back().push_back(static_cast<int>(json_index(v, 0, p.nodes - 1, where, "tp_rings")));
  }
  f.no_unknown_keys();
  groups_with_rings(p.tp_rings, p.nodes, where);  // throws unless the rings partition the nodes
}

}  // namespace

Placement placement_from_json(const nlohmann::json& j, const std::string& where) {
  const JsonFields root(j, where, "");
  Placement p;
  p.strategy = root.string("strategy", "file");
  if (!is_valid_name(p.strategy))
    root.fail("strategy",
              "'" + p.strategy + "' is not a name (1-64 letters, digits, '.', '_', '+', '-'; it names output files)");
  p.experts = static_cast<int>(root.integer("experts", 1, 65535));
  p.nodes = static_cast<int>(root.integer("nodes", 1, 65536));
  if (root.has("solver")) p.solver = root.raw("solver");
  if (root.has("stats")) p.stats = root.raw("stats");
  if (root.has("runtime")) {
    p.runtime = root.raw("runtime");
    bool ok = p.runtime.is_array();
    for (const auto& r : p.runtime)
      ok = ok && r.is_object() && r.size() == 2 && r.contains("name") && r["name"].is_string() &&
           r.contains("options") && r["options"].is_object();
    if (!ok) root.fail("runtime", "expected a list of {\"name\": policy, \"options\": {...}}");
  }
  if (root.has("dispatch")) {
    p.dispatch = root.raw("dispatch");
    const auto& d = p.dispatch;
    if (!(d.is_object() && d.size() == 2 && d.contains("name") && d["name"].is_string() && d.contains("options") &&
          d["options"].is_object()))
      root.fail("dispatch", "expected {\"name\": planner, \"options\": {...}}");
  }
  const auto& layers = root.raw("layers");
  if (!layers.is_array() || layers.empty()) root.fail("layers", "expected a non-empty list of layers");
  const double bytes = double(layers.size()) * p.experts * p.nodes * sizeof(double);
  if (bytes > kMaxPlacementBytes)
    root.fail("layers", std::to_string(layers.size()) + " layers x " + std::to_string(p.experts) + " experts x " +
                            std::to_string(p.nodes) + " nodes of shares need " +
                            std::to_string(static_cast<long long>(bytes / (1 << 20))) + " MiB (limit " +
                            std::to_string(kMaxPlacementBytes >> 20) + " MiB)");
  p.set_identity_map();
  if (root.has("node_map")) {
    const auto& nm = root.raw("node_map");
    if (!nm.is_array() || static_cast<int>(nm.size()) != p.nodes)
      root.fail("node_map",
                "expected a list of " + std::to_string(p.nodes) + " physical node ids, got " + describe_json(nm));
    for (int n = 0; n < p.nodes; ++n)
      p.node_map[static_cast<size_t>(n)] = PhysicalNode(
          static_cast<int>(json_index(nm[static_cast<size_t>(n)], 0, p.nodes - 1, where + ": node_map", "entry")));
  }
  if (root.has("layout")) read_layout(root.object("layout"), p, where + ": layout");
  root.no_unknown_keys();
  p.share.assign(layers.size(), std::vector<double>(static_cast<size_t>(p.experts) * p.nodes, 0.0));
  read_rows(layers, p, where);
  p.validate(where);
  return p;
}

Placement load_placement(const std::string& path) { return placement_from_json(read_json_file(path), path); }

namespace {

/// Activations a training step keeps on a node for `tokens` of its group's tokens per node (all its
/// layers'; with recomputation each layer's input, and one layer's full activations while it is
/// recomputed).
double train_activations(const ModelSpec& m, double tokens, bool recompute) {
  const double kept = m.dense_layers * train_activation_bytes_per_token(m, true, recompute) +
                      m.moe_layers * train_activation_bytes_per_token(m, false, recompute);
  const double live = recompute ? std::max(m.dense_layers > 0 ? train_activation_bytes_per_token(m, true, false) : 0.0,
                                           train_activation_bytes_per_token(m, false, false))
                                : 0.0;
  return tokens * (kept + live);
}

}  // namespace

MemoryDemand memory_demand(const Placement& p, const ModelSpec& m, int attn_tp, const RunShape& shape) {
  MemoryDemand d;
  d.bytes_per_node.assign(static_cast<size_t>(p.nodes), 0.0);
  const double g = std::max(1, attn_tp);
  const double groups = std::max(1.0, p.nodes / g);
  // KV cache: ceil(requests / groups) caches per group, of the context (decode, mixed) or the prompt
  // (prefill); a mixed run's chunked prompt adds its cache on one group.
  const double per_group = std::ceil(shape.batch / groups);
  const bool prefill = shape.kind == StepKind::kPrefill, mixed = shape.kind == StepKind::kMixed;
  const bool train = shape.kind == StepKind::kTrain;
  d.kv_bytes =
      train ? 0.0
            : m.layers() * per_group * (prefill ? shape.prompt_tokens : shape.context) * m.kv_bytes_per_token() / g;
  if (mixed) d.kv_bytes += m.layers() * static_cast<double>(shape.prompt_tokens) * m.kv_bytes_per_token() / g;
  // One layer's live activations: the group's prompt tokens' hidden states in and out.
  const double prompt_tokens = prefill ? per_group * shape.prompt_tokens : mixed ? shape.prefill_chunk : 0.0;
  d.activation_bytes = train ? train_activations(m, per_group * shape.prompt_tokens / g, shape.recompute)
                             : prompt_tokens * m.activation_bytes * 2.0 * m.hidden;
  // The gate sits on every node; attention, dense FFNs and shared experts are split over the group.
  const double weights_fixed =
      (m.layers() * m.attention_params() / g + m.moe_layers * m.gate_params()) * m.weight_bytes +
      m.moe_layers * m.shared_params() * m.weight_bytes / g +
      m.dense_layers * double(m.ffn_matrices) * m.hidden * m.dense_intermediate * m.weight_bytes / g;
  for (int l = 0; l < p.layers(); ++l)
    for (int e = 0; e < p.experts; ++e)
      for (int n = 0; n < p.nodes; ++n)
        d.bytes_per_node[static_cast<size_t>(p.physical(LogicalNode(n)).value())] += p.at(l, e, n) * m.expert_bytes();
  // Training: gradients as wide as the weights, and the optimizer state per parameter.
  const double per_weight_byte = train ? 2.0 + optimizer_state_bytes(m) / m.weight_bytes : 1.0;
  for (int n = 0; n < p.nodes; ++n) {
    d.bytes_per_node[n] = (d.bytes_per_node[n] + weights_fixed) * per_weight_byte + d.kv_bytes + d.activation_bytes;
    if (d.bytes_per_node[n] > d.max_bytes) {
      d.max_bytes = d.bytes_per_node[n];
      d.max_node = n;
    }
  }
  if (train) {
    const double weights = (d.max_bytes - d.activation_bytes) / per_weight_byte;
    d.gradient_bytes = weights;
    d.optimizer_bytes = weights * optimizer_state_bytes(m) / m.weight_bytes;
  }
  return d;
}

void check_memory(const Placement& p, const ModelSpec& m, const Topology& t, double capacity, int attn_tp,
                  const RunShape& shape) {
  const MemoryDemand d = memory_demand(p, m, attn_tp, shape);
  if (d.max_bytes > capacity) {
    const double gib = double(1ULL << 30);
    const double weights = d.max_bytes - d.kv_bytes - d.activation_bytes - d.gradient_bytes - d.optimizer_bytes;
    char state[160] = "";
    if (shape.kind == StepKind::kTrain)
      std::snprintf(state, sizeof state, ", gradients %.2f, optimizer state %.2f", d.gradient_bytes / gib,
                    d.optimizer_bytes / gib);
    char buf[480];
    std::snprintf(buf, sizeof buf,
                  "placement '%s' of %s needs %.2f GiB on node %d (%d,%d) (weights %.2f%s, KV cache %.2f, activations "
                  "%.2f GiB), which has %.2f GiB%s",
                  p.strategy.c_str(), m.name.c_str(), d.max_bytes / gib, d.max_node, t.x(d.max_node), t.y(d.max_node),
                  weights / gib, state, d.kv_bytes / gib, d.activation_bytes / gib, capacity / gib,
                  shape.kind == StepKind::kTrain && !shape.recompute && d.activation_bytes > d.max_bytes / 2
                      ? " (--recompute keeps fewer activations)"
                      : "");
    throw InputError(buf);
  }
}

Placement make_tp(const ModelSpec& m, int nodes) {
  Placement p("tp", m.experts, nodes, m.moe_layers);
  for (int l = 0; l < p.layers(); ++l)
    for (int e = 0; e < m.experts; ++e)
      for (int n = 0; n < nodes; ++n) p.at(l, e, n) = 1.0 / nodes;
  return p;
}

Placement make_ep(const ModelSpec& m, int nodes) {
  Placement p("ep", m.experts, nodes, m.moe_layers);
  for (int l = 0; l < p.layers(); ++l) {
    if (nodes <= m.experts) {
      for (int e = 0; e < m.experts; ++e) p.at(l, e, e % nodes) = 1.0;
    } else {
      // Group g holds nodes [g * nodes / E, (g + 1) * nodes / E): sizes differ by at most one.
      for (int e = 0; e < m.experts; ++e) {
        const int lo = static_cast<int>(int64_t(e) * nodes / m.experts);
        const int hi = static_cast<int>(int64_t(e + 1) * nodes / m.experts);
        for (int n = lo; n < hi; ++n) p.at(l, e, n) = 1.0 / (hi - lo);
      }
    }
  }
  return p;
}

std::vector<int> mesh_regions(const Topology& t, int regions) {
  // Prefer the most square regions among the factorizations rx * ry = regions that tile the mesh.
  int best_rx = -1;
  double best_aspect = 1e18;
  for (int rx = 1; rx <= regions; ++rx) {
    if (regions % rx) continue;
    const int ry = regions / rx;
    if (t.width % rx || t.height % ry) continue;
    const double w = double(t.width) / rx, h = double(t.height) / ry;
    const double aspect = std::max(w, h) / std::min(w, h);
    if (aspect < best_aspect) {
      best_aspect = aspect;
      best_rx = rx;
    }
  }
  if (best_rx < 0)
    throw InputError("cannot cut a " + std::to_string(t.width) + "x" + std::to_string(t.height) + " mesh into " +
                     std::to_string(regions) + " equal rectangles");
  const int rx = best_rx, ry = regions / rx, rw = t.width / rx, rh = t.height / ry;
  std::vector<int> region(static_cast<size_t>(t.nodes()));
  for (int n = 0; n < t.nodes(); ++n) region[n] = (t.y(n) / rh) * rx + t.x(n) / rw;
  return region;
}

int default_cb_regions(const ModelSpec& m, const Topology& t) {
  int r = m.experts <= 8 ? 2 : 8;
  r = std::min(r, t.nodes());
  while (r > 1) {
    try {
      mesh_regions(t, r);
      return r;
    } catch (const InputError&) {
      --r;
    }
  }
  return 1;
}

Placement make_cb(const ModelSpec& m, const Topology& t, const RoutingTrace& profile, int regions) {
  const std::vector<int> region = mesh_regions(t, regions);
  std::vector<std::vector<int>> members(static_cast<size_t>(regions));
  for (int n = 0; n < t.nodes(); ++n) members[region[n]].push_back(n);
  Placement p("cb", m.experts, t.nodes(), m.moe_layers);
  const int cap = (m.experts + regions - 1) / regions;
  for (int l = 0; l < p.layers(); ++l) {
    const std::vector<double> f = profile.frequencies(l % profile.layers());
    std::vector<int> order(static_cast<size_t>(m.experts));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return f[a] > f[b]; });
    std::vector<double> load(static_cast<size_t>(regions), 0.0);
    std::vector<int> count(static_cast<size_t>(regions), 0);
    for (int e : order) {
      int best = -1;
      for (int r = 0; r < regions; ++r)
        if (count[r] < cap && (best < 0 || load[r] < load[best])) best = r;
      load[best] += f[e];
      ++count[best];
      for (int n : members[best]) p.at(l, e, n) = 1.0 / members[best].size();
    }
  }
  return p;
}

}  // namespace nmpsim::mapping
