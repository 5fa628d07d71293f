#include "nmpsim/methods/hdmoe/candidate_selection.h"

#include <algorithm>

#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/layer_runner.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

std::vector<size_t> held_out_offsets(size_t profile_tokens, int batch, int trained, int count) {
  std::vector<size_t> out;
  const size_t b = static_cast<size_t>(std::max(1, batch));
  const size_t last = profile_tokens > b ? profile_tokens - b : 0;  // the last batch that fits whole
  const double step = static_cast<double>(profile_tokens) / std::max(1, count);
  const double half = static_cast<double>(profile_tokens) / (2.0 * std::max(1, trained));
  for (int h = 0; h < count; ++h) {
    // Midway between two of the MILP's batches, then spread: offset h * step + half.
    const auto at = static_cast<size_t>(h * step + half);
    out.push_back(std::min(at, last));
  }
  return out;
}

std::vector<double> held_out_layer_seconds(const Placement& p, const ModelSpec& m, const AnalyticalHardware& hw,
                                           const RoutingTrace& profile, const HeldOut& h) {
  std::vector<double> s(static_cast<size_t>(m.moe_layers), 0.0);
  for (size_t first : h.first_tokens) {
    RunConfig cfg;
    cfg.shape = {h.batch, h.context};
    cfg.steps = 1;
    cfg.attn_tp = h.attn_tp;
    cfg.first_token = first;
    const StrategyResult r = flow::run_flow(hw, m, profile, p, cfg);
    const std::vector<LayerRecord>& layers = r.steps.at(0);
    for (int l = 0; l < m.moe_layers; ++l)
      s[static_cast<size_t>(l)] += layers.at(static_cast<size_t>(m.dense_layers + l)).total_s();
  }
  return s;
}

Selection select_per_layer(const std::vector<Candidate>& candidates, const ModelSpec& m, const AnalyticalHardware& hw,
                           const RoutingTrace& profile, const HeldOut& h, const std::string& name) {
  Selection sel;
  for (const Candidate& c : candidates) sel.layer_s.push_back(held_out_layer_seconds(*c.placement, m, hw, profile, h));
  const int nodes = hw.topology.nodes();
  sel.placement = Placement(name, m.experts, nodes, m.moe_layers);
  for (int l = 0; l < m.moe_layers; ++l) {
    int best = 0;
    for (size_t c = 1; c < candidates.size(); ++c)
      if (sel.layer_s[c][static_cast<size_t>(l)] < sel.layer_s[static_cast<size_t>(best)][static_cast<size_t>(l)])
        best = static_cast<int>(c);
    sel.choice.push_back(best);
    const Placement& from = *candidates[static_cast<size_t>(best)].placement;
    for (int e = 0; e < m.experts; ++e) {
      const std::vector<double> row = from.physical_row(l, e);
      std::copy(row.begin(), row.end(),
                sel.placement.share[static_cast<size_t>(l)].begin() + static_cast<long>(e) * nodes);
    }
  }
  return sel;
}

nlohmann::json Selection::to_json(const std::vector<Candidate>& candidates) const {
  nlohmann::json chosen = nlohmann::json::object(), total = nlohmann::json::object();
  for (size_t c = 0; c < candidates.size(); ++c) {
    chosen[candidates[c].name] = std::count(choice.begin(), choice.end(), static_cast<int>(c));
    double s = 0;
    for (double x : layer_s[c]) s += x;
    total[candidates[c].name] = s * 1e6;
  }
  double mixed = 0;
  for (size_t l = 0; l < choice.size(); ++l) mixed += layer_s[static_cast<size_t>(choice[l])][l];
  nlohmann::json per_layer = nlohmann::json::array();
  for (int c : choice) per_layer.push_back(candidates[static_cast<size_t>(c)].name);
  return {{"layers_chosen", chosen},
          {"held_out_moe_us", total},
          {"held_out_moe_us_selected", mixed * 1e6},
          {"choice_per_layer", per_layer}};
}

}  // namespace nmpsim::methods::hdmoe
