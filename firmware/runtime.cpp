#include "firmware/runtime.h"

#include "mapping/hdmoe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace nmpsim::firmware {

using mapping::LayerPlan;

mapping::AnalyticalHardware to_analytical(const hw::HardwareSpec& spec) {
  mapping::AnalyticalHardware a;
  a.topology = spec.topology;
  a.peak_flops = spec.compute.peak_flops;
  a.startup_s = spec.compute.startup_ns * 1e-9;
  a.memory_bytes_per_s = spec.memory.streaming_bytes_per_s();
  a.memory_first_access_s = (spec.memory.t_rcd_ns + spec.memory.t_cl_ns) * 1e-9;
  a.element_bytes = spec.compute.element_bytes;
  a.clock_hz = spec.noc.clock_ghz * 1e9;
  a.flit_bytes = spec.flit_bytes();
  a.router_delay_cycles = spec.noc.router_delay_cycles;
  return a;
}

Runtime::Runtime(hw::System& sys, const mapping::ModelSpec& model, const mapping::RoutingTrace& trace,
                 const mapping::RunConfig& cfg)
    : sys_(sys), model_(model), trace_(trace), cfg_(cfg), groups_(mapping::make_groups(sys.topology(), cfg.attn_tp)) {
  const mapping::Topology& t = sys.topology();
  broadcast_ring_ = mapping::ring_order(t, 0, 0, t.width, t.height);
}

void Runtime::prebroadcast(const std::vector<std::vector<std::vector<double>>>& physical, int moe_layer, int next,
                           size_t first_token, double window_s, mapping::StrategyResult& r) {
  const int n = sys_.nodes(), E = model_.experts, B = cfg_.shape.batch;
  const hw::HardwareSpec& spec = sys_.spec();
  const mapping::AnalyticalHardware ah = to_analytical(spec);
  // Predicted frequencies of the next layer (docs/MODEL.md "Dynamic pre-broadcast").
  std::vector<double> f(static_cast<size_t>(E), 0.0);
  if (cfg_.predict == "trace") {
    const auto truth = trace_.expert_counts(next % trace_.layers(), first_token, B);
    const auto prof = trace_.frequencies(next % trace_.layers());
    for (int e = 0; e < E; ++e)
      f[e] = cfg_.prediction_accuracy * truth[e] / B + (1 - cfg_.prediction_accuracy) * prof[e];
  } else {
    const auto prev = trace_.expert_counts(moe_layer % trace_.layers(), first_token, B);
    for (int e = 0; e < E; ++e) f[e] = double(prev[e]) / B;
  }
  const auto& rows = physical[next];
  auto unit = [&](int e) {
    if (f[e] * B < 0.5) return 0.0;
    return std::max(f[e] * B * model_.expert_flops_per_token() / ah.peak_flops, model_.expert_bytes() / ah.memory_bytes_per_s);
  };
  std::vector<double> load(static_cast<size_t>(n), 0.0);
  for (int e = 0; e < E; ++e)
    for (int v = 0; v < n; ++v) load[v] += rows[e][v] * unit(e);
  // How many fit in the window: Eq. 17 with alpha = one hop's latency, beta = 1 / link bandwidth.
  const double link = spec.topology.links[0].gbytes_per_s * 1e9;
  const double alpha = (spec.noc.router_delay_cycles + std::max(1.0, spec.topology.links[0].latency_ns * spec.noc.clock_ghz)) /
                       (spec.noc.clock_ghz * 1e9);
  const int scope = cfg_.prebroadcast_targets > 0 ? std::min(n, cfg_.prebroadcast_targets + 1) : n;
  const double beta = 1.0 / link, W = model_.expert_bytes();
  int k = 0;
  for (int c = 1; c <= cfg_.prebroadcast_experts; ++c)
    if (mapping::prebroadcast_lower_bound(alpha, beta, W, scope, c) <= window_s) k = c;
  if (k == 0) return;
  const double chunk = mapping::optimal_broadcast_chunk(alpha, beta, W, scope, k);  // Eq. 18
  std::vector<char> chosen(static_cast<size_t>(E), 0);
  for (int it = 0; it < k; ++it) {
    const int hot = static_cast<int>(std::max_element(load.begin(), load.end()) - load.begin());
    // Eq. 13: priority 2 P f IS / comp, on the most loaded node.
    int pick = -1;
    double best = 0;
    for (int e = 0; e < E; ++e) {
      const double prio = 2 * rows[e][hot] * f[e] * model_.intermediate / ah.peak_flops;
      if (!chosen[e] && prio > best) {
        best = prio;
        pick = e;
      }
    }
    if (pick < 0) break;
    chosen[pick] = 1;
    Pending pend{pick, {}, {}};
    // Targets: the least-loaded nodes (or all). Every holder of a share streams it along the ring
    // through the targets; afterwards every target holds the whole expert.
    std::vector<int> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return load[a] < load[b]; });
    std::vector<char> target(static_cast<size_t>(n), 0);
    for (int q = 0; q < (scope < n ? scope - 1 : n); ++q) target[order[q]] = 1;
    for (int h = 0; h < n; ++h) {
      const double share = rows[pick][h];
      if (share <= 0) continue;
      const uint64_t tag = next_tag();
      std::vector<int> chain;
      const auto pos = std::find(broadcast_ring_.begin(), broadcast_ring_.end(), h) - broadcast_ring_.begin();
      for (int s = 1; s < n; ++s) {
        const int v = broadcast_ring_[(pos + s) % n];
        if (target[v]) chain.push_back(v);
      }
      if (chain.empty()) continue;
      sys_.broadcasts().entries[tag] = pe::BroadcastRegistry::Entry{h, chain, false};
      pe::Command c = pe::Command::broadcast(chain, static_cast<uint64_t>(share * W), tag, "prebroadcast");
      c.chunk_bytes = static_cast<uint64_t>(std::clamp(chunk, 4096.0, share * W));
      sys_.pe(h).submit_background(c);
      pend.tags.push_back(tag);
      r.prebroadcast_bytes += share * W;
    }
    if (pend.tags.empty()) continue;
    for (int v = 0; v < n; ++v)
      if (target[v]) pend.holders.push_back(v);
    pending_[next].push_back(pend);
    ++r.prebroadcasts;
    // Assume it lands: its load spreads evenly over the targets for the next pick.
    const double spread = unit(pick) / pend.holders.size();
    for (int v = 0; v < n; ++v) load[v] += (target[v] ? spread : 0.0) - rows[pick][v] * unit(pick);
  }
}

double Runtime::phase(const char* name, const std::function<void()>& issue) {
  const sc_core::sc_time t0 = sc_core::sc_time_stamp();
  issue();
  if (sys_.all_idle()) return 0.0;  // nothing to do in this phase (e.g. no gate in a dense layer)
  sc_core::sc_start();
  if (sys_.mesh().network().stalled()) throw std::runtime_error(sys_.mesh().network().stall_report());
  if (!sys_.all_idle()) throw std::runtime_error(std::string("firmware: phase '") + name + "' never finished");
  return (sc_core::sc_time_stamp() - t0).to_seconds();
}

void Runtime::ring(const LayerPlan& plan, bool reduce, uint64_t tag) {
  for (const auto& members : groups_.ring) {
    const size_t g = members.size();
    if (g < 2) continue;
    for (size_t p = 0; p < g; ++p) {
      pe::ProcessingElement& pe = sys_.pe(members[p]);
      const int next = members[(p + 1) % g];
      for (size_t s = 0; s + 1 < g; ++s) {
        // All-gather forwards chunk (p - s); reduce-scatter sends its partial of chunk (p - s - 1) and
        // adds the received partial of chunk (p - s - 2) to its own.
        const size_t c = (p + 2 * g - s - (reduce ? 1 : 0)) % g;
        pe.submit(pe::Command::send(next, static_cast<uint64_t>(plan.home_bytes[members[c]]), tag + s));
        pe.submit(pe::Command::recv(tag + s, 1));
        if (reduce) pe.submit(pe::Command::reduce(static_cast<uint64_t>(plan.home_bytes[members[(p + 2 * g - s - 2) % g]])));
      }
      pe.submit(pe::Command::wait_sends());
    }
  }
}

void Runtime::exchange(const std::vector<double>& bytes, uint64_t tag, const std::vector<double>* reduce_flops) {
  const int n = sys_.nodes();
  for (int v = 0; v < n; ++v) {
    pe::ProcessingElement& pe = sys_.pe(v);
    int incoming = 0;
    for (int u = 0; u < n; ++u) {
      const double b = bytes[static_cast<size_t>(v) * n + u];
      if (b > 0) pe.submit(pe::Command::send(u, static_cast<uint64_t>(b), tag));
      if (bytes[static_cast<size_t>(u) * n + v] > 0) ++incoming;
    }
    if (incoming) pe.submit(pe::Command::recv(tag, incoming));
    if (reduce_flops && (*reduce_flops)[v] > 0)
      pe.submit(pe::Command::reduce(static_cast<uint64_t>((*reduce_flops)[v] * sys_.spec().compute.element_bytes)));
    pe.submit(pe::Command::wait_sends());
  }
}

mapping::StrategyResult Runtime::run(const mapping::Placement& p) {
  const auto wall0 = std::chrono::steady_clock::now();
  const int n = sys_.nodes();
  const auto physical = mapping::physical_shares(p);
  const noc::Network& net = sys_.mesh().network();
  const double flit_bytes = net.config().flit_bytes;
  mapping::StrategyResult r(p.strategy, "cycle", n);
  std::vector<double> flops0(static_cast<size_t>(n)), links0(static_cast<size_t>(n) * 4);
  for (int v = 0; v < n; ++v) {
    flops0[v] = sys_.pe(v).flops_done();
    for (int d = 0; d < 4; ++d) links0[static_cast<size_t>(v) * 4 + d] = net.router(v).flits_out(d) * flit_bytes;
  }
  // Weights of each node's experts live at distinct DRAM addresses (so row-buffer state is honest).
  std::vector<uint64_t> weight_cursor(static_cast<size_t>(n), 0);
  const uint64_t capacity = sys_.spec().memory.capacity_bytes;

  for (int s = 0; s < cfg_.steps; ++s) {
    std::vector<mapping::LayerRecord> layers;
    pending_.assign(static_cast<size_t>(model_.moe_layers), {});
    const size_t first = cfg_.first_token + static_cast<size_t>(s) * cfg_.shape.batch;
    for (int l = 0; l < model_.layers(); ++l) {
      const int ml = l - model_.dense_layers;
      // Experts whose pre-broadcast has landed get least-loaded dispatch in this layer.
      mapping::DynamicDispatch dyn;
      bool any_dynamic = false;
      if (ml >= 0 && !pending_[ml].empty()) {
        dyn.full_copies.assign(static_cast<size_t>(model_.experts), {});
        dyn.peak_flops = sys_.spec().compute.peak_flops;
        dyn.memory_bytes_per_s = sys_.spec().memory.streaming_bytes_per_s();
        for (const Pending& pd : pending_[ml]) {
          bool done = true;
          for (uint64_t tag : pd.tags) done = done && sys_.broadcasts().entries[tag].done;
          if (!done) continue;
          dyn.full_copies[pd.expert] = pd.holders;
          any_dynamic = true;
          ++r.prebroadcasts_used;
        }
      }
      const LayerPlan plan = mapping::plan_layer(model_, physical, l, trace_, first, groups_, cfg_.shape,
                                                 any_dynamic ? &dyn : nullptr);
      mapping::LayerRecord rec;
      rec.t.allgather_s = phase("all-gather", [&] { ring(plan, false, next_tag()); });
      rec.t.attention_s = phase("attention", [&] {
        for (int v = 0; v < n; ++v)
          if (plan.attn_flops[v] > 0)
            sys_.pe(v).submit(pe::Command::compute(plan.attn_flops[v], static_cast<uint64_t>(plan.attn_bytes[v]), "attn"));
      });
      rec.t.reduce_scatter_s = phase("reduce-scatter", [&] { ring(plan, true, next_tag()); });
      rec.t.gate_s = phase("gate", [&] {
        for (int v = 0; v < n; ++v)
          if (plan.gate_flops[v] > 0)
            sys_.pe(v).submit(pe::Command::compute(plan.gate_flops[v], static_cast<uint64_t>(plan.gate_bytes[v]), "gate"));
      });
      if (!plan.dense && model_.shared_experts > 0) {
        // Shared experts: tensor parallel inside the attention group, like a dense FFN.
        rec.t.shared_allgather_s = phase("shared all-gather", [&] { ring(plan, false, next_tag()); });
        rec.t.shared_s = phase("shared experts", [&] {
          for (int v = 0; v < n; ++v)
            if (plan.shared_flops[v] > 0)
              sys_.pe(v).submit(pe::Command::compute(plan.shared_flops[v], static_cast<uint64_t>(plan.shared_bytes[v]), "shared"));
        });
        rec.t.shared_reduce_scatter_s = phase("shared reduce-scatter", [&] { ring(plan, true, next_tag()); });
      }
      if (!plan.dense && cfg_.prebroadcast_experts > 0 && ml + 1 < model_.moe_layers) {
        // The window: the previous layer's latency (this layer's, for the first).
        const double window = layers.empty() ? rec.t.total_s() : layers.back().t.total_s();
        prebroadcast(physical, ml, ml + 1, first, window, r);
      }
      if (!plan.dense) {
        rec.t.dispatch_s = phase("dispatch", [&] { exchange(plan.dispatch, next_tag(), nullptr); });
        const sc_core::sc_time t_expert = sc_core::sc_time_stamp();
        rec.t.experts_s = phase("experts", [&] {
          for (int v = 0; v < n; ++v)
            for (const mapping::ExpertWork& w : plan.expert_work[v]) {
              const uint64_t bytes = static_cast<uint64_t>(w.bytes);
              if (weight_cursor[v] + bytes > capacity) weight_cursor[v] = 0;
              sys_.pe(v).submit(pe::Command::compute(w.flops, bytes, "expert", weight_cursor[v]));
              weight_cursor[v] += bytes;
            }
        });
        double sum = 0;
        int busy = 0;
        for (int v = 0; v < n; ++v) {
          const auto& log = sys_.pe(v).log();
          if (log.empty() || log.back().label != "expert") continue;
          const double node_s = (log.back().end - t_expert).to_seconds();
          r.node_expert_s[v] += node_s;
          sum += node_s;
          ++busy;
        }
        rec.expert_imbalance_s = busy ? rec.t.experts_s - sum / busy : 0.0;
        rec.t.combine_s = phase("combine", [&] { exchange(plan.combine, next_tag(), &plan.reduce_flops); });
        r.dispatch_bytes += plan.dispatch_total();
        r.combine_bytes += plan.combine_total();
        for (int v = 0; v < n; ++v) r.node_token_work[v] += plan.routed_token_work[v];
      }
      for (int v = 0; v < n; ++v) sys_.pe(v).clear_log();
      layers.push_back(rec);
      if (on_layer) on_layer(s, l);
    }
    r.steps.push_back(std::move(layers));
    // Let broadcasts still in flight finish before the next step (they are not counted in its time).
    while (!sys_.background_idle()) sc_core::sc_start();
  }
  for (int v = 0; v < n; ++v) {
    r.node_flops[v] = sys_.pe(v).flops_done() - flops0[v];
    for (int d = 0; d < 4; ++d)
      r.link_bytes[static_cast<size_t>(v) * 4 + d] =
          net.router(v).flits_out(d) * flit_bytes - links0[static_cast<size_t>(v) * 4 + d];
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

}  // namespace nmpsim::firmware
