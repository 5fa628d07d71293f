// Worked example (docs/EXTENDING.md): a runtime policy that adds a phase and operations.
// "telemetry": when a layer's combine phase ends, every node sends a small status message to node 0
// on a background stream, in a phase of its own ("telemetry"). The messages are real NoC traffic at
// cycle fidelity; they compete with the next layer's work but nothing waits for them.
#pragma once

#include "nmpsim/mapping/registry.h"

namespace nmpsim::methods::extending_example {

class TelemetryPolicy : public mapping::RuntimePolicy {
 public:
  explicit TelemetryPolicy(double message_bytes) : message_bytes_(message_bytes) {}
  void after_phase(mapping::PolicyContext& ctx, mapping::LayerSchedule& s, uint64_t serial, int phase) override;
  nlohmann::json stats() const override { return {{"messages", messages_}, {"bytes", messages_ * message_bytes_}}; }

 private:
  double message_bytes_;
  long long messages_ = 0;
};

/// The factory the registry holds: options {"message_bytes": 64}.
mapping::PolicyFactory telemetry_factory();

}  // namespace nmpsim::methods::extending_example
