// Reading and writing Verilated pins for the glue that nmpsim_add_router_rtl generates
// (cmake/NmpsimRouterRtl.cmake): a whole flit pin, one bit of a pin, or a slice [lo +: width] of a
// packed vector (a link bundle such as {valid, ready, data} per direction), of any width. Verilator
// gives a pin of up to 8, 16, 32 or 64 bits an integer type and a wider one a VlWide<words> of
// 32-bit words. This header includes only rtl_pin_io.h and Verilator's, so plugins built out of
// tree compile against it.
#pragma once

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

/// Bits [lo, lo + width) of a pin, as a flit word from bit 0.
template <class T>
FlitBits get_slice(const T& pin, int lo, int width) {
  FlitBits f;
  for (int i = 0; i < width; ++i)
    if (get_bit(pin, lo + i)) f.w[static_cast<std::size_t>(i / 64)] |= uint64_t{1} << (i % 64);
  return f;
}
/// Writes flit word bits [0, width) into bits [lo, lo + width) of a pin.
template <class T>
void put_slice(T& pin, int lo, int width, const FlitBits& f) {
  for (int i = 0; i < width; ++i) set_bit(pin, lo + i, (f.w[static_cast<std::size_t>(i / 64)] >> (i % 64)) & 1u);
}
/// A strap value into bits [lo, lo + width) (width <= 64).
template <class T>
void put_value(T& pin, int lo, int width, uint64_t v) {
  for (int i = 0; i < width; ++i) set_bit(pin, lo + i, (v >> i) & 1u);
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
