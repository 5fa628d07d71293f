// FluidEngine's rates: weighted max-min fairness by progressive filling over the flows in flight
// (flow/fluid_network.h): a local numbering of the resources in use, their capacities, the flows'
// weights, and the filling.
#include <algorithm>

#include "nmpsim/flow/fluid_network.h"

namespace nmpsim::flow {

void FluidEngine::solve() {
  dirty_ = false;
  ++solves_;
  changes_ = 0;
  change_limit_ =
      std::max<uint64_t>(1, static_cast<uint64_t>(flow_resolve_fraction_ * static_cast<double>(active_.size())));
  for (int id : active_) {
    Flow& f = flows_[static_cast<size_t>(id)];
    f.remaining = left_at(f, now_);
    f.t_ref = now_;
  }
  index_flows();
  set_capacities();
  set_weights();
  fill();
  for (size_t l = 0; l < glob_.size(); ++l) residual_[static_cast<size_t>(glob_[l])] = left_[l];
  for (int r : glob_) {
    local_[static_cast<size_t>(r)] = -1;
    fluid_done_[static_cast<size_t>(r)] = 0.0;
  }
  events_.clear();
  for (int id : active_) {
    events_.push_back(Event{event_time(flows_[static_cast<size_t>(id)]), id});
    note_fluid_done(flows_[static_cast<size_t>(id)]);
  }
  std::make_heap(events_.begin(), events_.end(), std::greater<Event>());
}

void FluidEngine::index_flows() {
  // Local numbering of the resources the flows in flight cross, and each flow's path in it.
  const size_t nf = active_.size();
  glob_.clear();
  lpath_begin_.resize(nf + 1);
  lpath_.resize(live_path_len_);
  size_t at = 0;
  for (size_t i = 0; i < nf; ++i) {
    const Flow& f = flows_[static_cast<size_t>(active_[i])];
    lpath_begin_[i] = static_cast<int>(at);
    for (uint32_t k = 0; k < f.path_len; ++k) {
      const size_t r = static_cast<size_t>(paths_[f.path_begin + k]);
      if (local_[r] < 0) {
        local_[r] = static_cast<int>(glob_.size());
        glob_.push_back(static_cast<int>(r));
      }
      lpath_[at++] = local_[r];
    }
  }
  lpath_begin_[nf] = static_cast<int>(at);
  // Flows by resource (CSR); crossing_now_ already counts the flows on each resource.
  const size_t nr = glob_.size();
  crossing_.resize(nr);
  list_begin_.resize(nr + 1);
  list_fill_.resize(nr);
  int offset = 0;
  for (size_t l = 0; l < nr; ++l) {
    crossing_[l] = crossing_now_[static_cast<size_t>(glob_[l])];
    list_begin_[l] = list_fill_[l] = offset;
    offset += crossing_[l];
  }
  list_begin_[nr] = offset;
  list_.resize(static_cast<size_t>(offset));
  for (size_t i = 0; i < nf; ++i)
    for (int k = lpath_begin_[i]; k < lpath_begin_[i + 1]; ++k) {
      const int slot = list_fill_[static_cast<size_t>(lpath_[static_cast<size_t>(k)])]++;
      list_[static_cast<size_t>(slot)] = static_cast<int>(i);
    }
}

void FluidEngine::set_capacities() {
  const size_t nr = glob_.size();
  // Capacities for this set of flows, and which resources can bind: one that a single flow crosses
  // binds only if it is slower than that flow's injection channel.
  cap_.resize(nr);
  left_.resize(nr);
  unfrozen_.resize(nr);
  share_.resize(nr);
  live_.clear();
  for (size_t l = 0; l < nr; ++l) {
    const size_t r = static_cast<size_t>(glob_[l]);
    cap_[l] = capacity_for(r, crossing_[l]);
    left_[l] = cap_[l];
    unfrozen_[l] = crossing_[l];
    const bool inject = r >= inject_base_ && r < eject_base_;
    bool live = crossing_[l] > 1 || inject;
    if (!live) {
      const int flow = list_[static_cast<size_t>(list_begin_[l])];
      const int src_inject = lpath_[static_cast<size_t>(lpath_begin_[static_cast<size_t>(flow)])];
      live = cap_[l] < cap_[static_cast<size_t>(src_inject)];
    }
    if (live) live_.push_back(static_cast<int>(l));
  }
}

void FluidEngine::fill() {
  const size_t nf = active_.size(), nr = glob_.size();
  frozen_.assign(nf, 0);
  wsum_.assign(nr, 0.0);
  for (size_t i = 0; i < nf; ++i)
    for (int k = lpath_begin_[i]; k < lpath_begin_[i + 1]; ++k)
      wsum_[static_cast<size_t>(lpath_[static_cast<size_t>(k)])] += weight_[i];
  for (size_t l = 0; l < nr; ++l) share_[l] = cap_[l] / wsum_[l];
  // Progressive filling: all unfrozen flows rise together, each at its weight; in each round the
  // resources whose share per unit weight is lowest saturate and freeze the flows crossing them at
  // that level. A resource's share only rises as flows elsewhere freeze (each leaves it at least the
  // level times its weight), so a round needs only the resources whose share was at most a
  // threshold when it was set, as long as the round's level stays below it: the rounds scan that
  // subset (`near_`, in the order of `live_`, so that the rates are the same to the bit as with a
  // scan of every resource), and it is chosen again, from the resources still unsaturated, when the
  // level passes the threshold (docs/PERFORMANCE.md "Scale"; a heap of shares was slower there).
  size_t unfrozen_flows = nf;
  double threshold = -kNever;
  near_.clear();
  while (unfrozen_flows > 0 && !live_.empty()) {
    double level = kNever;
    for (int l : near_) level = std::min(level, share_[static_cast<size_t>(l)]);
    if (near_.empty() || level > threshold) {
      threshold = choose_near();
      continue;
    }
    const double limit = level * (1 + 1e-12);
    size_t keep = 0;
    for (int li : near_) {
      const size_t l = static_cast<size_t>(li);
      if (unfrozen_[l] > 0 && share_[l] <= limit) {
        for (int k = list_begin_[l]; k < list_begin_[l + 1]; ++k) {
          const size_t fi = static_cast<size_t>(list_[static_cast<size_t>(k)]);
          if (frozen_[fi]) continue;
          freeze(fi, level);
          --unfrozen_flows;
        }
      }
      if (unfrozen_[l] > 0) near_[keep++] = li;
    }
    near_.resize(keep);
  }
}

double FluidEngine::choose_near() {
  // The unsaturated resources, and among them the near_size_ lowest shares (all of them when few).
  size_t keep = 0;
  for (int l : live_)
    if (unfrozen_[static_cast<size_t>(l)] > 0) live_[keep++] = l;
  live_.resize(keep);
  near_.clear();
  if (live_.empty()) return kNever;
  const size_t want = near_size_;
  double threshold = kNever;
  if (live_.size() > want) {
    scratch_.clear();
    for (int l : live_) scratch_.push_back(share_[static_cast<size_t>(l)]);
    std::nth_element(scratch_.begin(), scratch_.begin() + static_cast<long>(want) - 1, scratch_.end());
    threshold = scratch_[want - 1];
  }
  // Also those within a round's rounding of the threshold, so that a round at a level up to it
  // finds every resource it saturates in near_.
  const double bound = threshold * (1 + 2e-12);
  for (int l : live_)
    if (share_[static_cast<size_t>(l)] <= bound) near_.push_back(l);
  return threshold;
}

void FluidEngine::freeze(size_t fi, double level) {
  frozen_[fi] = 1;
  const double rate = level * weight_[fi];
  flows_[static_cast<size_t>(active_[fi])].rate = rate;
  for (int k = lpath_begin_[fi]; k < lpath_begin_[fi + 1]; ++k) {
    const size_t l2 = static_cast<size_t>(lpath_[static_cast<size_t>(k)]);
    left_[l2] -= rate;
    wsum_[l2] -= weight_[fi];
    share_[l2] = --unfrozen_[l2] > 0 ? left_[l2] / wsum_[l2] : kNever;
  }
}

void FluidEngine::set_weights() {
  // A router shares an output among its input ports round-robin, so a flow that enters its most
  // crowded resource through a link crowded with k flows gets about 1/k of that port's turns:
  // weight 1/k in the weighted max-min (docs/MODEL.md "Flow-level model").
  const size_t nf = active_.size();
  weight_.assign(nf, 1.0);
  for (size_t i = 0; i < nf; ++i) {
    int best = -1, most = 0;
    for (int k = lpath_begin_[i] + 1; k < lpath_begin_[i + 1]; ++k) {
      const int c = crossing_[static_cast<size_t>(lpath_[static_cast<size_t>(k)])];
      if (c > most) {
        most = c;
        best = k;
      }
    }
    if (best > lpath_begin_[i])
      weight_[i] = 1.0 / crossing_[static_cast<size_t>(lpath_[static_cast<size_t>(best - 1)])];
  }
}

}  // namespace nmpsim::flow
