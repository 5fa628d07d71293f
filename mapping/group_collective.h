// The collectives of an attention group: one ring (one way or both ways), or 2D on the mesh rectangle the
// group fills, and `auto`, which picks the one whose idle-mesh closed form is smallest (docs/MODEL.md
// "Layer schedules": "2D collectives and auto").
#pragma once

#include <vector>

#include "nmpsim/mapping/analytical_hardware.h"
#include "nmpsim/mapping/schedule.h"

namespace nmpsim::mapping {

/// The mesh rectangle a group fills: rows[y][x] and cols[x][y] are node ids; a x b = width x height.
/// Empty (a == 0) when the members are not exactly a rectangle.
struct GroupRect {
  int a = 0, b = 0;
  std::vector<std::vector<int>> rows, cols;
};
GroupRect group_rect(const Topology& t, const std::vector<int>& members);

/// What the closed forms need of the hardware.
struct CollectiveCosts {
  double link_bytes_per_s = 0;     ///< slowest link inside the group
  double node_ni_bytes_per_s = 0;  ///< all of a node's NI ports together
  double hop_s = 0;                ///< one hop's zero-load latency (router pipeline and link)
  double startup_s = 0;            ///< a kernel reduction's start-up (0 when fused)
};
CollectiveCosts collective_costs(const AnalyticalHardware& hw, const std::vector<int>& members);

/// Seconds an all-gather or reduce-scatter of `chunk_bytes` per member takes on an idle mesh with
/// algorithm `alg` (kOneWay, kBidirectional or k2d), by the closed forms of docs/MODEL.md. Infinity
/// when the algorithm does not apply (2D on a group that is not a rectangle of sides >= 2).
double group_collective_s(RingAlgorithm alg, const std::vector<int>& ring, const GroupRect& rect, double chunk_bytes,
                          bool reduce, const CollectiveCosts& k);

/// What a group collective is built from.
struct GroupCollective {
  CollectiveKind kind = CollectiveKind::kRingAllGather;
  std::vector<int> ring;            ///< the group's Hamiltonian ring order
  std::vector<double> chunk_bytes;  ///< per ring position
  double element_bytes = 2;
  ReduceMode reduce = ReduceMode::kKernel;
  RingAlgorithm algorithm = RingAlgorithm::kOneWay;  ///< resolved: never kAuto
  GroupRect rect;                                    ///< for k2d
};

/// Sets c.algorithm (and c.rect) from `want`: one-way and both-way rings as they are; `2d` on the
/// members' mesh rectangle; `auto` the one of the three whose idle-mesh closed form is smallest for
/// c's mean chunk (ties to the simpler). Without `hw`, `2d` and `auto` run as a one-way ring.
void resolve_algorithm(GroupCollective& c, RingAlgorithm want, const AnalyticalHardware* hw);

/// Adds `c` to phase `ph` after `deps`; returns the joins of its last collectives.
DepList add_group_collective(LayerSchedule& s, int ph, const GroupCollective& c, const DepList& deps);

}  // namespace nmpsim::mapping
