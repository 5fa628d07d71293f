// The HD-MoE authors' accounting (data/reference/hdmoe/ACCOUNTING.md): how their released code turns
// a placement into the numbers of their result tables. A validation mode, not a model of our hardware:
// it charges FLOPs only (one matrix per expert), TP's exchange analytically at 4 bytes per element,
// every other placement's dispatch by a store-and-forward mesh simulation at 1 byte per element with
// group aggregators, and a constant per-layer term C. Plain C++.
//
//   latency = sum over MoE layers of (t_comp + 2 t_comm) + layers * C
//   t_comp  = max_d sum_i P[i,d] f_i B 2 h IS / F
//   t_comm  = TP: 4 B h / W;  otherwise the makespan of the aggregation messages (below)
//   C       = (4 B h^2 + 2 B L h) / (D F) + (2 B h L + 4 h (B + h) + 2 E IS h + B (IS + h)) / (D 625e9)
#pragma once

#include <vector>

#include "nmpsim/base/rng.h"
#include "nmpsim/flow/flow_model.h"
#include "nmpsim/mapping/moe_model.h"
#include "nmpsim/mapping/placement.h"
#include "nmpsim/mapping/registry.h"
#include "nmpsim/mapping/trace.h"

namespace nmpsim::methods::hdmoe {

/// The authors' assumptions, each of which can be switched to nmpsim's hardware model one at a time to
/// measure how much of their gain it carries (docs/MODEL.md "The authors' accounting: toggles").
/// Defaults are theirs.
struct AuthorsToggles {
  int matrices = 1;             ///< FLOPs of this many h x IS matrices per token and expert (SwiGLU: 3)
  double tp_bytes = 4;          ///< bytes per element of TP's exchange (theirs 4; FP16 activations 2)
  int sampled_batches = 0;      ///< 0: expected loads of the whole trace; N: the mean over N batches of the trace
  bool shared_experts = false;  ///< the model's shared experts' FLOPs (and weights), split evenly over the nodes
  /// Per node max(FLOPs / F, weight bytes of its shares / DRAM bandwidth) with the model's matrices and
  /// weight bytes, and no expert weights in C (theirs: FLOPs only, and two matrices of every expert read
  /// at 625 GB/s split perfectly over the nodes inside C).
  bool dram = false;
};

struct AuthorsConfig {
  int batch = 16;             ///< B
  int context = 1024;         ///< L
  int eval_intermediate = 0;  ///< IS when evaluating (0: the model's; their Qwen2 runs use 18944)
  bool random_mesh = false;   ///< a new random device-to-cell map per layer (their EP baseline)
  uint64_t seed = 1;          ///< aggregator choices and random meshes
  AuthorsToggles toggles;
};

/// f_{l,i} over the whole trace: (tokens choosing i + [l >= E]) / tokens (their old line adds one count
/// to every expert of layers l >= E).
std::vector<double> authors_frequencies(const mapping::RoutingTrace& t, int layer, int experts);

/// Distinct sorted expert sets of the tokens of one layer, with their frequencies (share of tokens).
struct AuthorsGroups {
  std::vector<std::vector<int>> experts;
  std::vector<double> phi;
};
AuthorsGroups authors_groups(const mapping::RoutingTrace& t, int layer);
/// The same over the tokens [first, first + count).
AuthorsGroups authors_groups(const mapping::RoutingTrace& t, int layer, size_t first, size_t count);

/// The constant per-layer term C, seconds (D nodes, F FLOP/s per node); without the read of the
/// experts' weights when `expert_weights` is false.
double authors_constant_s(const mapping::ModelSpec& m, int intermediate, int batch, int context, int nodes,
                          double flops, bool expert_weights = true);
/// t_comp of one layer: P as [expert * nodes + node].
double authors_compute_s(const std::vector<double>& P, int nodes, const std::vector<double>& f, int batch, int hidden,
                         int intermediate, double flops);

/// Whether layer shares P ([expert * nodes + node]) are TP's (every share 1/D): charged analytically.
bool authors_tp_shaped(const std::vector<double>& P, int nodes);

/// One message of the mesh simulation: whole bytes from cell src to cell dst.
struct AuthorsMessage {
  int src = 0, dst = 0;
  double bytes = 0;
};
/// Store-and-forward makespan over XY routes: each message, in order, crosses its hops one after
/// another; each hop takes bytes / W on its directed link, placed first-fit into the link's idle time
/// from the moment the previous hop ends, split around earlier reservations. No hop latency.
double store_and_forward_makespan(const mapping::Topology& t, const std::vector<AuthorsMessage>& msgs,
                                  double link_bytes_per_s);

/// The aggregation messages of one layer: for each group g, every device holding a part of an expert
/// of g sends phi_g B h bytes to the aggregator, the lowest-indexed device holding a randomly chosen
/// member of g. `cell` maps devices to mesh cells.
std::vector<AuthorsMessage> authors_messages(const std::vector<double>& P, int nodes, const AuthorsGroups& g, int batch,
                                             int hidden, const std::vector<int>& cell, base::Rng& rng);

struct AuthorsLayer {
  double compute_s = 0, comm_s = 0;  ///< t_comp and t_comm (one direction)
  bool analytic_tp = false;          ///< TP-shaped layer: charged analytically
};
struct AuthorsResult {
  std::vector<AuthorsLayer> layers;
  double constant_s = 0;  ///< C per layer
  double compute_s() const;
  double comm_s() const;  ///< sum of 2 t_comm
  double latency_s() const { return compute_s() + comm_s() + constant_s * static_cast<double>(layers.size()); }
};
/// The authors' accounting of a placement, with frequencies and groups from `trace` (the whole trace).
AuthorsResult authors_account(const mapping::Placement& p, const mapping::ModelSpec& m,
                              const mapping::AnalyticalHardware& hw, const mapping::RoutingTrace& trace,
                              const AuthorsConfig& cfg);

/// Registers "hdmoe-authors" (authors_registration.cpp).
void register_authors_accounting(mapping::Registry& r);

}  // namespace nmpsim::methods::hdmoe
