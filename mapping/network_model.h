// The analytical network models behind flow fidelity, behind one interface: how long a set of
// messages that start together takes, and which links their bytes cross. The cycle-level NoC is the
// reference every model is validated against (docs/PERFORMANCE.md).
#pragma once

#include <vector>

#include "mapping/flow_model.h"

namespace nmpsim::mapping {

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  /// Seconds until every message of a set that starts at the same time has been delivered.
  virtual double seconds(const std::vector<Message>& concurrent) const = 0;
  /// Adds a message's bytes to the directed links it crosses, [node * 4 + dir].
  virtual void add_link_bytes(const Message& m, std::vector<double>& link_bytes) const = 0;
};

/// The link-load bound (flow_model.h): the busiest link or NI channel's bytes / bandwidth, plus the
/// longest zero-load head latency; XY routes.
class LinkLoadBound : public NetworkModel {
 public:
  explicit LinkLoadBound(const AnalyticalHardware& hw) : hw_(hw), model_(hw) {}
  double seconds(const std::vector<Message>& concurrent) const override { return model_.seconds(concurrent); }
  void add_link_bytes(const Message& m, std::vector<double>& link_bytes) const override {
    add_link_load(hw_.topology, m.src, m.dst, m.bytes, link_bytes);
  }

 private:
  AnalyticalHardware hw_;
  LinkLoadModel model_;
};

}  // namespace nmpsim::mapping
