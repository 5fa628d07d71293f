// Reading and writing Verilated pins for the glue that nmpsim_add_router_rtl generates
// (cmake/NmpsimRouterRtl.cmake): a whole flit pin, one bit of a pin, or a slice [lo +: width] of a
// packed vector (a link bundle such as {valid, ready, data} per direction), of any width. Verilator
// gives a pin of up to 8, 16, 32 or 64 bits an integer type and a wider one a VlWide<words> of
// 32-bit words. This header includes only rtl_pin_io.h and Verilator's, so plugins built out of
// tree compile against it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "nmpsim/rtl_checks/rtl_pin_io.h"
#include "verilated.h"

namespace nmpsim::rtl {

/// The bits a pin's C++ type can hold (its declared width may be less).
template <class T>
constexpr int pin_capacity(const T*) {
  return static_cast<int>(sizeof(T) * 8);
}
template <std::size_t N>
constexpr int pin_capacity(const VlWide<N>*) {
  return static_cast<int>(N * 32);
}

template <class T>
bool get_bit(const T& pin, int b) {
  return (static_cast<uint64_t>(pin) >> b) & 1u;
}
template <std::size_t N>
bool get_bit(const VlWide<N>& pin, int b) {
  return (pin[static_cast<std::size_t>(b / 32)] >> (b % 32)) & 1u;
}
template <class T>
void set_bit(T& pin, int b, bool v) {
  const uint64_t m = uint64_t{1} << b;
  pin = static_cast<T>((static_cast<uint64_t>(pin) & ~m) | (v ? m : 0));
}
template <std::size_t N>
void set_bit(VlWide<N>& pin, int b, bool v) {
  const uint32_t m = uint32_t{1} << (b % 32);
  uint32_t& word = pin[static_cast<std::size_t>(b / 32)];
  word = v ? word | m : word & ~m;
}

/// Bits [lo, lo + width) of a pin (width <= 64), from bit 0.
template <class T>
uint64_t get_bits(const T& pin, int lo, int width) {
  const uint64_t v = static_cast<uint64_t>(pin) >> lo;
  return width >= 64 ? v : v & ((uint64_t{1} << width) - 1);
}
template <std::size_t N>
uint64_t get_bits(const VlWide<N>& pin, int lo, int width) {
  uint64_t v = 0;
  for (int got = 0; got < width;) {  // 32-bit words, a piece of each
    const int b = lo + got, sh = b % 32, take = std::min(32 - sh, width - got);
    v |= ((static_cast<uint64_t>(pin[static_cast<std::size_t>(b / 32)]) >> sh) & ((uint64_t{1} << take) - 1)) << got;
    got += take;
  }
  return v;
}
/// Writes v's bits [0, width) into bits [lo, lo + width) of a pin (width <= 64): a strap value.
template <class T>
void put_value(T& pin, int lo, int width, uint64_t v) {
  const uint64_t m = (width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1) << lo;
  pin = static_cast<T>((static_cast<uint64_t>(pin) & ~m) | ((v << lo) & m));
}
template <std::size_t N>
void put_value(VlWide<N>& pin, int lo, int width, uint64_t v) {
  for (int done = 0; done < width;) {
    const int b = lo + done, sh = b % 32, take = std::min(32 - sh, width - done);
    const uint32_t m = static_cast<uint32_t>(((uint64_t{1} << take) - 1) << sh);
    uint32_t& word = pin[static_cast<std::size_t>(b / 32)];
    word = (word & ~m) | (static_cast<uint32_t>((v >> done) << sh) & m);
    done += take;
  }
}

/// Bits [lo, lo + width) of a pin, as a flit word from bit 0.
template <class T>
FlitBits get_slice(const T& pin, int lo, int width) {
  FlitBits f;
  for (int k = 0; 64 * k < width; ++k)
    f.w[static_cast<std::size_t>(k)] = get_bits(pin, lo + 64 * k, std::min(64, width - 64 * k));
  return f;
}
/// Writes flit word bits [0, width) into bits [lo, lo + width) of a pin.
template <class T>
void put_slice(T& pin, int lo, int width, const FlitBits& f) {
  for (int k = 0; 64 * k < width; ++k)
    put_value(pin, lo + 64 * k, std::min(64, width - 64 * k), f.w[static_cast<std::size_t>(k)]);
}

template <class T>
void put_flit(T& pin, const FlitBits& b) {
  static_assert(sizeof(T) <= 8, "an integer pin holds at most 64 bits");
  pin = static_cast<T>(b.w[0]);
}

template <std::size_t N>
void put_flit(VlWide<N>& pin, const FlitBits& b) {
  static_assert(N * 32 <= FlitBits::kMaxBits, "flit pins are at most 512 bits wide");
  for (std::size_t i = 0; i < N; ++i) pin[i] = static_cast<uint32_t>(b.w[i / 2] >> (32 * (i % 2)));
}

template <class T>
FlitBits get_flit(const T& pin) {
  FlitBits b;
  b.w[0] = static_cast<uint64_t>(pin);
  return b;
}

template <std::size_t N>
FlitBits get_flit(const VlWide<N>& pin) {
  FlitBits b;
  for (std::size_t i = 0; i < N; ++i) b.w[i / 2] |= static_cast<uint64_t>(pin[i]) << (32 * (i % 2));
  return b;
}

}  // namespace nmpsim::rtl
