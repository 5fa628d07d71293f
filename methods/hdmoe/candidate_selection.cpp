#include "nmpsim/methods/hdmoe/candidate_selection.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/layer_runner.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

std::vector<size_t> held_out_offsets(size_t profile_tokens, int batch, int trained, int count) {
  std::vector<size_t> out;
  const size_t b = static_cast<size_t>(std::max(1, batch));
  const size_t last = profile_tokens > b ? profile_tokens - b : 0;  // the last batch that fits whole
  const double step = static_cast<double>(profile_tokens) / std::max(1, count);
  // Half the grid of the least common multiple L of the two counts: every held-out offset
  // (2h L / count + 1) T / 2L has an odd numerator over 2L, every sampled one (2k L / trained) T / 2L
  // an even one, so none coincide (4 and 4: T / 8; 4 and 8: T / 16; 4 and 6: T / 24).
  const long grid = std::lcm(static_cast<long>(std::max(1, trained)), static_cast<long>(std::max(1, count)));
  const double half = static_cast<double>(profile_tokens) / (2.0 * static_cast<double>(grid));
  for (int h = 0; h < count; ++h) {
    // Between two of the MILP's batches, then spread: offset h * step + half.
    const auto at = static_cast<size_t>(h * step + half);
    out.push_back(std::min(at, last));
  }
  return out;
}

std::vector<std::vector<double>> held_out_batch_layer_seconds(const Placement& p, const ModelSpec& m,
                                                              const AnalyticalHardware& hw, const RoutingTrace& profile,
                                                              const HeldOut& h) {
  std::vector<std::vector<double>> s;
  for (size_t first : h.first_tokens) {
    RunConfig cfg;
    cfg.shape = {h.batch, h.context};
    cfg.steps = 1;
    cfg.attn_tp = h.attn_tp;
    cfg.first_token = first;
    const StrategyResult r = flow::run_flow(hw, m, profile, p, cfg);
    const std::vector<LayerRecord>& layers = r.steps.at(0);
    std::vector<double> row(static_cast<size_t>(m.moe_layers), 0.0);
    for (int l = 0; l < m.moe_layers; ++l)
      row[static_cast<size_t>(l)] = layers.at(static_cast<size_t>(m.dense_layers + l)).total_s();
    s.push_back(std::move(row));
  }
  return s;
}

namespace {
/// Per layer, the sum over batches of rows[batch][layer].
std::vector<double> summed_over_batches(const std::vector<std::vector<double>>& rows, int layers) {
  std::vector<double> s(static_cast<size_t>(layers), 0.0);
  for (const std::vector<double>& row : rows)
    for (size_t l = 0; l < row.size(); ++l) s[l] += row[l];
  return s;
}
}  // namespace

std::vector<double> held_out_layer_seconds(const Placement& p, const ModelSpec& m, const AnalyticalHardware& hw,
                                           const RoutingTrace& profile, const HeldOut& h) {
  return summed_over_batches(held_out_batch_layer_seconds(p, m, hw, profile, h), m.moe_layers);
}

bool clearly_faster(const std::vector<double>& challenger_s, const std::vector<double>& reference_s, double z,
                    double min_gain) {
  const size_t n = std::min(challenger_s.size(), reference_s.size());
  if (n == 0) return false;
  double mean = 0, reference_mean = 0;
  for (size_t b = 0; b < n; ++b) {
    mean += reference_s[b] - challenger_s[b];
    reference_mean += reference_s[b];
  }
  mean /= static_cast<double>(n);
  reference_mean /= static_cast<double>(n);
  if (mean <= 0 || mean <= min_gain * reference_mean) return false;
  if (n == 1) return true;  // one batch: no spread to test against
  double var = 0;
  for (size_t b = 0; b < n; ++b) {
    const double d = reference_s[b] - challenger_s[b] - mean;
    var += d * d;
  }
  const double standard_error = std::sqrt(var / static_cast<double>(n - 1) / static_cast<double>(n));
  return mean > z * standard_error;
}

int choose_candidate(const std::vector<std::vector<double>>& per_batch_s, int reference, double z, double min_gain) {
  // per_batch_s[c][b]: candidate c's seconds on held-out batch b.
  auto total = [&](size_t c) {
    double t = 0;
    for (double x : per_batch_s[c]) t += x;
    return t;
  };
  if (reference >= static_cast<int>(per_batch_s.size()))
    throw std::invalid_argument("choose_candidate: reference " + std::to_string(reference) + " of " +
                                std::to_string(per_batch_s.size()) + " candidates");
  size_t best = 0;
  for (size_t c = 1; c < per_batch_s.size(); ++c)
    if (total(c) < total(best)) best = c;
  if (reference < 0 || static_cast<size_t>(reference) == best) return static_cast<int>(best);
  // Only the fastest is tested against the reference: a slower candidate that is also clearly
  // faster than the reference is not taken (the measured placements were made with this rule).
  const auto ref = static_cast<size_t>(reference);
  return clearly_faster(per_batch_s[best], per_batch_s[ref], z, min_gain) ? static_cast<int>(best) : reference;
}

Selection select_per_layer(const std::vector<Candidate>& candidates, const ModelSpec& m, const AnalyticalHardware& hw,
                           const RoutingTrace& profile, const HeldOut& h, const std::string& name, int reference) {
  Selection sel;
  std::vector<std::vector<std::vector<double>>> runs;  // [candidate][batch][layer]
  for (const Candidate& c : candidates) {
    runs.push_back(held_out_batch_layer_seconds(*c.placement, m, hw, profile, h));
    sel.layer_s.push_back(summed_over_batches(runs.back(), m.moe_layers));
  }
  const int nodes = hw.topology.nodes();
  sel.placement = Placement(name, m.experts, nodes, m.moe_layers);
  for (int l = 0; l < m.moe_layers; ++l) {
    std::vector<std::vector<double>> per_batch(candidates.size());
    for (size_t c = 0; c < candidates.size(); ++c)
      for (const std::vector<double>& row : runs[c]) per_batch[c].push_back(row[static_cast<size_t>(l)]);
    const int best = choose_candidate(per_batch, reference, kSelectionZ, kSelectionMinGain);
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
