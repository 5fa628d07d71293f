// noc::Network: statistics, conservation checks and the stall watchdog (the cycle engine is network.cpp).
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "nmpsim/noc/flit_word.h"
#include "nmpsim/noc/network.h"

namespace nmpsim::noc {

LatencySummary LatencySummary::of(std::vector<uint32_t> s) {
  LatencySummary r;
  r.count = s.size();
  if (s.empty()) return r;
  std::sort(s.begin(), s.end());
  double sum = 0.0;
  for (uint32_t v : s) sum += v;
  r.avg = sum / static_cast<double>(s.size());
  // Nearest-rank percentiles.
  auto pct = [&](double p) {
    size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(s.size())));
    return static_cast<double>(s[std::min(s.size(), std::max<size_t>(rank, 1)) - 1]);
  };
  r.p50 = pct(0.50);
  r.p99 = pct(0.99);
  r.max = s.back();
  return r;
}

void Network::fire_watchdog() {
  stalled_ = true;
  std::ostringstream os;
  // A check that failed before the stall is its likely cause: it comes first.
  if (violations_)
    os << "noc: check failed at " << first_violation_ << " (" << violations_ << " violations in all); then a ";
  else
    os << "noc: ";
  os << "stall at cycle " << cycle_ << ": no flit moved for " << (cycle_ - last_progress_) << " cycles with "
     << flits_in_flight() << " flits in flight and " << flits_queued_at_sources() << " queued at sources. ";
  int listed = 0, stuck = 0;
  for (int node = 0; node < nodes(); ++node) {
    if (buffered_at(node) == 0) continue;
    ++stuck;
    if (listed < 16) {
      os << (listed ? "; " : "Stuck: ");
      if (external_router(node))
        os << "pin-level router " << node << " " << geo_.coord(node) << " holds " << buffered_at(node) << " flits ("
           << pin_checks_.held(node) << ")";
      else
        os << routers_[node].describe_state(cycle_);
      ++listed;
    }
  }
  if (stuck > listed) os << "; ... and " << (stuck - listed) << " more routers";
  if (stuck == 0) os << "No router holds flits (flits blocked at the network interfaces).";
  stall_report_ = os.str();
}

uint64_t Network::flits_queued_at_sources() const {
  uint64_t total = 0;
  for (const Ni& ni : nis_)
    for (const NiQueue& q : ni.queues) total += q.flits;
  return total;
}

std::string Network::check_conservation() const {
  if (violations_) return first_violation_ + " (" + std::to_string(violations_) + " violations in all)";
  uint64_t buffered = 0;
  for (int node = 0; node < nodes(); ++node) buffered += static_cast<uint64_t>(buffered_at(node));
  uint64_t on_links = 0;
  for (const auto& slot : flit_wheel_) on_links += slot.size();
  if (injected_flits_ != ejected_flits_ + buffered + on_links)
    return "flit books do not balance: injected " + std::to_string(injected_flits_) + " != ejected " +
           std::to_string(ejected_flits_) + " + buffered " + std::to_string(buffered) + " + on links " +
           std::to_string(on_links);
  if (idle() && injected_flits_ != ejected_flits_)
    return "network idle but " + std::to_string(injected_flits_ - ejected_flits_) + " flits unaccounted";
  if (idle() && delivered_messages_ != next_message_id_)
    return "network idle but " + std::to_string(next_message_id_ - delivered_messages_) + " messages undelivered";
  return "";
}

void Network::begin_measurement(uint64_t cycle) {
  set_session_replay(false);
  measuring_ = true;
  window_start_ = cycle;
  window_end_ = kNever;
  offered_flits_ = accepted_flits_ = 0;
  measured_packets_ = measured_packets_done_ = 0;
  packet_latencies_.clear();
  message_latencies_.clear();
  // Link and router statistics restart when the window opens: now, or at the first cycle begun at
  // or after a window start that lies in the future.
  if (started_ && cycle <= cycle_) {
    reset_router_stats(cycle);
  } else {
    stats_reset_pending_ = true;
  }
}

void Network::reset_router_stats(uint64_t cycle) {
  stats_reset_pending_ = false;
  for (Router& r : routers_) r.reset_stats(cycle);
  for (ExternalRouter& x : ext_) {
    x.occ_area = 0.0;
    x.occ_last = cycle;
    x.max_buffered = x.buffered;
    for (auto& f : x.flits_out) f = 0;
  }
}

void Network::end_measurement(uint64_t cycle) {
  window_end_ = cycle;
  // Snapshot link and buffer statistics at the window's end so a drain phase does not dilute them.
  link_snapshot_.clear();
  const double cycles = static_cast<double>(cycle - window_start_);
  for (int node = 0; node < nodes(); ++node) {
    const Router& r = routers_[node];  // output link timing, for external routers too
    for (int dir = 0; dir < kNumMeshDirs; ++dir) {
      const int to = geo_.neighbour(node, dir);
      if (to < 0) continue;
      LinkStat ls;
      ls.from = node;
      ls.to = to;
      ls.dir = dir;
      ls.flits = flits_out_at(node, dir);
      const double cpf = static_cast<double>(r.output_link(dir).cycles_per_flit_q) / static_cast<double>(kCycleOne);
      ls.utilisation = cycles > 0 ? static_cast<double>(ls.flits) * cpf / cycles : 0.0;
      link_snapshot_.push_back(ls);
    }
  }
  router_snapshot_.clear();
  for (int node = 0; node < nodes(); ++node)
    router_snapshot_.push_back(
        RouterStat{node, cycles > 0 ? occupancy_at(node, cycle) / cycles : 0.0, max_buffered_at(node)});
}

int Network::buffered_at(int node) const {
  return external_router(node) ? ext_[node].buffered : routers_[node].buffered_flits();
}
uint64_t Network::flits_out_at(int node, int dir) const {
  return external_router(node) ? ext_[node].flits_out[dir] : routers_[node].flits_out(dir);
}
double Network::occupancy_at(int node, uint64_t cycle) const {
  if (!external_router(node)) return routers_[node].occupancy_flit_cycles(cycle);
  const ExternalRouter& x = ext_[node];
  return x.occ_area + static_cast<double>(x.buffered) * static_cast<double>(cycle - x.occ_last);
}
int Network::max_buffered_at(int node) const {
  return external_router(node) ? ext_[node].max_buffered : routers_[node].max_buffered_flits();
}

NocStats Network::stats() const {
  NocStats s;
  const uint64_t end = window_end_ == kNever ? cycle_ + 1 : window_end_;
  s.window_cycles = end > window_start_ ? end - window_start_ : 0;
  s.packet_latency_cycles = LatencySummary::of(packet_latencies_);
  s.message_latency_cycles = LatencySummary::of(message_latencies_);
  s.offered_flits = offered_flits_;
  s.accepted_flits = accepted_flits_;
  s.measured_packets_undelivered = measured_packets_ - measured_packets_done_;
  const double denom = static_cast<double>(s.window_cycles) * nodes();
  s.offered_flits_per_node_cycle = denom > 0 ? static_cast<double>(offered_flits_) / denom : 0.0;
  s.accepted_flits_per_node_cycle = denom > 0 ? static_cast<double>(accepted_flits_) / denom : 0.0;
  s.links = link_snapshot_;
  s.routers = router_snapshot_;
  return s;
}

}  // namespace nmpsim::noc
