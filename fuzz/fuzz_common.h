// Shared by the fuzz targets: a parser may reject an input only with nmpsim's one-line input errors;
// any other exception (or a crash, a leak, undefined behaviour) is a bug the fuzzer reports.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::fuzz {

/// Runs `f`; an InputError (or `Allowed`) is a correct rejection, anything else aborts.
template <class Allowed = mapping::InputError, class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const mapping::InputError& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) {
      std::fprintf(stderr, "error message spans lines: %s\n", e.what());
      std::abort();
    }
  } catch (const Allowed&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
}

inline std::string text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace nmpsim::fuzz
