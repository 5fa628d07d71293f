// Reading and writing a Verilated flit pin of any width as rtl::FlitBits, for the glue that
// nmpsim_add_router_rtl generates (cmake/NmpsimRouterRtl.cmake). Verilator gives a pin of up to 8,
// 16, 32 or 64 bits an integer type and a wider one a VlWide<words> of 32-bit words.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nmpsim/rtl_checks/described_router.h"
#include "verilated.h"

namespace nmpsim::rtl {

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
