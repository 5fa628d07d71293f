// Small bit helpers shared by the router's round-robin arbiters.
#pragma once

#include <cstdint>

namespace nmpsim::noc {

/// Mask with the low n bits set (n <= 64).
inline constexpr uint64_t low_bits(int n) { return n >= 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1); }

/// Rotates an n-bit mask right by s so that bit s becomes bit 0 (round-robin priority start).
inline uint64_t rotate_right(uint64_t mask, int s, int n) {
  if (s == 0) return mask;
  return ((mask >> s) | (mask << (n - s))) & low_bits(n);
}

/// Index of the first set bit of `mask` (n bits wide) at or after position `start`, wrapping around;
/// -1 if mask is empty. This is a round-robin arbiter whose pointer is `start`.
inline int round_robin_pick(uint64_t mask, int start, int n) {
  if (!mask) return -1;
  const uint64_t rot = rotate_right(mask, start, n);
  const int i = start + __builtin_ctzll(rot);
  return i >= n ? i - n : i;
}

}  // namespace nmpsim::noc
