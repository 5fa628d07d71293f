#include "nmpsim/methods/moentwine/ni_balancer.h"

#include <algorithm>
#include <cmath>

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/moe_layer.h"
#include "nmpsim/mapping/train_step.h"
#include "nmpsim/methods/moentwine/token_domain_dispatch.h"

namespace nmpsim::methods::moentwine {

using namespace nmpsim::mapping;  // the base layer this method builds on

namespace {

constexpr int kLocalWindow = 1, kGlobalWindow = 2;
constexpr const char* kMigrationPhase = "migration";

const char* planner_name(Planner p) { return p == Planner::kTopology ? "topology" : "greedy"; }
const char* migration_name(Migration m) {
  return m == Migration::kStaged ? "staged" : m == Migration::kPaused ? "paused" : "free";
}

/// The slowest link bandwidth on the XY path of a stage, bytes per second.
double stage_bytes_per_s(const Topology& t, const Stage& st) { return path_gbytes_per_s(t, st.src, st.dst) * 1e9; }

}  // namespace

BalancerOptions balancer_options(const nlohmann::json& j, const std::string& where) {
  const JsonFields f(j, where, "");
  BalancerOptions o;
  if (f.has("planner")) {
    const std::string p = f.string("planner");
    if (p != "topology" && p != "greedy") f.fail("planner", "expected topology or greedy, got '" + p + "'");
    o.planner = p == "topology" ? Planner::kTopology : Planner::kGreedy;
  }
  if (f.has("migrate")) {
    const std::string m = f.string("migrate");
    if (m != "staged" && m != "paused" && m != "free")
      f.fail("migrate", "expected staged, paused or free, got '" + m + "'");
    o.migrate = m == "staged" ? Migration::kStaged : m == "paused" ? Migration::kPaused : Migration::kFree;
  }
  o.slots = static_cast<int>(f.integer("slots", 0, 1 << 10, o.slots));
  o.window = static_cast<int>(f.integer("window", 1, 1 << 16, o.window));
  o.ema = f.number("ema", o.ema);
  o.alpha = f.number("alpha", o.alpha);
  o.beta = static_cast<int>(f.integer("beta", 0, 1 << 20, o.beta));
  o.segment_kib = f.number("segment_kib", o.segment_kib);
  o.gain = f.number("gain", o.gain);
  if (!(o.gain >= 0 && o.gain < 1)) f.fail("gain", "must be in [0, 1)");
  if (!(o.ema >= 0 && o.ema <= 1)) f.fail("ema", "must be in [0, 1]");
  if (!(o.alpha >= 0)) f.fail("alpha", "must be >= 0");
  if (!(o.segment_kib >= 4 && o.segment_kib <= 1 << 20)) f.fail("segment_kib", "must be in [4, 1048576]");
  f.no_unknown_keys();
  return o;
}

nlohmann::json to_json(const BalancerOptions& o) {
  return {{"planner", planner_name(o.planner)},
          {"migrate", migration_name(o.migrate)},
          {"slots", o.slots},
          {"window", o.window},
          {"ema", o.ema},
          {"alpha", o.alpha},
          {"beta", o.beta},
          {"segment_kib", o.segment_kib},
          {"gain", o.gain}};
}

void BalancerPolicy::init(const PolicyContext& ctx) {
  const int layers = ctx.model.moe_layers;
  for (int ml = 0; ml < layers; ++ml)
    native_.push_back(copies_from_shares(ctx.shares[static_cast<size_t>(ml)], opt_.slots,
                                         "policy moentwine-balancer: MoE layer " + std::to_string(ml)));
  serving_ = native_;
  // A replica in training is updated by its holder: it needs the expert's optimizer state too.
  expert_bytes_ = expert_move_bytes(ctx.model, ctx.cfg.shape.kind == StepKind::kTrain);
  predictor_ = LoadPredictor(layers, opt_.window, opt_.ema);
  ready_ = true;
}

void BalancerPolicy::on_step_start(PolicyContext& ctx) {
  if (!ready_) init(ctx);
  if (last_phase_end_s_ >= 0) drain_tail_s_ += std::max(0.0, ctx.executor.now_s() - last_phase_end_s_);
  land_finished();
  ++steps_since_;
  peak_to_mean_.push_back(0);
  if (moving_.empty()) moving_ = replan(ctx);
  int replicas = 0;
  for (const ExpertCopies& c : serving_)
    for (const auto& h : c.holders) replicas += static_cast<int>(h.size()) - 1;
  replicas_.push_back(replicas);
  paused_pending_ = opt_.migrate == Migration::kPaused && !moving_.empty();
}

void BalancerPolicy::land_finished() {
  // Every segment issued in a step is done after the step's drain: a transfer whose last stage was
  // sent has landed, and serves from this step on (the step after it landed).
  std::vector<Transfer> still;
  for (Transfer& t : moving_) {
    if (t.stage < t.stages.size()) {
      still.push_back(std::move(t));
      continue;
    }
    serving_[static_cast<size_t>(t.moe_layer)].holders[static_cast<size_t>(t.expert)].push_back(t.to);
    ++landed_;
    replica_bytes_ += expert_bytes_;
  }
  moving_ = std::move(still);
}

std::vector<BalancerPolicy::Transfer> BalancerPolicy::replan(const PolicyContext& ctx) {
  const int layers = ctx.model.moe_layers;
  std::vector<double> imb(static_cast<size_t>(layers), 0.0);
  for (int ml = 0; ml < layers; ++ml) {
    const std::vector<double> pred = predictor_.predict(ml);
    if (!pred.empty()) imb[ml] = imbalance(heats(serving_[ml], pred, ctx.hw.topology.nodes()));
  }
  if (!should_migrate(imb, opt_.alpha, steps_since_, opt_.beta)) return {};
  steps_since_ = 0;
  ++rounds_;
  const Topology& t = ctx.hw.topology;
  std::vector<Transfer> out;
  for (int ml = 0; ml < layers; ++ml) {
    const std::vector<double> pred = predictor_.predict(ml);
    if (pred.empty()) continue;
    ExpertCopies plan = native_[ml];
    const std::vector<Move> moves = opt_.planner == Planner::kTopology
                                        ? topology_aware_balance(t, plan, pred, &serving_[ml])
                                        : greedy_balance(plan, pred);
    // Hysteresis: a layer keeps its replicas unless the new plan cuts its predicted peak by `gain`.
    const auto peak = [&](const ExpertCopies& c) {
      const std::vector<double> h = heats(c, pred, t.nodes());
      return *std::max_element(h.begin(), h.end());
    };
    if (peak(plan) > (1 - opt_.gain) * peak(serving_[ml])) continue;
    // Replicas in both the serving set and the plan stay; the others are evicted (their slots are
    // overwritten); the plan's new replicas are copied from the nearest holder that exists now.
    ExpertCopies& now = serving_[ml];
    for (size_t e = 0; e < now.holders.size(); ++e) {
      std::vector<int> kept{now.holders[e].front()};
      for (size_t k = 1; k < now.holders[e].size(); ++k)
        if (plan.holds(static_cast<int>(e), now.holders[e][k])) kept.push_back(now.holders[e][k]);
      evicted_ += static_cast<int>(now.holders[e].size() - kept.size());
      now.holders[e] = std::move(kept);
    }
    add_moves(ctx, ml, moves, out);
    if (opt_.migrate == Migration::kPaused)  // inference waits until they land, at the start of this step
      for (const Transfer& tr : out)
        if (tr.moe_layer == ml) now.holders[static_cast<size_t>(tr.expert)].push_back(tr.to);
  }
  return out;
}

void BalancerPolicy::add_moves(const PolicyContext& ctx, int ml, const std::vector<Move>& moves,
                               std::vector<Transfer>& out) {
  const Topology& t = ctx.hw.topology;
  ExpertCopies& now = serving_[static_cast<size_t>(ml)];
  for (const Move& m : moves) {
    if (now.holds(m.expert, m.to)) continue;
    auto& h = now.holders[static_cast<size_t>(m.expert)];
    ++planned_;
    if (opt_.migrate == Migration::kFree) {
      h.push_back(m.to);
      continue;
    }
    Transfer tr;
    tr.moe_layer = ml;
    tr.expert = m.expert;
    tr.to = m.to;
    tr.from = h.front();  // greedy EPLB copies from the native holder
    if (opt_.planner == Planner::kTopology) {
      for (int v : h)
        if (t.hops(v, m.to) < t.hops(tr.from, m.to)) tr.from = v;
      // Paused, the round's copies all land before the step goes on: a copy made earlier in the
      // round may be the nearest holder (Algorithm 1's source); the copies then form chains.
      if (opt_.migrate == Migration::kPaused)
        for (size_t k = 0; k < out.size(); ++k)
          if (out[k].moe_layer == ml && out[k].expert == m.expert && t.hops(out[k].to, m.to) < t.hops(tr.from, m.to)) {
            tr.from = out[k].to;
            tr.after = static_cast<int>(k);
          }
    }
    tr.stages = migration_stages(t, domains_of(ctx.planner), tr.from, tr.to);
    tr.stage_left = expert_bytes_;
    out.push_back(std::move(tr));
  }
}

void BalancerPolicy::before_plan(PolicyContext& ctx, LayerInputs& in) {
  const int ml = ctx.moe_layer();
  if (ml < 0) return;
  const RoutingTrace& tr = ctx.trace;
  const auto counts = tr.expert_counts(ml % tr.layers(), ctx.first_token, static_cast<size_t>(ctx.step_tokens()));
  const std::vector<double> load(counts.begin(), counts.end());
  predictor_.observe(ml, load);
  const std::vector<double> heat = heats(serving_[ml], load, ctx.hw.topology.nodes());
  double mean = 0;
  for (double h : heat) mean += h / static_cast<double>(heat.size());
  if (mean > 0) peak_to_mean_.back() += *std::max_element(heat.begin(), heat.end()) / mean / ctx.model.moe_layers;
  std::vector<std::vector<int>> full_copies(static_cast<size_t>(ctx.model.experts));
  for (size_t e = 0; e < serving_[ml].holders.size(); ++e)
    if (serving_[ml].holders[e].size() > 1) full_copies[e] = serving_[ml].holders[e];
  common::hand_replicas(in, planner_, std::move(full_copies), ctx.hw, "moentwine-balancer");
}

int BalancerPolicy::window_kind(const Phase& p) {
  if (p.stream != kForeground) return 0;
  if (p.family == PhaseFamily::kAllReduce) return kLocalWindow;
  if (p.name == phase_names::kDispatch || p.name == phase_names::kCombine) return kGlobalWindow;
  return 0;
}

void BalancerPolicy::before_layer(PolicyContext& ctx, LayerSchedule& s) {
  // How long each phase lasted in the previous layer: the next window of that name is expected to last as long.
  if (ctx.previous && ctx.result)
    for (size_t i = 0; i < ctx.result->phases.size(); ++i)
      if (ctx.previous->phase(i) > 0) est_window_s_[ctx.result->phases[i].name] = ctx.previous->phase(i);
  if (paused_pending_) {
    add_paused(ctx, s);
    paused_pending_ = false;
    return;
  }
  if (opt_.migrate == Migration::kStaged && !moving_.empty() && !s.phases().empty()) {
    const int kind = window_kind(s.phases()[0]);
    if (kind) open_window(ctx, s, 0, kind == kGlobalWindow);
  }
}

void BalancerPolicy::after_phase(PolicyContext& ctx, LayerSchedule& s, uint64_t serial, int phase) {
  if (serial != ctx.schedule || s.phases()[static_cast<size_t>(phase)].stream != kForeground) return;
  last_phase_end_s_ = ctx.executor.now_s();
  if (opt_.migrate != Migration::kStaged) return;
  if (serial == window_schedule_ && phase == window_phase_) close_window(ctx);
  const int next = phase + 1;
  if (moving_.empty() || next >= static_cast<int>(s.phases().size())) return;
  const int kind = window_kind(s.phases()[static_cast<size_t>(next)]);
  if (kind) open_window(ctx, s, next, kind == kGlobalWindow);
}

void BalancerPolicy::open_window(PolicyContext& ctx, LayerSchedule& s, int phase, bool global) {
  const Topology& t = ctx.hw.topology;
  const double seg = opt_.segment_kib * 1024;
  const auto est = est_window_s_.find(s.phases()[static_cast<size_t>(phase)].name);
  const double window_s = est == est_window_s_.end() ? 0.0 : est->second;
  const int ph = s.phase(kMigrationPhase, PhaseFamily::kOther, /*stream=*/1);
  const OpId start = phase > 0 ? phase_barrier(s, phase - 1) : -1;
  auto mine = [&](const Transfer& tr) { return tr.stage < tr.stages.size() && tr.stages[tr.stage].global == global; };
  std::vector<int> from_node(static_cast<size_t>(t.nodes()), 0);  // stages leaving each node in this window
  for (const Transfer& tr : moving_)
    if (mine(tr)) ++from_node[static_cast<size_t>(tr.stages[tr.stage].src)];
  for (Transfer& tr : moving_) {
    if (!mine(tr)) continue;
    const Stage& st = tr.stages[tr.stage];
    // As many segments as the window is expected to carry at the stage's link speed, shared with the
    // other stages leaving the same node (at least one); those that have not started when the window
    // closes are cancelled.
    const double fit =
        std::floor(window_s * stage_bytes_per_s(t, st) / seg / from_node[static_cast<size_t>(st.src)]) + 1;
    const int count = static_cast<int>(std::min(std::ceil(tr.stage_left / seg), fit));
    DepList deps;
    if (start >= 0) deps.push_back(start);
    if (tr.last.op >= 0 && !ctx.executor.tracker().done(tr.last))
      deps.push_back(tr.last.schedule == ctx.schedule ? tr.last.op : s.external(ph, tr.last));
    double left = tr.stage_left;
    for (int k = 0; k < count; ++k) {
      const double bytes = std::min(seg, left);
      left -= bytes;
      const OpId id =
          s.stream(ph, PhysicalNode(st.src), {PhysicalNode(st.dst)}, bytes, std::min(bytes, 256.0 * 1024), deps);
      deps = {id};
      tr.last = OpRef{ctx.schedule, id};
      tr.open.push_back(tr.last);
      ++segments_;
    }
  }
  window_schedule_ = ctx.schedule;
  window_phase_ = phase;
}

void BalancerPolicy::close_window(PolicyContext& ctx) {
  // Segments that started go on (a stage stops between segments); the others are cancelled and the
  // stage waits for the next window of its kind.
  const ScheduleTracker& tk = ctx.executor.tracker();
  const double W = expert_bytes_;
  for (Transfer& tr : moving_) {
    double sent = 0;
    for (const OpRef& r : tr.open) {
      if (tk.timings(r.schedule)[static_cast<size_t>(r.op)].start_s >= 0) {
        sent += tk.op(r).bytes;
      } else {
        ctx.executor.cancel(r);
        ++segments_cancelled_;
      }
    }
    if (tr.open.empty()) continue;
    tr.open.clear();
    const Stage& st = tr.stages[tr.stage];
    (st.global ? link_bytes_global_ : link_bytes_local_) += sent * st.hops;
    tr.stage_left -= sent;
    if (tr.stage_left <= 0.5) {
      ++tr.stage;
      tr.stage_left = tr.stage < tr.stages.size() ? W : 0.0;
    }
  }
  window_phase_ = -1;
}

void BalancerPolicy::add_paused(PolicyContext& ctx, LayerSchedule& s) {
  // Invasive: the step's first layer starts only when every copy has landed.
  std::vector<OpId> roots;
  for (OpId i = 0; i < s.size(); ++i)
    if (s.op(i).deps.empty() && s.op(i).kind != OpKind::kExternal) roots.push_back(i);
  const int ph = s.phase(kMigrationPhase, PhaseFamily::kOther);
  const double W = expert_bytes_;
  std::vector<Copy> round;
  for (const Transfer& tr : moving_) {
    round.push_back(Copy{tr.from, tr.to, tr.after});
    link_bytes_paused_ += W * ctx.hw.topology.hops(tr.from, tr.to);
    replica_bytes_ += W;
    ++landed_;
  }
  DepList copies;
  for (const CopyChain& c : copy_chains(round)) {
    DepList deps;
    if (c.wait_for >= 0) deps.push_back(copies[static_cast<size_t>(c.wait_for)]);
    std::vector<PhysicalNode> nodes;
    for (int v : c.nodes) nodes.push_back(PhysicalNode(v));
    copies.push_back(s.stream(ph, PhysicalNode(c.src), std::move(nodes), W, std::min(W, 256.0 * 1024), deps));
  }
  const OpId done = s.join(ph, copies);
  for (OpId r : roots) s.add_dep(r, done);
  moving_.clear();
}

void BalancerPolicy::before_backward_layer(PolicyContext& ctx, LayerSchedule& s, BackwardLayer& b) {
  const int ml = ctx.moe_layer();
  if (ml < 0 || static_cast<size_t>(ml) >= serving_.size()) return;
  const double grad = ctx.model.expert_bytes();  // gradients as wide as the weights
  for (std::vector<int> holders : serving_[static_cast<size_t>(ml)].holders) {
    if (holders.size() < 2) continue;
    std::sort(holders.begin(), holders.end());  // the ring in node order
    // Every holder takes part, one that served no token with a zero gradient (as the gate's copies).
    const DepList j =
        add_gradient_all_reduce(s, b.grad_sync_phase, holders, grad, ctx.model.weight_bytes, b.gradients_done, &ctx.hw);
    b.sync_joins->insert(b.sync_joins->end(), j.begin(), j.end());
    const double g = static_cast<double>(holders.size());
    gradient_bytes_ += 2 * (g - 1) * grad;
  }
}

void BalancerPolicy::add_optimizer_parameters(const PolicyContext& ctx, std::vector<double>& params) {
  for (const ExpertCopies& c : serving_)
    for (const std::vector<int>& holders : c.holders)
      for (size_t k = 1; k < holders.size(); ++k)
        if (static_cast<size_t>(holders[k]) < params.size())
          params[static_cast<size_t>(holders[k])] += ctx.model.expert_params();
}

nlohmann::json BalancerPolicy::stats() const {
  double mean = 0;
  for (double r : peak_to_mean_) mean += r / static_cast<double>(peak_to_mean_.size());
  return {{"options", to_json(opt_)},
          {"rounds", rounds_},
          {"replicas_planned", planned_},
          {"replicas_landed", landed_},
          {"replicas_evicted", evicted_},
          {"segments", segments_},
          {"segments_cancelled", segments_cancelled_},
          {"replica_bytes", replica_bytes_},
          {"gradient_bytes_sent", gradient_bytes_},
          {"migration_link_bytes_local", link_bytes_local_},
          {"migration_link_bytes_global", link_bytes_global_},
          {"migration_link_bytes_paused", link_bytes_paused_},
          {"drain_tail_us", drain_tail_s_ * 1e6},
          {"mean_peak_to_mean_load", mean},
          {"peak_to_mean_load_per_step", peak_to_mean_},
          {"replicas_serving_per_step", replicas_}};
}

void register_balancer(Registry& r) {
  PolicyFactory f;
  f.name = "moentwine-balancer";
  f.description =
      "MoEntwine NI-Balancer (Sec. V): replicas of hot experts in shadow slots, planned by Algorithm 1 or greedy "
      "EPLB, moved staged in cold windows (non-invasive), paused (invasive) or free";
  f.options = {{"planner", "topology", "'topology' (Algorithm 1) or 'greedy' (EPLB: hottest expert to coldest device)"},
               {"migrate", "staged",
                "'staged' (non-invasive: local stages in all-reduce windows, global stages in all-to-all windows), "
                "'paused' (invasive: the step waits for the copies) or 'free' (no traffic; reference)"},
               {"slots", "1", "shadow slots per device per MoE layer"},
               {"window", "8", "load predictor: mean of the last N steps"},
               {"ema", "0", "load predictor: EMA weight of the newest step instead (0 = sliding mean)"},
               {"alpha", "0.5", "trigger: re-plan when the sum over MoE layers of (max - mean) / mean load exceeds it"},
               {"beta", "0", "trigger: at least this many steps between re-plans (0 = non-invasive, every step)"},
               {"gain", "0.05",
                "a layer's replicas are re-planned only if the new plan cuts its predicted peak load by this share"},
               {"segment_kib", "1024", "staged: KiB a stage moves per op; a stage may stop between segments"}};
  f.create = [](const nlohmann::json& o, const std::string& where) {
    return std::make_unique<BalancerPolicy>(balancer_options(o, where));
  };
  f.resolve = [](const nlohmann::json& o, const std::string& where) { return to_json(balancer_options(o, where)); };
  r.add(std::move(f));
}

}  // namespace nmpsim::methods::moentwine
