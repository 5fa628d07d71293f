// Flits: the unit that moves through routers, one per cycle per port.
#pragma once

#include <cstdint>

namespace nmpsim::noc {

enum FlitFlags : uint8_t { kHeadFlit = 1, kTailFlit = 2 };

struct Flit {
  uint64_t ready_cycle = 0;  ///< first cycle this flit may win the switch (set on buffer write)
  uint32_t packet = 0;       ///< packet slot id in the network's packet table
  uint32_t dst = 0;          ///< destination node id
  uint16_t seq = 0;          ///< position within the packet, 0 = head
  uint8_t flags = 0;         ///< FlitFlags
  uint8_t vc = 0;            ///< virtual channel on the link it travels
  bool head() const { return flags & kHeadFlit; }
  bool tail() const { return flags & kTailFlit; }
};

}  // namespace nmpsim::noc
