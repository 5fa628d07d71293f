#include "nmpsim/methods/hiermoe/online_swap.h"

#include <algorithm>
#include <utility>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::methods::hiermoe {

using namespace nmpsim::mapping;          // the base layer this method builds on
using namespace nmpsim::methods::common;  // the pieces methods share

std::vector<int> slots_from_rows(const Hierarchy& h, const std::vector<std::vector<double>>& rows,
                                 const std::string& where) {
  const int E = static_cast<int>(rows.size()), G = h.nodes();
  const int span = std::max(1, G / E), per_node = std::max(1, E / G);
  const auto fail = [&](const std::string& why) {
    throw InputError(where + ": " + why + "; the hierarchical all-to-all needs " + std::to_string(per_node) +
                     " whole expert(s) on every node (or every expert split evenly over " + std::to_string(span) +
                     " nodes), as EP and the hiermoe placements give");
  };
  if (E % G != 0 && G % E != 0) fail(std::to_string(E) + " experts on " + std::to_string(G) + " nodes");
  std::vector<int> slots(static_cast<size_t>(E * span), -1), filled(static_cast<size_t>(G), 0);
  for (int e = 0; e < E; ++e) {
    std::vector<int> ranks;
    for (int v = 0; v < G; ++v)
      if (rows[static_cast<size_t>(e)][static_cast<size_t>(v)] > 1e-9)
        ranks.push_back(h.rank_of[static_cast<size_t>(v)]);
    if (static_cast<int>(ranks.size()) != span)
      fail("expert " + std::to_string(e) + " is on " + std::to_string(ranks.size()) + " nodes");
    std::sort(ranks.begin(), ranks.end());
    for (int j = 0; j < span; ++j) {
      const int r = ranks[static_cast<size_t>(j)];
      if (filled[static_cast<size_t>(r)] == per_node)
        fail("node " + std::to_string(h.node_at[static_cast<size_t>(r)]) + " holds more than " +
             std::to_string(per_node) + " expert(s)");
      slots[static_cast<size_t>(e * span + j)] = r * per_node + filled[static_cast<size_t>(r)]++;
    }
  }
  return slots;
}

OnlineSwap::OnlineSwap(OnlineSwapOptions o, const Hierarchy& h, const HierarchyCosts& c,
                       std::vector<std::vector<std::vector<double>>> rows, int top_k, double token_bytes,
                       double moved_bytes, const AnalyticalHardware& hw, int passes)
    : opt_(o),
      h_(&h),
      costs_(&c),
      hw_(&hw),
      token_bytes_(token_bytes),
      moved_bytes_(moved_bytes),
      top_k_(top_k),
      passes_(passes),
      rows_(std::move(rows)) {
  if (opt_.window == 0) opt_.window = opt_.every;
  for (size_t ml = 0; ml < rows_.size(); ++ml)
    slots_.push_back(slots_from_rows(h, rows_[ml], "policy hiermoe: MoE layer " + std::to_string(ml)));
  if (enabled() && !rows_.empty() && rows_[0].size() < static_cast<size_t>(h.nodes()))
    throw InputError("policy hiermoe: swap_every needs at least one whole expert per node (" +
                     std::to_string(rows_[0].size()) + " experts on " + std::to_string(h.nodes()) + " nodes)");
  seen_.resize(rows_.size());
  swaps_per_layer_.assign(rows_.size(), 0);
}

void OnlineSwap::observe(int ml, const std::vector<uint16_t>& ids) {
  if (!enabled()) return;
  auto& q = seen_[static_cast<size_t>(ml)];
  q.push_back(ids);
  while (static_cast<int>(q.size()) > opt_.window) q.pop_front();
}

const std::vector<PlannedSwap>& OnlineSwap::start_step(int step) {
  for (const PlannedSwap& s : moving_) {  // landed during the previous step (drained at its end)
    auto& rows = rows_[static_cast<size_t>(s.moe_layer)];
    std::swap(rows[static_cast<size_t>(s.expert_a)], rows[static_cast<size_t>(s.expert_b)]);
    auto& slots = slots_[static_cast<size_t>(s.moe_layer)];
    std::swap(slots[static_cast<size_t>(s.expert_a)], slots[static_cast<size_t>(s.expert_b)]);
  }
  moving_.clear();
  copies_.clear();
  step_ = step;
  if (enabled() && step > 0 && step % opt_.every == 0) plan_round();
  return moving_;
}

double OnlineSwap::migration_s(int a, int b) const {
  // Both copies run at once in opposite directions (full-duplex links): the slower of the path's
  // narrowest link and the DRAM bank's streaming write, on idle links.
  const double link = path_gbytes_per_s(hw_->topology, a, b) * 1e9;
  return std::max(moved_bytes_ / link, moved_bytes_ / hw_->memory_bytes_per_s);
}

void OnlineSwap::plan_round() {
  ++rounds_;
  const int per_node = static_cast<int>(rows_[0].size()) / h_->nodes();
  for (size_t ml = 0; ml < rows_.size(); ++ml) {
    const auto& q = seen_[ml];
    if (q.empty()) continue;
    const int E = static_cast<int>(rows_[ml].size());
    Routing r{E, top_k_, {}};
    for (const auto& ids : q) r.ids.insert(r.ids.end(), ids.begin(), ids.end());
    std::vector<int> slot_of = slots_[ml];
    std::vector<int> expert_at(static_cast<size_t>(E));
    for (int e = 0; e < E; ++e) expert_at[static_cast<size_t>(slot_of[static_cast<size_t>(e)])] = e;
    const std::vector<int> slot_before = slot_of;
    const double steps = static_cast<double>(q.size());
    const auto node_of_slot = [&](int s) { return h_->node_at[static_cast<size_t>(s / per_node)]; };
    std::vector<SwapChoice> made;
    const auto pays = [&](const SwapChoice& c) {
      const double saving = passes_ * (c.current_s - c.seconds) / steps;
      const bool ok = saving * opt_.horizon_steps > migration_s(node_of_slot(c.a), node_of_slot(c.b));
      rejected_ += ok ? 0 : 1;
      return ok;
    };
    expert_swap(*h_, *costs_, r, token_bytes_, opt_.gamma, opt_.max_swaps, slot_of, pays, &made);
    // `made` holds slot pairs in order; replay them on the experts now at those slots.
    for (const SwapChoice& c : made) {
      PlannedSwap p;
      p.moe_layer = static_cast<int>(ml);
      p.expert_a = expert_at[static_cast<size_t>(c.a)];
      p.expert_b = expert_at[static_cast<size_t>(c.b)];
      std::swap(expert_at[static_cast<size_t>(c.a)], expert_at[static_cast<size_t>(c.b)]);
      p.node_a = node_of_slot(c.a);
      p.node_b = node_of_slot(c.b);
      p.saving_s_per_step = passes_ * (c.current_s - c.seconds) / steps;
      p.migration_s = migration_s(p.node_a, p.node_b);
      saving_s_per_step_ += p.saving_s_per_step;
      migration_s_ += p.migration_s;
      ++swaps_per_layer_[ml];
      moving_.push_back(p);
    }
    for (int e = 0; e < E; ++e) {
      const int from = node_of_slot(slot_before[static_cast<size_t>(e)]),
                to = node_of_slot(slot_of[static_cast<size_t>(e)]);
      if (from == to) continue;
      copies_.push_back(Copy{static_cast<int>(ml), e, from, to});
      moves_.push_back({{"step", step_}, {"moe_layer", ml}, {"expert", e}, {"from_node", from}, {"to_node", to}});
      migration_bytes_ += moved_bytes_;
    }
  }
}

nlohmann::json OnlineSwap::stats() const {
  int total = 0;
  for (int n : swaps_per_layer_) total += n;
  return {{"rounds", rounds_},
          {"swaps", total},
          {"swaps_per_layer", swaps_per_layer_},
          {"rejected_by_amortisation", rejected_},
          {"migration_bytes", migration_bytes_},
          {"predicted_saving_us_per_step", saving_s_per_step_ * 1e6},
          {"predicted_migration_us", migration_s_ * 1e6},
          {"moves", moves_}};
}

}  // namespace nmpsim::methods::hiermoe
