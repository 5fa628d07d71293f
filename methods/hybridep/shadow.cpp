#include "nmpsim/methods/hybridep/shadow.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <optional>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/train_step.h"

namespace nmpsim::methods::hybridep {

using namespace nmpsim::mapping;

void ShadowDispatch::plan(const DispatchInputs& in, LayerPlan& p) const {
  const int N = p.nodes, E = in.model.experts;
  const std::vector<char>& shadow = *shadowed_;
  std::vector<double> tokens(static_cast<size_t>(N) * E, 0.0), share(static_cast<size_t>(N) * E, 0.0);
  std::vector<int> stamp(static_cast<size_t>(N) * E, -1);
  TokenTraffic traffic(*this, p, in.model.token_bytes());
  auto work = [&](int i, int h, int n, int e, double s) {
    const size_t ne = static_cast<size_t>(n) * E + e;
    p.routed_token_work[static_cast<size_t>(n)] += s;
    share[ne] = s > share[ne] ? s : share[ne];
    if (stamp[ne] != i) {
      stamp[ne] = i;
      tokens[ne] += 1;
    }
    traffic.visit(i, h, n);
  };
  for (int i = 0; i < static_cast<int>(p.home.size()); ++i) {
    const int h = p.home[static_cast<size_t>(i)];
    const uint16_t* ex = in.experts_of(i);
    for (int k = 0; k < in.top_k(); ++k) {
      const std::vector<double>& row = in.rows[ex[k]];
      if (shadow[ex[k]]) {
        work(i, h, h, ex[k], std::accumulate(row.begin(), row.end(), 0.0));  // the whole expert, at home
        continue;
      }
      for (int v = 0; v < N; ++v)
        if (row[static_cast<size_t>(v)] > 0) work(i, h, v, ex[k], row[static_cast<size_t>(v)]);
    }
  }
  for (int n = 0; n < N; ++n)
    for (int e = 0; e < E; ++e) {
      const size_t ne = static_cast<size_t>(n) * E + e;
      if (tokens[ne] == 0) continue;
      p.expert_work[static_cast<size_t>(n)].push_back(
          ExpertWork{e, tokens[ne], share[ne], tokens[ne] * in.model.expert_flops_per_token() * share[ne],
                     in.model.expert_bytes() * share[ne]});
    }
  traffic.finish(static_cast<double>(in.model.hidden));
}

std::vector<char> choose_shadows(const std::vector<double>& tokens, double token_bytes, double expert_bytes, int nodes,
                                 int max_shadows, bool train) {
  std::vector<int> order(tokens.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return tokens[a] > tokens[b]; });
  std::vector<char> out(tokens.size(), 0);
  const double passes = train ? 2.0 : 1.0, remote = (nodes - 1.0) / nodes;
  int n = 0;
  for (int e : order) {
    if (n >= max_shadows) break;
    const double saved = passes * 2 * tokens[static_cast<size_t>(e)] * remote * token_bytes;
    const double cost = passes * expert_bytes * (nodes - 1.0);
    if (saved <= cost) break;  // the most popular first: the rest save less
    out[static_cast<size_t>(e)] = 1;
    ++n;
  }
  return out;
}

namespace {

struct ShadowOptions {
  int max_shadows = 4;
};

class ShadowPolicy : public RuntimePolicy {
 public:
  explicit ShadowPolicy(ShadowOptions o) : opt_(o) {}

  void before_plan(PolicyContext& ctx, LayerInputs& in) override {
    const int ml = ctx.moe_layer();
    if (ml < 0) return;
    if (in.planner != &direct_dispatch())
      throw InputError(
          "policy fastermoe-shadow: shadowing cannot combine with the dispatch of " +
          (in.planner_from.empty() ? std::string("the placement (its own planner)") : "policy " + in.planner_from));
    // The layer's own counts, as FasterMoE decides after the gate.
    const LayerPlan direct = plan_layer(ctx.model, ctx.shares, ctx.layer, ctx.trace, ctx.first_token, ctx.groups,
                                        ctx.cfg.shape.step(ctx.step));
    std::vector<double> tokens(static_cast<size_t>(ctx.model.experts), 0.0);
    for (const auto& node : direct.expert_work)
      for (const ExpertWork& w : node) tokens[static_cast<size_t>(w.expert)] = std::max(tokens[w.expert], w.tokens);
    const int nodes = static_cast<int>(direct.expert_work.size());
    shadowed_ = choose_shadows(tokens, ctx.model.token_bytes(), ctx.model.expert_bytes(), nodes, opt_.max_shadows,
                               ctx.cfg.shape.kind == StepKind::kTrain);
    if (by_layer_.size() <= static_cast<size_t>(ml)) by_layer_.resize(static_cast<size_t>(ml) + 1);
    by_layer_[static_cast<size_t>(ml)] = shadowed_;
    shadows_ += std::count(shadowed_.begin(), shadowed_.end(), 1);
    ++layers_;
    planner_.emplace(shadowed_);
    in.planner = &*planner_;
    in.planner_from = "fastermoe-shadow";
  }

  void before_layer(PolicyContext& ctx, LayerSchedule& s) override {
    const int ml = ctx.moe_layer();
    if (ml < 0 || std::count(shadowed_.begin(), shadowed_.end(), 1) == 0) return;
    // Each piece of a shadowed expert is broadcast from its holder to every other node (a chain in the
    // mesh's ring order, background stream 1) once the holder's gate has decided; experts wait for it.
    const int gate = s.find_phase(phase_names::kGate);
    std::map<int, DepList> gate_of;
    if (gate >= 0)
      for (OpId id : s.ops_of(gate))
        if (s.op(id).kind == OpKind::kCompute) gate_of[s.op(id).node.value()].push_back(id);
    const int ph = s.phase("shadow_broadcast", PhaseFamily::kOther, /*stream=*/1);
    const std::vector<int> ring = ring_order(ctx.hw.topology, 0, 0, ctx.hw.topology.width, ctx.hw.topology.height);
    DepList streams;
    for (size_t e = 0; e < shadowed_.size(); ++e) {
      if (!shadowed_[e]) continue;
      const std::vector<double>& row = ctx.shares[static_cast<size_t>(ml)][e];
      for (size_t v = 0; v < row.size(); ++v) {
        if (row[v] <= 0) continue;
        const double bytes = row[v] * ctx.model.expert_bytes();
        const auto at = std::find(ring.begin(), ring.end(), static_cast<int>(v)) - ring.begin();
        std::vector<PhysicalNode> chain;
        for (size_t k = 1; k < ring.size(); ++k) chain.push_back(PhysicalNode(ring[(at + k) % ring.size()]));
        const auto g = gate_of.find(static_cast<int>(v));
        streams.push_back(s.stream(ph, PhysicalNode(static_cast<int>(v)), chain, bytes, std::min(bytes, 256.0 * 1024),
                                   g == gate_of.end() ? DepList{} : g->second));
        broadcast_bytes_ += bytes * static_cast<double>(chain.size());
      }
    }
    const OpId join = s.join(ph, streams);
    const int experts = s.find_phase(phase_names::kExperts);
    if (experts < 0) return;
    for (OpId id : s.ops_of(experts))
      if (s.op(id).kind == OpKind::kCompute) s.add_dep(id, join);
  }

  void before_backward_layer(PolicyContext& ctx, LayerSchedule& s, BackwardLayer& b) override {
    const int ml = ctx.moe_layer();
    if (ml < 0 || static_cast<size_t>(ml) >= by_layer_.size()) return;
    // Each shadow's gradient is reduced to the piece's holder: a ring reduce-scatter over all nodes
    // whose only non-empty chunk is the holder's.
    const std::vector<int> ring = ring_order(ctx.hw.topology, 0, 0, ctx.hw.topology.width, ctx.hw.topology.height);
    const std::vector<char>& shadowed = by_layer_[static_cast<size_t>(ml)];
    for (size_t e = 0; e < shadowed.size(); ++e) {
      if (!shadowed[e]) continue;
      std::vector<double> chunks(ring.size(), 0.0);
      const std::vector<double>& row = ctx.shares[static_cast<size_t>(ml)][e];
      for (size_t k = 0; k < ring.size(); ++k) chunks[k] = row[static_cast<size_t>(ring[k])] * ctx.model.expert_bytes();
      const DepList j = add_gradient_reduce_scatter(s, b.grad_sync_phase, ring, chunks, ctx.model.weight_bytes,
                                                    b.gradients_done, &ctx.hw);
      b.sync_joins->insert(b.sync_joins->end(), j.begin(), j.end());
      grad_bytes_ += ctx.model.expert_bytes() * (static_cast<double>(ring.size()) - 1);
    }
  }

  nlohmann::json stats() const override {
    return {{"options", {{"max_shadows", opt_.max_shadows}}},
            {"shadows_per_layer", layers_ ? static_cast<double>(shadows_) / layers_ : 0.0},
            {"broadcast_bytes", broadcast_bytes_},
            {"gradient_bytes_sent", grad_bytes_}};
  }
  bool trains() const override { return true; }

 private:
  ShadowOptions opt_;
  std::vector<char> shadowed_;
  std::vector<std::vector<char>> by_layer_;
  std::optional<ShadowDispatch> planner_;
  long long shadows_ = 0;
  int layers_ = 0;
  double broadcast_bytes_ = 0, grad_bytes_ = 0;
};

ShadowOptions shadow_options(const nlohmann::json& j, const std::string& where) {
  const JsonFields f(j, where, "");
  ShadowOptions o;
  o.max_shadows = static_cast<int>(f.integer("max_shadows", 0, 4096, o.max_shadows));
  f.no_unknown_keys();
  return o;
}

}  // namespace

void register_shadow_policy(Registry& r) {
  PolicyFactory f;
  f.name = "fastermoe-shadow";
  f.description =
      "FasterMoE's dynamic shadowing (a HybridEP baseline): after each gate, the experts whose tokens cost more "
      "bytes than their weights are broadcast to every node and computed at the tokens' homes";
  f.options = {{"max_shadows", "4", "at most this many experts shadowed per layer, the most popular first"}};
  f.create = [](const nlohmann::json& o, const std::string& where) {
    return std::make_unique<ShadowPolicy>(shadow_options(o, where));
  };
  f.resolve = [](const nlohmann::json& o, const std::string& where) {
    return nlohmann::json{{"max_shadows", shadow_options(o, where).max_shadows}};
  };
  r.add(std::move(f));
}

}  // namespace nmpsim::methods::hybridep
