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

struct HybridOptions {
  bool stream = false;   ///< false: resident (copies made at load); true: all-gather every layer
  std::vector<int> sed;  ///< per level; empty = auto (stream: per layer by the model)
  int virtual_levels = 0;
  double sr_keep = 0;        ///< stream: SR compression, share of residual elements sent (0 = off)
  bool paper_model = false;  ///< stream auto: Eq. 8 as written (experts hidden), not with the copies' expert time
  int max_box = 0;           ///< stream auto: the largest box whose copies fit in memory (0 = any; set by the strategy)
};
HybridOptions hybrid_options(const nlohmann::json& j, const std::string& where);
nlohmann::json to_json(const HybridOptions& o);

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
  nlohmann::json stats() const override;
  bool trains() const override { return true; }

 private:
  void init(const mapping::PolicyContext& ctx);
  const DomainLayout& layout(const std::vector<int>& sed);
  /// The stream model's choice for this layer and batch (max over workers of Eq. 8).
  const DomainLayout& choose(const mapping::PolicyContext& ctx);
  double gathered_bytes(int node) const;  ///< bytes node's own pieces weigh on the wire (SR applied)
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
  std::vector<const DomainLayout*> by_layer_;  ///< [moe layer]: the step's layout (for its backward)
  std::optional<ServedDispatch> planner_;      ///< the current layer's
  double pre_expert_s_ = 0;                    ///< Lat_PE: attention + all-reduce + gate of the previous layer
  // Statistics.
  std::map<std::vector<int>, int> chosen_;
  double ag_bytes_ = 0, predicted_s_ = 0, pre_expert_sum_s_ = 0, data_sum_ = 0, grad_bytes_ = 0;
  int layers_seen_ = 0;
};

/// Registers the policy "hybridep".
void register_policy(mapping::Registry& r);

}  // namespace nmpsim::methods::hybridep
