// Dispatch planning, the seam through which a method decides how a MoE layer's tokens reach the
// nodes that compute their experts and how the partial results come back (DESIGN.md "Seams"):
// direct messages from home (DirectDispatch, the default), relays through hierarchy levels, domain
// copies, least-loaded replicas, token domains. plan_layer plans attention, gate and shared experts
// and calls the planner for the routed part. The base layers know no planner but the direct one;
// methods register theirs (Registry::add(PlannerFactory)) or hand them to a layer from a runtime
// policy (LayerInputs::planner). docs/EXTENDING.md shows how to write one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nmpsim/mapping/layer_plan.h"

namespace nmpsim::mapping {

/// What a planner sees of one MoE layer.
struct DispatchInputs {
  const ModelSpec& model;
  const RoutingTrace& trace;
  int trace_layer = 0;     ///< the trace's layer this MoE layer reads
  size_t first_token = 0;  ///< batch token i is trace token (first_token + i) mod trace.tokens()
  const Groups& groups;    ///< attention TP groups (the homes of the batch's tokens)
  /// The layer's shares on physical nodes: [expert][node].
  const std::vector<std::vector<double>>& rows;
  /// The top-k experts batch token i chose.
  const uint16_t* experts_of(int i) const {
    return trace.experts_of(trace_layer, (first_token + static_cast<size_t>(i)) % trace.tokens());
  }
  int top_k() const { return trace.top_k(); }
};

class DispatchPlanner {
 public:
  virtual ~DispatchPlanner() = default;
  /// Fills the routed part of `p` (whose homes, attention, gate and shared experts are planned):
  /// expert_work, routed_token_work, partials, reduce_flops, and the traffic: dispatch and combine
  /// (or stages). plan_layer then copies token_rings() into p.
  virtual void plan(const DispatchInputs& in, LayerPlan& p) const = 0;
  /// The node from which a token of home `home` travels to `node`, and where its partial result from
  /// `node` returns: the home itself unless the planner gathers tokens first (token domains).
  virtual int source(int home, int node) const {
    (void)node;
    return home;
  }
  /// Rings over which every node gathers its ring's tokens before the dispatch and reduce-scatters the
  /// partial results after the combine; null: none (the schedule then has no such phases).
  virtual const std::vector<std::vector<int>>* token_rings() const { return nullptr; }
};

/// The traffic of tokens going to the nodes that work on them: each token travels once to every node
/// that works on it (whatever the number of its experts there), from planner.source(home, node), and
/// the partial result comes back there to be summed.
class TokenTraffic {
 public:
  TokenTraffic(const DispatchPlanner& planner, LayerPlan& p, double token_bytes);
  /// Batch token i (home h) needs node v; a repeat for the same token and node adds nothing.
  void visit(int i, int h, int v);
  /// Sets reduce_flops: `hidden` additions per partial result summed.
  void finish(double hidden);

 private:
  const DispatchPlanner& planner_;
  LayerPlan& p_;
  double token_bytes_;
  std::vector<int> stamp_;  ///< per node: the last token that travelled to it
};

/// Today's dispatch: every node holding a share of a token's expert computes that share for every
/// token that chose the expert, streaming its weights once; tokens travel from their home.
class DirectDispatch : public DispatchPlanner {
 public:
  void plan(const DispatchInputs& in, LayerPlan& p) const override;

  /// Tokens routed to each expert by the batch's first `batch` tokens.
  static std::vector<double> tokens_per_expert(const DispatchInputs& in, int batch);
  /// expert_work of the static shares, for every expert some token chose and `skip(e)` is false.
  template <class Skip>
  static void add_static_work(const DispatchInputs& in, const std::vector<double>& tokens_of, LayerPlan& p,
                              Skip&& skip) {
    for (int e = 0; e < in.model.experts; ++e) {
      if (tokens_of[static_cast<size_t>(e)] == 0 || skip(e)) continue;  // an expert no token chose streams nothing
      for (int v = 0; v < p.nodes; ++v) {
        const double s = in.rows[static_cast<size_t>(e)][static_cast<size_t>(v)];
        if (s <= 0) continue;
        const double t = tokens_of[static_cast<size_t>(e)];
        p.expert_work[static_cast<size_t>(v)].push_back(
            ExpertWork{e, t, s, t * in.model.expert_flops_per_token() * s, in.model.expert_bytes() * s});
      }
    }
  }
};

/// The direct planner (stateless, shared).
const DispatchPlanner& direct_dispatch();

}  // namespace nmpsim::mapping
