#include "telemetry_policy.h"

#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/moe_layer.h"

namespace nmpsim::methods::extending_example {

void TelemetryPolicy::after_phase(mapping::PolicyContext& ctx, mapping::LayerSchedule& s, uint64_t serial, int phase) {
  // Only the current layer's combine phase (after_phase also reports phases of older schedules).
  if (serial != ctx.schedule || s.phases()[static_cast<size_t>(phase)].name != mapping::phase_names::kCombine) return;
  const int telemetry = s.phase("telemetry", mapping::PhaseFamily::kOther, /*stream=*/1);
  const mapping::OpId after = mapping::phase_barrier(s, phase);
  for (int v = 1; v < ctx.hw.topology.nodes(); ++v) {
    s.transfer(telemetry, mapping::PhysicalNode(v), mapping::PhysicalNode(0), message_bytes_, {after});
    ++messages_;
  }
}

mapping::PolicyFactory telemetry_factory() {
  mapping::PolicyFactory f;
  f.name = "telemetry";
  f.description = "every node reports a status message to node 0 after each layer's combine (background)";
  f.options = {{"message_bytes", "64", "bytes of each status message"}};
  auto read = [](const nlohmann::json& o, const std::string& where) {
    const base::JsonFields fields(o, where, "");
    const double bytes = fields.number("message_bytes", 64);
    if (!(bytes >= 1 && bytes <= 1 << 20)) fields.fail("message_bytes", "must be in [1, 1048576]");
    fields.no_unknown_keys();
    return bytes;
  };
  f.resolve = [read](const nlohmann::json& o, const std::string& where) {
    return nlohmann::json{{"message_bytes", read(o, where)}};
  };
  f.create = [read](const nlohmann::json& o, const std::string& where) {
    return std::make_unique<TelemetryPolicy>(read(o, where));
  };
  return f;
}

}  // namespace nmpsim::methods::extending_example
