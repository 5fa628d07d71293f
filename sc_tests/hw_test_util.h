// Shared by the hardware-description tests (test_hw_spec, test_hw_fields, test_hw_levels).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "nmpsim/hw/hardware_spec.h"

namespace nmpsim::hw::testing {

/// The one-line error reading `j` as "hw.json" gives, or "" when it reads.
inline std::string error_of(const nlohmann::json& j) {
  try {
    hardware_from_json(j, "hw.json");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

}  // namespace nmpsim::hw::testing
