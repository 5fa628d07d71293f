// HybridEP at run time, as the runtime policy "hybridep" that HybridEP's placements carry: every
// node holds (resident) or fetches per layer (stream) the experts of its domain box, and tokens go
// by the same-offset all-to-all to the box that holds their expert (domains.h). In stream mode the
// domain's experts are all-gathered on background stream 1 from the layer's start, overlapped with
// attention, all-reduce and gate, and a node's experts wait for its box's gather; with sed "auto"
// the domain sizes are chosen per layer and step by the stream model (stream_model.h) on the
// batch's actual per-worker loads. In a training step the copies' gradients are reduced over the box
// in the backward. docs/MODEL.md "HybridEP".
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nmpsim/mapping/registry.h"
#include "nmpsim/mapping/runtime_policy.h"
#include "nmpsim/methods/common/hierarchy.h"
#include "nmpsim/methods/hybridep/domains.h"

namespace nmpsim::methods::hybridep {

/// How the copies' gradients return to their owners in a training step's backward (the paper does not say).
enum class GradReturn { kFull, kCompressed, kNone };
/// When a layer's domain experts are all-gathered.
enum class Prefetch {
  kGate,   ///< after the gate: the expert computation waits for the whole gather (no overlap)
  kLayer,  ///< from the layer's start, beside attention and gate (Eq. 7's overlap)
  kStep    ///< every layer's from the step's start, one layer after the other (the paper's Send/Recv queues)
};

struct HybridOptions {
  bool stream = false;   ///< false: resident (copies made at load); true: all-gather every layer
  std::vector<int> sed;  ///< per level; empty = auto (stream: per layer by the model)
  int virtual_levels = 0;
  double sr_keep = 0;        ///< stream: SR compression, share of residual elements sent (0 = off)
  double sr_ratio = 0;       ///< stream: SR at this byte compression ratio, with the shared expert (0 = off)
  bool paper_model = false;  ///< stream auto: Eq. 8 as written (experts hidden), not with the copies' expert time
  int max_box = 0;           ///< stream auto: the largest box whose copies fit in memory (0 = any; set by the strategy)
  GradReturn grad_return = GradReturn::kFull;
  Prefetch prefetch = Prefetch::kLayer;
  bool choose_once = false;  ///< stream auto: the domains chosen once (first MoE layer of the first step) for the run
};
/// Parses the policy's options (docs/FORMATS.md); a one-line InputError naming `where` and the field.
HybridOptions hybrid_options(const nlohmann::json& j, const std::string& where);
nlohmann::json to_json(const HybridOptions& o);
/// The options' help (the strategy "hybridep" shows them too).
std::vector<mapping::OptionDoc> policy_option_docs();

class HybridPolicy : public mapping::RuntimePolicy {
 public:
  explicit HybridPolicy(HybridOptions o) : opt_(o) {}
  void before_plan(mapping::PolicyContext& ctx, mapping::LayerInputs& in) override;
  void before_layer(mapping::PolicyContext& ctx, mapping::LayerSchedule& s) override;
  /// Training: the copies' gradients go back to their owners (stream: a reduce-scatter over the box)
  /// or are all-reduced over the box (resident: every holder updates its copies).
  void before_backward_layer(mapping::PolicyContext& ctx, mapping::LayerSchedule& s,
                             mapping::BackwardLayer& b) override;
  void add_optimizer_parameters(const mapping::PolicyContext& ctx, std::vector<double>& params) override;
  /// SR: every owner encodes its pieces for the next step after its update (SREncode, fused with AdamW).
  void before_optimizer(mapping::PolicyContext& ctx, mapping::LayerSchedule& s,
                        const std::vector<mapping::OpId>& adam) override;
  nlohmann::json stats() const override;
  bool trains() const override { return true; }

 private:
  void init(const mapping::PolicyContext& ctx);
  const DomainLayout& layout(const std::vector<int>& sed);
  /// The stream model's choice for this layer and batch (max over workers of Eq. 8).
  const DomainLayout& choose(const mapping::PolicyContext& ctx);
  double gathered_bytes(int node) const;  ///< bytes node's own pieces weigh on the wire (SR applied)
  double returned_bytes(int node) const;  ///< bytes of the gradients each copy of node's pieces sends back
  /// Lat_PE of worker v before any layer was measured: the roofline of its attention and gate.
  double pre_expert_roofline(const mapping::LayerPlan& plan, int v) const;
  /// The all-gathers of `d`: every node multicasts its pieces round its box; a node's stream waits for
  /// `after[node]` (if any). Returns the join of each box (by its first member) and each node's stream.
  std::map<int, mapping::OpId> gather(mapping::LayerSchedule& s, int ph, const DomainLayout& d,
                                      const std::map<int, mapping::DepList>& after,
                                      std::vector<mapping::OpId>* streams);
  /// Makes the experts of schedule s wait for their box's gather (`join` by the box's first member),
  /// with the SR decode of the copies between them when SR is on.
  void experts_wait(mapping::LayerSchedule& s, const DomainLayout& d, const std::map<int, mapping::OpId>& join);
  void prefetch_step(const mapping::PolicyContext& ctx, mapping::LayerSchedule& s);
  bool shared_expert() const { return opt_.sr_ratio > 0; }
  std::vector<double> ring_bytes_per_s(const DomainLayout& d) const;

  HybridOptions opt_;
  bool ready_ = false;
  common::Hierarchy h_;
  Levels lv_;
  double alpha_s_ = 0, bytes_per_s_ = 1;  ///< the fitted flat all-to-all: its alpha, one worker's bandwidth B
  std::map<std::vector<int>, std::vector<double>>
      ag_bytes_per_s_;  ///< per layout, per node: its box ring's slowest link
  double weight_bytes_ = 2;
  mapping::Topology topology_;
  double peak_flops_ = 1, memory_bytes_per_s_ = 1;
  std::vector<double> native_bytes_;  ///< per physical node: its expert pieces' bytes per MoE layer
  std::map<std::vector<int>, DomainLayout> layouts_;
  const DomainLayout* current_ = nullptr;
  const DomainLayout* once_ = nullptr;               ///< choose_once: the run's layout
  std::vector<std::map<int, mapping::OpRef>> step_;  ///< prefetch step: [moe layer][box] its gather's join
  double expert_bytes_ = 0;                          ///< one expert's weight bytes (the shared expert's)
  std::vector<const DomainLayout*> by_layer_;        ///< [moe layer]: the step's layout (for its backward)
  std::optional<ServedDispatch> planner_;            ///< the current layer's
  double pre_expert_s_ = 0;                          ///< Lat_PE: attention + all-reduce + gate of the previous layer
  // Statistics.
  std::map<std::vector<int>, int> chosen_;
  double ag_bytes_ = 0, predicted_s_ = 0, pre_expert_sum_s_ = 0, data_sum_ = 0, grad_bytes_ = 0;
  double shared_bytes_ = 0, encode_bytes_ = 0, decode_bytes_ = 0;
  int layers_seen_ = 0, choices_ = 0;
};

/// Registers the policy "hybridep".
void register_policy(mapping::Registry& r);

}  // namespace nmpsim::methods::hybridep
