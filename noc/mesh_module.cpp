#include "nmpsim/noc/mesh_module.h"

#include <cmath>

#include "nmpsim/noc/valid_stop_adapter.h"

namespace nmpsim::noc {

using sc_core::sc_time;

MeshModule::MeshModule(sc_core::sc_module_name name, const NocConfig& cfg, const RouterFactory& pin_routers)
    : sc_module(name), net_(cfg) {
  const double res_s = sc_core::sc_get_time_resolution().to_seconds();
  const double period_s = 1e-9 / cfg.clock_ghz;
  period_units_ = static_cast<uint64_t>(std::llround(period_s / res_s));
  if (period_units_ < 2) throw ConfigError("noc: clock period is shorter than two SystemC time-resolution steps");
  period_ = sc_core::sc_get_time_resolution() * static_cast<double>(period_units_);
  // The look-ahead router has no engine fast path: its cycle model runs at pin level.
  const RouterFactory routers =
      pin_routers || cfg.router_kind != RouterKind::kLookahead ? pin_routers : la_model_factory();
  if (routers) {
    // Falling edge c of the pin mesh's clock is at time_of_cycle(c): the same timing as tick().
    pins_ = std::make_unique<PinMesh>("pins", cfg, routers);
    return;
  }
  net_.set_session_replay(cfg.replay_sessions);  // it steps exactly the cycles next_event_cycle() names
  SC_METHOD(tick);
  sensitive << wake_;
  dont_initialize();
}

uint64_t MeshModule::cycle_after(const sc_time& t) const {
  const uint64_t half = period_units_ / 2;
  const uint64_t v = t.value();
  return v < half ? 0 : (v - half) / period_units_ + 1;
}

sc_time MeshModule::time_of_cycle(uint64_t c) const {
  return sc_core::sc_get_time_resolution() * static_cast<double>(c * period_units_ + period_units_ / 2);
}

sc_time MeshModule::edge_of_cycle(uint64_t c) const {
  return sc_core::sc_get_time_resolution() * static_cast<double>(c * period_units_);
}

MeshModule::~MeshModule() = default;

void MeshModule::wake_for(uint64_t cycle) {
  if (pins_ || scheduled_ <= cycle) return;
  scheduled_ = cycle;
  wake_.notify(time_of_cycle(cycle) - sc_core::sc_time_stamp());
}

uint64_t MeshModule::send(int src, int dst, uint64_t bytes, uint64_t tag) {
  const uint64_t c = cycle_after(sc_core::sc_time_stamp());
  const uint64_t id = network().send(src, dst, bytes, c, tag);
  wake_for(c);
  return id;
}

uint64_t MeshModule::send_flits(int src, int dst, uint32_t flits, uint64_t tag) {
  const uint64_t c = cycle_after(sc_core::sc_time_stamp());
  const uint64_t id = network().send_flits(src, dst, flits, c, tag);
  wake_for(c);
  return id;
}

void MeshModule::tick() {
  const sc_time now = sc_core::sc_time_stamp();
  const uint64_t half = period_units_ / 2;
  const uint64_t c = (now.value() - half) / period_units_;  // the process only runs at (c + 1/2) periods
  if (!stepped_ || c > last_stepped_) {
    stepped_ = true;
    last_stepped_ = c;
    if (!net_.step(c)) {
      scheduled_ = kNever;
      if (stop_on_stall_) sc_core::sc_stop();
      return;
    }
  }
  const uint64_t n = net_.next_event_cycle(c);
  scheduled_ = n;
  if (n == kNever) {
    next_trigger(wake_);
  } else {
    next_trigger(time_of_cycle(n) - now, wake_);
  }
}

}  // namespace nmpsim::noc
