#include "nmpsim/methods/hdmoe/prebroadcast_policy.h"

#include <algorithm>
#include <numeric>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/moe_layer.h"
#include "nmpsim/mapping/train_step.h"
#include "nmpsim/methods/hdmoe/node_balance.h"
#include "nmpsim/methods/hdmoe/prebroadcast_admission.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

namespace {

/// Every node's expert time when expert e takes unit[e] and node v holds the share rows[e][v].
std::vector<double> node_seconds(const std::vector<std::vector<double>>& rows, const std::vector<double>& unit) {
  std::vector<double> load(rows.empty() ? 0 : rows[0].size(), 0.0);
  for (size_t e = 0; e < rows.size(); ++e)
    for (size_t v = 0; v < load.size(); ++v) load[v] += rows[e][v] * unit[e];
  return load;
}

/// Moves expert e's time from its static shares to an even split over `holders` (least-loaded dispatch).
void spread(std::vector<double>& load, const std::vector<std::vector<double>>& rows, const std::vector<double>& unit,
            int e, const std::vector<int>& holders) {
  for (size_t v = 0; v < load.size(); ++v) load[v] -= rows[e][v] * unit[e];
  for (int v : holders) load[v] += unit[e] / static_cast<double>(holders.size());
}

double busiest(const std::vector<double>& load) { return *std::max_element(load.begin(), load.end()); }

}  // namespace

const char* predictor_name(Predictor p) { return p == Predictor::kPrevious ? "previous" : "trace"; }

Predictor parse_predictor(const std::string& text, const std::string& where) {
  if (text == "previous") return Predictor::kPrevious;
  if (text == "trace") return Predictor::kTrace;
  throw InputError(where + ": expected previous or trace, got '" + text + "'");
}

const char* admission_name(Admission a) { return a == Admission::kFlow ? "flow" : "window"; }

Admission parse_admission(const std::string& text, const std::string& where) {
  if (text == "flow") return Admission::kFlow;
  if (text == "window") return Admission::kWindow;
  throw InputError(where + ": expected flow or window, got '" + text + "'");
}

PrebroadcastOptions prebroadcast_options(const nlohmann::json& j, const std::string& where) {
  const JsonFields f(j, where, "");
  PrebroadcastOptions o;
  o.experts = static_cast<int>(f.integer("experts", 0, 1 << 16, o.experts));
  o.targets = static_cast<int>(f.integer("targets", 0, 1 << 16, o.targets));
  if (f.has("predict")) o.predict = parse_predictor(f.string("predict"), where + ": predict");
  o.accuracy = f.number("accuracy", o.accuracy);
  if (f.has("admit")) o.admit = parse_admission(f.string("admit"), where + ": admit");
  if (!(o.accuracy >= 0 && o.accuracy <= 1)) f.fail("accuracy", "must be in [0, 1]");
  f.no_unknown_keys();
  return o;
}

nlohmann::json to_json(const PrebroadcastOptions& o) {
  return {{"experts", o.experts},
          {"targets", o.targets},
          {"predict", predictor_name(o.predict)},
          {"accuracy", o.accuracy},
          {"admit", admission_name(o.admit)}};
}

void PrebroadcastPolicy::on_step_start(PolicyContext& ctx) {
  pending_.assign(static_cast<size_t>(ctx.model.moe_layers), {});
  served_.assign(static_cast<size_t>(ctx.model.moe_layers), {});
}

void PrebroadcastPolicy::before_plan(PolicyContext& ctx, LayerInputs& in) {
  // Experts whose pre-broadcast has landed get least-loaded dispatch in this layer.
  const int ml = ctx.moe_layer();
  if (ml < 0 || pending_[ml].empty()) return;
  std::vector<std::vector<int>> full_copies(static_cast<size_t>(ctx.model.experts));
  // What the broadcasts that landed save under this layer's real routing, against what was predicted.
  const RoutingTrace& tr = ctx.trace;
  const auto counts = tr.expert_counts(ml % tr.layers(), ctx.first_token, static_cast<size_t>(ctx.step_tokens()));
  std::vector<double> f(counts.size());
  for (size_t e = 0; e < f.size(); ++e) f[e] = double(counts[e]) / ctx.step_tokens();
  const std::vector<double> unit = expert_seconds(ctx, f);
  std::vector<double> load = node_seconds(ctx.shares[ml], unit);
  const double busiest0 = busiest(load);
  double predicted = 0;
  for (const Pending& pd : pending_[ml]) {
    bool done = true;
    for (const OpRef& r : pd.ops) done = done && ctx.executor.tracker().done(r);
    if (!done) {
      // Too late for this layer: stop sending what is still queued (the chunks on the way land).
      for (const OpRef& r : pd.ops) ctx.executor.cancel(r);
      ++cancelled_;
      continue;
    }
    full_copies[static_cast<size_t>(pd.expert)] = pd.holders;
    served_[static_cast<size_t>(ml)].emplace_back(pd.expert, pd.holders);
    ++used_;
    spread(load, ctx.shares[ml], unit, pd.expert, pd.holders);
    predicted = pd.saving_s;  // cumulative: the last landed one's is the set's
  }
  if (predicted > 0) {
    predicted_s_ += predicted;
    realised_s_ += busiest0 - busiest(load);
  }
  common::hand_replicas(in, planner_, std::move(full_copies), ctx.hw, "hdmoe-prebroadcast");
}

double PrebroadcastPolicy::reliability() const {
  // Starts trusting the predictor; then the share of the predicted saving that was real, in [0, 1].
  return predicted_s_ > 0 ? std::clamp(realised_s_ / predicted_s_, 0.0, 1.0) : 1.0;
}

void PrebroadcastPolicy::before_layer(PolicyContext& ctx, LayerSchedule& s) {
  // Broadcasts for the next MoE layer start when the phase before dispatch ends (after the gate and
  // the shared experts): the routing of this layer is known then.
  hook_phase_ = -1;
  const int ml = ctx.moe_layer();
  const int dispatch = s.find_phase(phase_names::kDispatch);
  if (ml < 0 || ml + 1 >= ctx.model.moe_layers || dispatch <= 0 || opt_.experts <= 0) return;
  hook_schedule_ = ctx.schedule;
  hook_phase_ = dispatch - 1;
}

void PrebroadcastPolicy::after_phase(PolicyContext& ctx, LayerSchedule& s, uint64_t serial, int phase) {
  if (serial != hook_schedule_ || phase != hook_phase_) return;
  hook_phase_ = -1;
  issue(ctx, s, serial, phase);
}

void PrebroadcastPolicy::before_backward_layer(PolicyContext& ctx, LayerSchedule& s, BackwardLayer& b) {
  const int ml = ctx.moe_layer();
  if (ml < 0 || static_cast<size_t>(ml) >= served_.size()) return;
  const auto& rows = ctx.shares[static_cast<size_t>(ml)];
  const double P = ctx.model.expert_params(), wb = ctx.model.weight_bytes;
  for (const auto& [e, holders] : served_[static_cast<size_t>(ml)]) {
    const std::vector<double>& row = rows[static_cast<size_t>(e)];
    // Every holder computed the whole expert's gradient for its tokens: piece v (share s_v) goes to v
    // (gradients as wide as the weights) and is added there on its reducer.
    for (int t : holders)
      for (size_t v = 0; v < row.size(); ++v) {
        if (row[v] <= 0 || static_cast<int>(v) == t) continue;
        const OpId sent = s.transfer(b.grad_sync_phase, PhysicalNode(t), PhysicalNode(static_cast<int>(v)),
                                     row[v] * P * wb, b.gradients_done);
        b.sync_joins->push_back(
            s.reduction(b.grad_sync_phase, PhysicalNode(static_cast<int>(v)), row[v] * P, {sent}, ReduceMode::kFused));
        gradient_bytes_ += row[v] * P * wb;
      }
  }
}

std::vector<double> PrebroadcastPolicy::predict(const PolicyContext& ctx, int next) const {
  const int E = ctx.model.experts, B = ctx.step_tokens();
  const RoutingTrace& tr = ctx.trace;
  std::vector<double> f(static_cast<size_t>(E), 0.0);
  if (opt_.predict == Predictor::kTrace) {
    const auto truth = tr.expert_counts(next % tr.layers(), ctx.first_token, static_cast<size_t>(B));
    const auto prof = tr.frequencies(next % tr.layers());
    for (int e = 0; e < E; ++e) f[e] = opt_.accuracy * truth[e] / B + (1 - opt_.accuracy) * prof[e];
  } else {
    const auto prev = tr.expert_counts(ctx.moe_layer() % tr.layers(), ctx.first_token, static_cast<size_t>(B));
    for (int e = 0; e < E; ++e) f[e] = double(prev[e]) / B;
  }
  return f;
}

namespace {

/// Eq. 17: how many experts' broadcasts fit in `window_s`, with alpha = one hop's latency and
/// beta = 1 / link bandwidth, over `scope` nodes.
int broadcasts_that_fit(const AnalyticalHardware& hw, double W, int scope, int most, double window_s) {
  const Topology& t = hw.topology;
  const double clock_ghz = hw.clock_hz / 1e9;
  const double alpha = (hw.router_delay_cycles + std::max(1.0, t.links[0].latency_ns * clock_ghz)) / hw.clock_hz;
  const double beta = 1.0 / (t.links[0].gbytes_per_s * 1e9);
  int k = 0;
  for (int c = 1; c <= most; ++c)
    if (prebroadcast_lower_bound(alpha, beta, W, scope, c) <= window_s) k = c;
  return k;
}

double broadcast_chunk(const AnalyticalHardware& hw, double W, int scope, int k) {
  const Topology& t = hw.topology;
  const double clock_ghz = hw.clock_hz / 1e9;
  const double alpha = (hw.router_delay_cycles + std::max(1.0, t.links[0].latency_ns * clock_ghz)) / hw.clock_hz;
  return optimal_broadcast_chunk(alpha, 1.0 / (t.links[0].gbytes_per_s * 1e9), W, scope, k);  // Eq. 18
}

}  // namespace

namespace {

/// Eq. 13: the expert of highest priority 2 P f IS / comp on the most loaded node (-1 if none).
int hottest_expert(const PolicyContext& ctx, const std::vector<std::vector<double>>& rows, const std::vector<double>& f,
                   const std::vector<double>& load, const std::vector<char>& chosen) {
  const int hot = static_cast<int>(std::max_element(load.begin(), load.end()) - load.begin());
  int pick = -1;
  double best = 0;
  for (int e = 0; e < ctx.model.experts; ++e) {
    const double prio = 2 * rows[e][hot] * f[e] * ctx.model.intermediate / ctx.hw.peak_flops;
    if (!chosen[e] && prio > best) {
      best = prio;
      pick = e;
    }
  }
  return pick;
}

/// The `count` least-loaded nodes (all nodes when count >= n).
std::vector<char> least_loaded(const std::vector<double>& load, int count) {
  const int n = static_cast<int>(load.size());
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return load[a] < load[b]; });
  std::vector<char> target(static_cast<size_t>(n), 0);
  for (int q = 0; q < std::min(count, n); ++q) target[order[q]] = 1;
  return target;
}

}  // namespace

std::vector<double> PrebroadcastPolicy::expert_seconds(const PolicyContext& ctx, const std::vector<double>& f) const {
  const double W = ctx.model.expert_bytes();
  std::vector<double> unit(f.size(), 0.0);
  for (size_t e = 0; e < f.size(); ++e) {
    const double tokens = f[e] * ctx.step_tokens();
    if (tokens >= 0.5)
      unit[e] =
          std::max(tokens * ctx.model.expert_flops_per_token() / ctx.hw.peak_flops, W / ctx.hw.memory_bytes_per_s);
  }
  return unit;
}

std::vector<BroadcastPlan> PrebroadcastPolicy::candidates(const PolicyContext& ctx, int count, double chunk) const {
  const Topology& t = ctx.hw.topology;
  const int n = t.nodes(), E = ctx.model.experts;
  const int next = ctx.moe_layer() + 1;
  const std::vector<double> f = predict(ctx, next);
  const auto& rows = ctx.shares[next];
  const double W = ctx.model.expert_bytes();
  const std::vector<double> unit = expert_seconds(ctx, f);
  std::vector<double> load = node_seconds(rows, unit);
  const double busiest0 = busiest(load);
  const int scope = opt_.targets > 0 ? std::min(n, opt_.targets + 1) : n;
  const std::vector<int> ring = ring_order(t, 0, 0, t.width, t.height);
  std::vector<char> chosen(static_cast<size_t>(E), 0);
  std::vector<BroadcastPlan> out;
  for (int it = 0; it < count; ++it) {
    const int pick = hottest_expert(ctx, rows, f, load, chosen);
    if (pick < 0) break;
    chosen[pick] = 1;
    // Targets: the least-loaded nodes (or all). Every holder of a share streams it along the mesh ring
    // through the targets; afterwards every target holds the whole expert.
    const std::vector<char> target = least_loaded(load, scope < n ? scope - 1 : n);
    BroadcastPlan plan;
    plan.expert = pick;
    for (int h = 0; h < n; ++h) {
      const double share = rows[pick][h];
      if (share <= 0) continue;
      const auto pos = std::find(ring.begin(), ring.end(), h) - ring.begin();
      BroadcastStream b;
      b.src = h;
      for (int st = 1; st < n; ++st) {
        const int v = ring[(pos + st) % n];
        if (target[v]) b.chain.push_back(v);
      }
      if (b.chain.empty()) continue;
      b.bytes = share * W;
      b.chunk_bytes = std::min(std::max(chunk, 4096.0), b.bytes);
      plan.streams.push_back(std::move(b));
    }
    if (plan.streams.empty()) continue;
    for (int v = 0; v < n; ++v)
      if (target[v]) plan.holders.push_back(v);
    // Assume it lands: its load spreads evenly over the targets for the next pick.
    spread(load, rows, unit, pick, plan.holders);
    plan.saving_s = busiest0 - busiest(load);
    out.push_back(std::move(plan));
  }
  return out;
}

void PrebroadcastPolicy::issue(PolicyContext& ctx, LayerSchedule& s, uint64_t serial, int after) {
  const int n = ctx.hw.topology.nodes();
  const double W = ctx.model.expert_bytes();
  const int scope = opt_.targets > 0 ? std::min(n, opt_.targets + 1) : n;
  std::vector<BroadcastPlan> plans;
  if (opt_.admit == Admission::kWindow) {
    // The paper's rule: as many as Eq. 17 fits into the window, the previous layer's latency (for the
    // first layer, this layer's so far).
    const double window = ctx.previous ? ctx.previous->total_s() : ctx.executor.now_s() - ctx.layer_start_s;
    const int k = broadcasts_that_fit(ctx.hw, W, scope, opt_.experts, window);
    if (k == 0) return;
    plans = candidates(ctx, k, broadcast_chunk(ctx.hw, W, scope, k));
  } else {
    const std::vector<BroadcastPlan> cands =
        candidates(ctx, opt_.experts, broadcast_chunk(ctx.hw, W, scope, opt_.experts));
    AdmissionResult a = admit_by_flow(ctx.hw, s, after, cands, reliability());
    considered_ += a.considered;
    plans = std::move(a.admitted);
  }
  if (plans.empty()) return;
  const int ph = s.phase("prebroadcast", PhaseFamily::kMoeComm, /*stream=*/1);
  const OpId start = phase_barrier(s, after);
  for (const BroadcastPlan& plan : plans) {
    Pending pend{plan.expert, {}, plan.holders, plan.saving_s};
    for (OpId op : add_broadcast(s, ph, start, plan)) pend.ops.push_back(OpRef{serial, op});
    for (const BroadcastStream& b : plan.streams) bytes_ += b.bytes;
    pending_[ctx.moe_layer() + 1].push_back(std::move(pend));
    ++issued_;
  }
}

nlohmann::json PrebroadcastPolicy::stats() const {
  return {{"experts_considered", considered_},
          {"experts_issued", issued_},
          {"experts_used", used_},
          {"experts_cancelled", cancelled_},
          {"bytes", bytes_},
          {"gradient_bytes_sent", gradient_bytes_},
          {"predicted_saving_us", predicted_s_ * 1e6},
          {"realised_saving_us", realised_s_ * 1e6}};
}

void register_prebroadcast(Registry& r) {
  PolicyFactory f;
  f.name = "hdmoe-prebroadcast";
  f.description = "HD-MoE dynamic pre-broadcast of hot experts with least-loaded dispatch (Sec. IV-D)";
  f.options = {{"experts", "2", "at most this many experts pre-broadcast per layer (Eq. 17 may allow fewer)"},
               {"targets", "4", "copies go to this many least-loaded nodes (0 = every node)"},
               {"predict", "previous", "next layer's loads from the 'previous' layer's routing or from the 'trace'"},
               {"accuracy", "1", "predict=trace: weight of the true frequencies (the rest is the trace average)"},
               {"admit", "flow",
                "'flow': only broadcasts whose predicted saving exceeds their cost on the flow model of the layer; "
                "'window': the paper's Eq. 17 window"}};
  f.cycle_only = true;  // flow fidelity charges the contention, but is not yet validated on this policy
  f.flags = {{"prebroadcast", "experts",
              "same as --policy hdmoe-prebroadcast --policy-opt hdmoe-prebroadcast.experts=N (0 = off)"},
             {"prebroadcast-targets", "targets", "pre-broadcast: copies go to this many least-loaded nodes (0 = all)"},
             {"predict", "predict", "pre-broadcast: predict from the 'previous' layer or the 'trace'"},
             {"prediction-accuracy", "accuracy", "--predict trace: weight of the true frequencies"},
             {"prebroadcast-admit", "admit",
              "pre-broadcast: 'flow' admits what pays on the flow model of the layer, 'window' the paper's Eq. 17 "
              "rule"}};
  f.enable_flag = "prebroadcast";
  f.create = [](const nlohmann::json& o, const std::string& where) {
    return std::make_unique<PrebroadcastPolicy>(prebroadcast_options(o, where));
  };
  f.resolve = [](const nlohmann::json& o, const std::string& where) { return to_json(prebroadcast_options(o, where)); };
  r.add(std::move(f));
}

}  // namespace nmpsim::methods::hdmoe
