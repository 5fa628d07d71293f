#include "firmware/runtime.h"

#include <chrono>
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
    : sys_(sys), model_(model), trace_(trace), cfg_(cfg), groups_(mapping::make_groups(sys.topology(), cfg.attn_tp)) {}

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
  mapping::StrategyResult r;
  r.strategy = p.strategy;
  r.fidelity = "cycle";
  r.node_flops.assign(static_cast<size_t>(n), 0.0);
  r.node_expert_s.assign(static_cast<size_t>(n), 0.0);
  r.node_token_work.assign(static_cast<size_t>(n), 0.0);
  r.link_bytes.assign(static_cast<size_t>(n) * 4, 0.0);
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
    for (int l = 0; l < model_.layers(); ++l) {
      const LayerPlan plan = mapping::plan_layer(model_, physical, l, trace_,
                                                 cfg_.first_token + static_cast<size_t>(s) * cfg_.shape.batch,
                                                 groups_, cfg_.shape);
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
