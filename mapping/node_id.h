// Distinct types for the two kinds of node id that meet in a placement: a LogicalNode indexes a
// placement's share columns, a PhysicalNode a position on the mesh (Topology::id). Converting one
// into the other takes a node map (Placement::physical); the compiler refuses to mix them up.
#pragma once

#include <functional>
#include <ostream>

namespace nmpsim::mapping {

template <class Tag>
class NodeId {
 public:
  constexpr NodeId() = default;
  constexpr explicit NodeId(int value) : value_(value) {}
  constexpr int value() const { return value_; }
  constexpr bool valid() const { return value_ >= 0; }
  friend constexpr bool operator==(NodeId a, NodeId b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(NodeId a, NodeId b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(NodeId a, NodeId b) { return a.value_ < b.value_; }
  friend std::ostream& operator<<(std::ostream& os, NodeId n) { return os << n.value_; }

 private:
  int value_ = -1;
};

using LogicalNode = NodeId<struct LogicalNodeTag>;
using PhysicalNode = NodeId<struct PhysicalNodeTag>;

}  // namespace nmpsim::mapping

template <class Tag>
struct std::hash<nmpsim::mapping::NodeId<Tag>> {
  size_t operator()(nmpsim::mapping::NodeId<Tag> n) const noexcept { return std::hash<int>()(n.value()); }
};
