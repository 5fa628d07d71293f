#include "nmpsim/methods/hdmoe/prebroadcast_admission.h"

#include <algorithm>
#include <memory>

#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/mapping/moe_layer.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

std::vector<OpId> add_broadcast(LayerSchedule& s, int ph, OpId start, const BroadcastPlan& plan) {
  std::vector<OpId> ops;
  for (const BroadcastStream& b : plan.streams) {
    std::vector<PhysicalNode> chain;
    for (int v : b.chain) chain.push_back(PhysicalNode(v));
    DepList deps;
    if (start >= 0) deps.push_back(start);
    ops.push_back(s.stream(ph, PhysicalNode(b.src), std::move(chain), b.bytes, b.chunk_bytes, deps));
  }
  return ops;
}

LayerForecast forecast_layer(const AnalyticalHardware& hw, const LayerSchedule& s, int after,
                             const std::vector<BroadcastPlan>& plans) {
  auto copy = std::make_shared<LayerSchedule>(s);
  std::vector<OpId> streams;
  if (!plans.empty()) {
    const int ph = copy->phase("prebroadcast", PhaseFamily::kMoeComm, /*stream=*/1);
    const OpId start = phase_barrier(*copy, after);
    for (const BroadcastPlan& p : plans)
      for (OpId op : add_broadcast(*copy, ph, start, p)) streams.push_back(op);
  }
  flow::FlowExecutor fx(hw);
  const uint64_t serial = fx.execute(copy);
  LayerForecast f;
  f.foreground_s = fx.now_s();
  fx.drain();
  const auto& t = fx.tracker().timings(serial);
  for (OpId op : streams) f.landed_s = std::max(f.landed_s, t[static_cast<size_t>(op)].end_s);
  return f;
}

AdmissionResult admit_by_flow(const AnalyticalHardware& hw, const LayerSchedule& s, int after,
                              const std::vector<BroadcastPlan>& candidates, double reliability) {
  AdmissionResult r;
  if (candidates.empty() || reliability <= 0) return r;
  // The copy runs alone on an idle machine: ops standing for earlier layers' work cannot be replayed.
  for (const Op& o : s.ops())
    if (o.kind == OpKind::kExternal) return r;
  const double base_s = forecast_layer(hw, s, after, {}).foreground_s;
  std::vector<BroadcastPlan> trial;
  for (const BroadcastPlan& c : candidates) {
    trial = r.admitted;
    trial.push_back(c);
    ++r.considered;
    const LayerForecast f = forecast_layer(hw, s, after, trial);
    const double net = reliability * c.saving_s - (f.foreground_s - base_s);
    // Later candidates only add to this one's traffic: stop at the first that does not pay.
    if (f.landed_s > f.foreground_s || net <= r.predicted_net_s) break;
    r.admitted = std::move(trial);
    r.predicted_net_s = net;
  }
  return r;
}

}  // namespace nmpsim::methods::hdmoe
