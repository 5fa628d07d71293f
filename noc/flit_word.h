// The pin-level encoding of flits and credits shared by the SystemC router module
// (noc::ScRouter), the Verilated RTL router (rtl_checks/) and the co-simulation checks.
//
// Flit word, 64 bits:
//   [0] valid  [1] head  [2] tail  [5:3] vc  [13:6] dst x  [21:14] dst y  [37:22] seq
//   [63:38] packet id (26 bits; payload the router carries unchanged)
// Credit word, 4 bits: [0] valid [3:1] vc.
// A zero word means "nothing this cycle".
#pragma once

#include <cstdint>
#include <string>

#include "nmpsim/noc/flit.h"
#include "nmpsim/noc/noc_config.h"

namespace nmpsim::noc {

inline constexpr int kFlitWordPacketBits = 26;
inline constexpr uint32_t kFlitWordMaxPacket = (uint32_t{1} << kFlitWordPacketBits) - 1;

/// Encodes a flit (dst as node id) into a valid flit word. Fields must fit: vc < 8, dst inside
/// the mesh (x, y < 256), packet <= kFlitWordMaxPacket.
inline uint64_t encode_flit_word(const Flit& f, const MeshGeometry& geo) {
  const uint64_t x = static_cast<uint64_t>(geo.x(static_cast<int>(f.dst)));
  const uint64_t y = static_cast<uint64_t>(geo.y(static_cast<int>(f.dst)));
  return uint64_t{1} | (uint64_t{f.flags & 3u} << 1) | (uint64_t{f.vc & 7u} << 3) | (x << 6) | (y << 14) |
         (uint64_t{f.seq} << 22) | (uint64_t{f.packet & kFlitWordMaxPacket} << 38);
}

inline bool flit_word_valid(uint64_t w) { return w & 1u; }
inline int flit_word_vc(uint64_t w) { return static_cast<int>((w >> 3) & 7u); }
inline int flit_word_x(uint64_t w) { return static_cast<int>((w >> 6) & 0xffu); }
inline int flit_word_y(uint64_t w) { return static_cast<int>((w >> 14) & 0xffu); }

/// Decodes a valid flit word (ready_cycle is left 0: the receiving router sets it).
inline Flit decode_flit_word(uint64_t w, const MeshGeometry& geo) {
  Flit f;
  f.flags = static_cast<uint8_t>((w >> 1) & 3u);
  f.vc = static_cast<uint8_t>(flit_word_vc(w));
  f.dst = static_cast<uint32_t>(geo.id(flit_word_x(w), flit_word_y(w)));
  f.seq = static_cast<uint16_t>((w >> 22) & 0xffffu);
  f.packet = static_cast<uint32_t>(w >> 38);
  return f;
}

inline uint32_t encode_credit_word(int vc) { return 1u | (static_cast<uint32_t>(vc & 7) << 1); }
inline bool credit_word_valid(uint32_t w) { return w & 1u; }
inline int credit_word_vc(uint32_t w) { return static_cast<int>((w >> 1) & 7u); }

/// "head+tail vc1 to (3,2) packet 17 seq 0", or "none" for an empty word. For mismatch reports.
inline std::string describe_flit_word(uint64_t w) {
  if (!flit_word_valid(w)) return "none";
  std::string kind = (w & 2u) ? ((w & 4u) ? "head+tail" : "head") : ((w & 4u) ? "tail" : "body");
  return kind + " vc" + std::to_string(flit_word_vc(w)) + " to (" + std::to_string(flit_word_x(w)) + "," +
         std::to_string(flit_word_y(w)) + ") packet " + std::to_string(w >> 38) + " seq " +
         std::to_string((w >> 22) & 0xffffu);
}

inline std::string describe_credit_word(uint32_t w) {
  return credit_word_valid(w) ? "credit vc" + std::to_string(credit_word_vc(w)) : "none";
}

}  // namespace nmpsim::noc
