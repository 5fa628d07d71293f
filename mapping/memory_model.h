// What a run costs in memory, from its input sizes, before any of it is built: the model behind the
// "needs about X GiB" refusals (docs/FORMATS.md "Limits and what they cost"). The coefficients are
// non-negative least-squares fits of peak resident memory measured on 61 flow-fidelity runs, the larger
// of the TP and EP fits per term (docs/PERFORMANCE.md "Memory per input"): it never estimated less than
// the measured peak (1.02x to 3.5x above 200 MB), so it refuses only what would not fit.
#pragma once

#include <string>
#include <vector>

namespace nmpsim::mapping {

struct RunSize {
  long long nodes = 0;            ///< N: mesh nodes
  long long attn_group = 0;       ///< G: nodes per attention tensor-parallel group
  long long batch = 0;            ///< B: tokens per step
  long long moe_layers = 0;       ///< L
  long long experts = 0;          ///< E
  long long strategies = 1;       ///< S: placements held at once
  long long kept_layers = 1;      ///< layers whose plans a step keeps (a training step's backward: all of them)
  long long top_k = 1;            ///< experts per token
  long long expert_span = 0;      ///< most nodes one expert is spread over (0: every node, as TP)
  long long micro_batches = 1;    ///< M: a step's micro-batches
  long long moe_chunks = 1;       ///< C: each MoE block's exchanges in this many chunks (C x the messages)
  bool train = false;             ///< a training step (gradient rings over all nodes)
  bool recompute = false;         ///< train: each layer's forward runs again before its backward
  double trace_ids = 0;           ///< layers x tokens x top-k of the routing trace
  bool cycle = false;             ///< cycle fidelity (SystemC model per worker)
  long long workers = 1;          ///< cycle fidelity: simulations at once, each its own process
  long long concurrent_runs = 1;  ///< runs like this one at once (a sweep's -j): each gets 1/N of the budget
};

struct MemoryTerm {
  std::string what;  ///< "2.0 GiB for 4096 nodes x attention groups of 4096 (1.4 KB each)"
  double bytes = 0;
};

struct MemoryEstimate {
  double bytes = 0;
  std::vector<MemoryTerm> terms;  ///< largest first
};

MemoryEstimate estimate_run_memory(const RunSize& s);

/// Throws InputError "<where>: the run needs about X (largest: <term>), more than the Y budget (<source>)"
/// when the estimate exceeds base::memory_budget_bytes().
void check_run_memory(const RunSize& s, const std::string& where);

}  // namespace nmpsim::mapping
