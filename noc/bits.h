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

/// The pointer values (bit v for value v, 0 <= v < n) for which round_robin_pick(mask, v, n) picks the
/// same requester as for `start`: the values after the previous requester (cyclically) up to the pick.
inline uint64_t same_pick_starts(uint64_t mask, int start, int n);

/// Index of the first set bit of `mask` (n bits wide) at or after position `start`, wrapping around;
/// -1 if mask is empty. This is a round-robin arbiter whose pointer is `start`.
inline int round_robin_pick(uint64_t mask, int start, int n) {
  if (!mask) return -1;
  const uint64_t rot = rotate_right(mask, start, n);
  const int i = start + __builtin_ctzll(rot);
  return i >= n ? i - n : i;
}

inline uint64_t same_pick_starts(uint64_t mask, int start, int n) {
  const int i = round_robin_pick(mask, start, n);
  const uint64_t below = mask & low_bits(i);
  const int p = 63 - __builtin_clzll(below ? below : mask);  // the previous requester, cyclically
  if (p < i) return low_bits(i + 1) & ~low_bits(p + 1);
  return (low_bits(n) & ~low_bits(p + 1)) | low_bits(i + 1);
}

}  // namespace nmpsim::noc
