#include "nmpsim/mapping/memory_model.h"

#include <algorithm>
#include <cstdio>

#include "nmpsim/base/memory_budget.h"
#include "nmpsim/mapping/base_names.h"

namespace nmpsim::mapping {

namespace {
// Peak resident memory of one strategy's flow-fidelity run, by input size (docs/PERFORMANCE.md
// "Memory per input": the larger of the TP and EP coefficients).
constexpr double kFixed = 16e6;                 // the program, presets, registries
constexpr double kReplay = 64e6;                // the session-replay recordings (bounded: noc.replay_sessions)
constexpr double kPerNode = 45e3;               // per-node schedules, queues and counters
constexpr double kPerNodePair = 16;             // node x node traffic plans of a layer
constexpr double kPerGroupMember = 1.4e3;       // ring collectives: transfers per node per group member
constexpr double kPerNodePairCrossed = 1.4e3;   // a layer's (home, worker) pairs: dispatch and combine ops
constexpr double kPerKeptToken = 8;             // every kept plan's home of each token
constexpr double kPerGradientRingStep = 4.2e3;  // training: gradient ring all-reduces, per member and step
constexpr double kPerExpertNode = 55;           // a layer's expert x node plan (shares, loads, bytes)
constexpr double kPerPlacementSlot = 21;        // placements and their plans: layers x experts x nodes
constexpr double kPerTraceId = 4;               // the trace and the strategies' profile of it, 2 bytes per id each
constexpr double kCycleFactor = 1.3;            // the SystemC model on top (measured 1.25x at 32x32)

std::string count(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}
}  // namespace

MemoryEstimate estimate_run_memory(const RunSize& s) {
  const double n = static_cast<double>(s.nodes), g = static_cast<double>(s.attn_group);
  const double b = static_cast<double>(s.batch), ex = static_cast<double>(s.experts);
  const double slots = static_cast<double>(s.moe_layers) * ex * n;
  const double sim = (s.cycle ? kCycleFactor * static_cast<double>(std::max(1LL, s.workers)) : 1.0);
  MemoryEstimate e;
  auto add = [&](double bytes, const std::string& what) { e.terms.push_back({what, bytes}); };
  add(kFixed + sim * kReplay, "the program and its session-replay recordings");
  add(sim * kPerNode * n, count(n) + " nodes (45 KB each)");
  const double kept = static_cast<double>(std::max(1LL, s.kept_layers));
  add(sim * kPerNodePair * n * n * kept, count(n) + " x " + count(n) + " node pairs (16 B each)" +
                                             (kept > 1 ? " of " + count(kept) + " layers kept for the backward" : ""));
  add(sim * kPerGroupMember * n * g, count(n) + " nodes x attention groups of " + count(g) + " (1.4 KB each)");
  // The dispatch and combine ops of a layer: one per (home, worker) node pair its tokens cross, at most
  // every node pair of each micro-batch, at most top-k x an expert's span per token (docs/PERFORMANCE.md
  // "Memory per input").
  const double span = s.expert_span > 0 ? std::min(n, static_cast<double>(s.expert_span)) : n;
  const double m = static_cast<double>(std::max(1LL, s.micro_batches));
  const double pairs = std::min(m * std::min(n, b) * n, static_cast<double>(std::max(1LL, s.top_k)) * span * b);
  add(sim * kPerNodePairCrossed * pairs * static_cast<double>(std::max(1LL, s.moe_chunks)) *
          (s.train && s.recompute ? 2 : 1),
      count(pairs) + " node pairs a layer's " + count(b) + " tokens cross (1.4 KB each)");
  add(sim * kPerKeptToken * b * kept, count(b) + " tokens x " + count(kept) + " kept layer plans (8 B each)");
  if (s.train) {
    // The gate's all-reduce over all nodes, and the attention shards' across the attention groups.
    const double groups = n / std::max(1.0, g);
    const double steps = n * (n - 1) + (groups >= 2 ? n * (groups - 1) : 0.0);
    add(sim * kPerGradientRingStep * steps, "gradient rings of " + count(n) + " nodes (4.2 KB per member and step)");
  }
  add(sim * kPerExpertNode * ex * n, count(ex) + " experts x " + count(n) + " nodes (55 B each)");
  add(kPerPlacementSlot * slots * static_cast<double>(std::max(1LL, s.strategies)),
      count(static_cast<double>(s.strategies)) + " placements of " + count(static_cast<double>(s.moe_layers)) +
          " layers x " + count(ex) + " experts x " + count(n) + " nodes (21 B each)");
  add(kPerTraceId * s.trace_ids, count(s.trace_ids) + " routing-trace expert ids (4 B each)");
  for (const MemoryTerm& t : e.terms) e.bytes += t.bytes;
  std::sort(e.terms.begin(), e.terms.end(), [](const MemoryTerm& x, const MemoryTerm& y) { return x.bytes > y.bytes; });
  return e;
}

void check_run_memory(const RunSize& s, const std::string& where) {
  const MemoryEstimate e = estimate_run_memory(s);
  const double runs = static_cast<double>(std::max(1LL, s.concurrent_runs));
  const double budget = static_cast<double>(base::memory_budget_bytes()) / runs;
  if (e.bytes <= budget) return;
  throw InputError(where + ": the run needs about " + base::bytes_text(e.bytes) + " of memory (" +
                   base::bytes_text(e.terms[0].bytes) + " for " + e.terms[0].what + "), more than its budget of " +
                   base::bytes_text(budget) + " (" + base::memory_budget_source() +
                   (runs > 1 ? ", shared by " + std::to_string(s.concurrent_runs) + " runs at once" : std::string()) +
                   "; docs/FORMATS.md \"Limits and what they cost\")");
}

}  // namespace nmpsim::mapping
