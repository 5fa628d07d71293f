#include "nmpsim/mapping/layer_runner.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <stdexcept>

#include "nmpsim/mapping/moe_layer.h"
#include "nmpsim/mapping/train_step.h"

namespace nmpsim::mapping {

namespace {

/// The layer build of the run's hardware with the run's MoE chunks (--moe-chunks).
LayerBuild run_build(const RunInputs& in) {
  LayerBuild b = layer_build(in.hw);
  b.moe_chunks = std::max(1, in.cfg.moe_chunks);
  return b;
}

/// Seconds each node spends in the node-balance phases of a layer (from the phase's start to its last
/// compute op on the node), added to `node_s`; returns the imbalance (slowest minus mean over busy nodes).
double node_balance(const LayerSchedule& s, const std::vector<OpTiming>& t, std::vector<double>& node_s) {
  double imbalance = 0;
  for (size_t p = 0; p < s.phases().size(); ++p) {
    if (!s.phases()[p].node_balance) continue;
    std::map<int, std::vector<OpId>> by_micro_batch;  // each micro-batch's part of the phase on its own
    for (OpId i : s.ops_of(static_cast<int>(p))) by_micro_batch[s.op(i).micro_batch].push_back(i);
    for (const auto& [mb, ops] : by_micro_batch) {
      double start = std::numeric_limits<double>::infinity();
      for (OpId i : ops) start = std::min(start, t[static_cast<size_t>(i)].ready_s);
      std::vector<double> busy(node_s.size(), 0.0);
      for (OpId i : ops) {
        const Op& o = s.op(i);
        if (o.kind != OpKind::kCompute) continue;
        double& b = busy[static_cast<size_t>(o.node.value())];
        b = std::max(b, t[static_cast<size_t>(i)].end_s - start);
      }
      double sum = 0, slowest = 0;
      int nodes = 0;
      for (size_t v = 0; v < busy.size(); ++v) {
        if (busy[v] <= 0) continue;
        node_s[v] += busy[v];
        sum += busy[v];
        slowest = std::max(slowest, busy[v]);
        ++nodes;
      }
      // max - mean >= 0 exactly; clamp the rounding noise of the subtraction.
      if (nodes) imbalance += std::max(0.0, slowest - sum / nodes);
    }
  }
  return imbalance;
}

/// The payload of a transfer or stream on every link of its XY path(s).
void add_link_payload(const Topology& t, const LayerSchedule& s, const Op& o, std::vector<double>& links) {
  auto add = [&](int a, int b) {
    walk_xy(t, a, b, [&](int from, int, LinkDir dir) { links[static_cast<size_t>(from) * 4 + dir] += o.bytes; });
  };
  if (o.kind == OpKind::kTransfer) add(o.node.value(), o.peer.value());
  if (o.kind != OpKind::kStream) return;
  int at = o.node.value();
  for (PhysicalNode v : s.chains()[static_cast<size_t>(o.chain)]) {
    add(at, v.value());
    at = v.value();
  }
}

/// The measure of the union of the [start, end] of the foreground communication ops (transfers and
/// streams of phases of family allreduce or moe_comm) that ran: from their issue to their delivery.
/// Reductions are not counted (they are compute); background streams neither (they may outlive the
/// layer, and are hidden by construction).
double comm_busy(const ScheduleTracker& tr, uint64_t serial) {
  const LayerSchedule& s = tr.schedule(serial);
  const std::vector<OpTiming>& t = tr.timings(serial);
  std::vector<std::pair<double, double>> spans;
  for (OpId i = 0; i < s.size(); ++i) {
    const Op& o = s.op(i);
    const PhaseFamily f = s.phases()[static_cast<size_t>(o.phase)].family;
    const OpTiming& ot = t[static_cast<size_t>(i)];
    if ((f == PhaseFamily::kAllReduce || f == PhaseFamily::kMoeComm) &&
        (o.kind == OpKind::kTransfer || o.kind == OpKind::kStream) && o.stream == kForeground && ot.start_s >= 0 &&
        ot.end_s > ot.start_s)
      spans.emplace_back(ot.start_s, ot.end_s);
  }
  std::sort(spans.begin(), spans.end());
  double busy = 0, from = 0, to = -1;
  for (const auto& [a, b] : spans) {
    if (a > to) {
      if (to > from) busy += to - from;
      from = a;
      to = b;
    } else {
      to = std::max(to, b);
    }
  }
  if (to > from) busy += to - from;
  return busy;
}

/// Schedules whose timeline events wait for the end of their step: (serial, index in the timeline).
using TimelineWaiting = std::vector<std::pair<uint64_t, int>>;

/// Records executed schedule `serial` as the step's next entry. When RunConfig::timeline covers it
/// (index `index`), the tracker keeps it for the step's end (flush_timeline): its background ops (a
/// training step's gradient synchronisation, a pre-broadcast) may still be running, and the timeline
/// shows an op once it has ended.
void record_executed(Executor& ex, const RunInputs& in, StrategyResult& r, uint64_t serial, int step, int index,
                     std::vector<LayerRecord>& layers, TimelineWaiting& waiting) {
  layers.push_back(record_layer(r, ex.tracker(), serial, r.node_expert_s, &in.hw.topology));
  if (!in.cfg.timeline.covers(step, index)) return;
  waiting.emplace_back(serial, index);
  ex.tracker().hold(serial);
}

/// After the step's background work has drained: the timeline events of the step's covered schedules.
void flush_timeline(Executor& ex, StrategyResult& r, double step_start_s, TimelineWaiting& waiting) {
  append_step_events(r.timeline, ex.tracker(), waiting, step_start_s);
  for (const auto& [serial, index] : waiting) ex.tracker().let_go(serial);
  waiting.clear();
}

/// A training step's backward of every layer (the last first, each with its gradient synchronisation
/// in the background) and its optimizer step, after the forward of `plans` ([layer][micro-batch]);
/// their records are appended to `layers` (the backward of layer l at index 2L - 1 - l, the optimizer
/// at 2L). docs/MODEL.md "Training step".
void run_backward(Executor& ex, const RunInputs& in, StrategyResult& r, PolicyContext& ctx, PolicyList& policies,
                  const std::vector<std::vector<LayerPlan>>& plans, int step, std::vector<LayerRecord>& layers,
                  TimelineWaiting& waiting, const std::function<void(int, int)>& on_layer) {
  const int L = static_cast<int>(plans.size());
  BackwardBuild t;
  t.recompute = in.cfg.shape.recompute;
  const Topology& topo = in.hw.topology;
  t.all_nodes_ring = ring_order(topo, 0, 0, topo.width, topo.height);
  std::vector<OpRef> syncs;
  // The policies see each schedule as theirs (ctx.layer, ctx.schedule) before it runs, as in the
  // forward, so that their after_phase hooks never act on a stale context.
  const auto run = [&](const std::shared_ptr<LayerSchedule>& sched, int index) {
    const uint64_t serial = ex.execute(sched);
    if (serial != ctx.schedule) throw std::logic_error("layer runner: schedule numbering out of step");
    record_executed(ex, in, r, serial, step, index, layers, waiting);
    if (on_layer) on_layer(step, index);
    return serial;
  };
  const auto enter = [&](int layer) {  // the next schedule is this layer's (L: the optimizer's)
    ctx.layer = layer;
    ctx.schedule = ex.tracker().next_serial();
    ctx.layer_start_s = ex.now_s();
    ctx.previous = &layers.back();  // the schedule that ran last (reserved: the pointer stays valid)
  };
  for (int l = L - 1; l >= 0; --l) {
    std::vector<OpId> joins;
    BackwardLayer b;
    auto sched = std::make_shared<LayerSchedule>(build_moe_layer_backward(
        in.model, plans[static_cast<size_t>(l)], ctx.groups, run_build(in), t, &joins, &b.gradients_done));
    enter(l);
    b.grad_sync_phase = sched->phase(train_phases::kGradSync, PhaseFamily::kAllReduce, 1);
    b.sync_joins = &joins;
    for (auto& named : policies) named.second->before_backward_layer(ctx, *sched, b);
    const uint64_t serial = run(sched, 2 * L - 1 - l);
    for (OpId j : joins) syncs.push_back(OpRef{serial, j});
  }
  std::vector<double> params = node_parameters(in.model, ctx.shares, ctx.groups);
  for (auto& named : policies) named.second->add_optimizer_parameters(ctx, params);
  std::vector<OpId> adam;
  auto sched = std::make_shared<LayerSchedule>(build_optimizer_step(in.model, params, syncs, &adam));
  enter(L);
  for (auto& named : policies) named.second->before_optimizer(ctx, *sched, adam);
  run(sched, 2 * L);
}

/// Refuses policies the run's shape does not allow: in a training step those that do not train, with
/// several micro-batches any (they act on one chain of phases per layer).
void check_policies(const PolicyList& policies, const RunConfig& cfg, const std::string& placement) {
  const bool train = cfg.shape.kind == StepKind::kTrain;
  for (const auto& named : policies)
    if (train && !named.second->trains())
      throw InputError("phase train (--phase): runtime policy " + named.first +
                       " cannot run in a training step (placement " + placement +
                       "): " + named.second->why_not_trains());
  if (cfg.micro_batches > 1 && !policies.empty())
    throw InputError("micro_batches (--micro-batches): " + std::to_string(cfg.micro_batches) + ": runtime policy " +
                     policies.front().first +
                     " acts on one chain of phases per layer; run it with one micro-batch (placement " + placement +
                     ")");
}

}  // namespace

LayerRecord record_layer(StrategyResult& r, const ScheduleTracker& tr, uint64_t serial, std::vector<double>& node_s,
                         const Topology* topology) {
  const LayerSchedule& s = tr.schedule(serial);
  const std::vector<OpTiming>& t = tr.timings(serial);
  std::vector<int> to_result(s.phases().size());
  for (size_t p = 0; p < to_result.size(); ++p) to_result[p] = r.phase_index(s.phases()[p]);
  LayerRecord rec;
  rec.phase_s.assign(r.phases.size(), 0.0);
  // The critical path, walked back from the foreground op that ended last.
  OpId cur = -1;
  for (OpId i = 0; i < s.size(); ++i)
    if (s.op(i).stream == kForeground &&
        (cur < 0 || t[static_cast<size_t>(i)].end_s >= t[static_cast<size_t>(cur)].end_s))
      cur = i;
  while (cur >= 0) {
    const Op& o = s.op(cur);
    const OpTiming& ot = t[static_cast<size_t>(cur)];
    rec.phase_s[static_cast<size_t>(to_result[static_cast<size_t>(o.phase)])] += ot.end_s - ot.ready_s;
    OpId next = -1;
    for (OpId d : o.deps)
      if (next < 0 || t[static_cast<size_t>(d)].end_s > t[static_cast<size_t>(next)].end_s) next = d;
    cur = next;
  }
  rec.expert_imbalance_s = node_balance(s, t, node_s);
  rec.comm_busy_s = comm_busy(tr, serial);
  if (topology && r.family_link_bytes.empty())
    r.family_link_bytes.assign(kNumPhaseFamilies, std::vector<double>(static_cast<size_t>(topology->nodes()) * 4, 0.0));
  for (OpId i = 0; i < s.size(); ++i) {
    const Op& o = s.op(i);
    if (tr.was_cancelled(OpRef{serial, i})) continue;
    double bytes = 0;
    if (o.kind == OpKind::kTransfer) bytes = o.bytes;
    if (o.kind == OpKind::kStream)
      bytes = o.bytes * static_cast<double>(s.chains()[static_cast<size_t>(o.chain)].size());
    r.phase_bytes[static_cast<size_t>(to_result[static_cast<size_t>(o.phase)])] += bytes;
    if (topology && bytes > 0)
      add_link_payload(*topology, s, o, r.family_link_bytes[static_cast<size_t>(s.phases()[o.phase].family)]);
  }
  return rec;
}

StrategyResult run_placement(Executor& ex, const RunInputs& in, const Placement& p, PolicyList& policies,
                             const std::function<void(int, int)>& on_layer) {
  const auto wall0 = std::chrono::steady_clock::now();
  const ModelSpec& m = in.model;
  const int n = in.hw.topology.nodes();
  const Groups groups = groups_for(p, in.hw.topology, in.cfg.attn_tp);
  const auto shares = physical_shares(p);
  StrategyResult r(p.strategy, ex.fidelity(), n);
  const std::vector<double> links0 = ex.link_bytes(), flops0 = ex.node_flops(), dram0 = ex.node_dram_bytes();
  PolicyContext ctx{m, in.trace, in.hw, in.cfg, groups, shares, ex};
  ctx.result = &r;
  ctx.planner = in.planner ? in.planner : &direct_dispatch();
  ex.tracker().set_phase_done([&](uint64_t serial, int phase, double) {
    LayerSchedule& s = ex.tracker().schedule(serial);
    for (auto& named : policies) named.second->after_phase(ctx, s, serial, phase);
  });
  size_t first_token = in.cfg.first_token;
  const bool train = in.cfg.shape.kind == StepKind::kTrain;
  check_policies(policies, in.cfg, p.strategy);
  for (int step = 0; step < in.cfg.steps; ++step) {
    std::vector<LayerRecord> layers;
    layers.reserve(static_cast<size_t>(train ? 2 * m.layers() + 1 : m.layers()));
    const StepTokens tokens = in.cfg.shape.step(step);
    const std::vector<StepTokens> micro =
        in.cfg.micro_batches > 1 ? split_micro_batches(tokens, in.cfg.micro_batches) : std::vector<StepTokens>{tokens};
    ctx.step = step;
    ctx.first_token = first_token;
    const double step_start_s = ex.now_s();
    ctx.tokens = tokens.tokens();
    first_token += static_cast<size_t>(tokens.tokens());
    ctx.previous = nullptr;
    for (auto& named : policies) named.second->on_step_start(ctx);
    std::vector<std::vector<LayerPlan>> kept;  // a training step's plans, for its backward
    TimelineWaiting waiting;
    for (int l = 0; l < m.layers(); ++l) {
      ctx.layer = l;
      ctx.layer_start_s = ex.now_s();
      ctx.previous = layers.empty() ? nullptr : &layers.back();
      LayerInputs li;
      li.planner = ctx.planner;
      for (auto& named : policies) named.second->before_plan(ctx, li);
      // Each micro-batch planned over its own trace tokens (one micro-batch: the whole step).
      std::vector<LayerPlan> plans;
      size_t first = ctx.first_token;
      for (const StepTokens& mb : micro) {
        plans.push_back(
            plan_layer(m, shares, l, in.trace, first, groups, mb, li.planner, li.rows.empty() ? nullptr : &li.rows));
        first += static_cast<size_t>(mb.tokens());
      }
      auto sched = std::make_shared<LayerSchedule>(build_moe_layer(m, plans, groups, run_build(in)));
      ctx.schedule = ex.tracker().next_serial();
      for (auto& named : policies) named.second->before_layer(ctx, *sched);
      const uint64_t serial = ex.execute(sched);
      if (serial != ctx.schedule) throw std::logic_error("layer runner: schedule numbering out of step");
      record_executed(ex, in, r, serial, step, l, layers, waiting);
      for (const LayerPlan& plan : plans)
        for (int v = 0; v < n; ++v)
          r.node_token_work[static_cast<size_t>(v)] += plan.routed_token_work[static_cast<size_t>(v)];
      if (on_layer) on_layer(step, l);
      if (train) kept.push_back(std::move(plans));
    }
    if (train) run_backward(ex, in, r, ctx, policies, kept, step, layers, waiting, on_layer);
    r.steps.push_back(std::move(layers));
    ex.drain();  // background work still running at the end of a step finishes before the next one
    flush_timeline(ex, r, step_start_s, waiting);
  }
  const std::vector<double> links1 = ex.link_bytes(), flops1 = ex.node_flops(), dram1 = ex.node_dram_bytes();
  r.node_dram_bytes.assign(dram1.size(), 0.0);
  for (size_t v = 0; v < dram1.size(); ++v) r.node_dram_bytes[v] = dram1[v] - (v < dram0.size() ? dram0[v] : 0.0);
  for (size_t i = 0; i < links1.size(); ++i) r.link_bytes[i] = links1[i] - links0[i];
  for (size_t v = 0; v < flops1.size(); ++v) r.node_flops[v] = flops1[v] - flops0[v];
  for (auto& named : policies) r.policies[named.first] = named.second->stats();
  ex.tracker().set_phase_done(nullptr);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

}  // namespace nmpsim::mapping
