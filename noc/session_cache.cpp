#include "nmpsim/noc/session_cache.h"

namespace nmpsim::noc {

size_t Session::footprint_bytes() const {
  return sizeof(Session) + sends.capacity() * sizeof(SessionSend) + steps.footprint_bytes() +
         (delivery_send.capacity() + delivery_step.capacity()) * sizeof(uint32_t) +
         (reads.capacity() + finals.capacity()) * sizeof(RrPointer) + routers.capacity() * sizeof(RouterDelta);
}

uint64_t SessionCache::key(const SessionSend& f) {
  return base::session_key({uint64_t(f.local), f.rel_cycle, uint64_t(uint32_t(f.src)), uint64_t(uint32_t(f.dst)),
                            f.bytes, uint64_t(f.flits), uint64_t(f.packet_flits)});
}

}  // namespace nmpsim::noc
