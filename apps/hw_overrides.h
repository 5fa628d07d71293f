// One-off hardware overrides, `--set PATH=VALUE` (issue 17): any field of the hardware description
// by its JSON path as the field table declares it (`nmpsim hw --fields`: compute.peak_tflops,
// links.on_die.gbytes_per_s, mesh.width, ...). The result is a full description, named after the base
// with the overrides appended, and validated like any hardware JSON when it is loaded.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nmpsim::apps {

/// A command-line VALUE (of --set or --axis) as JSON when it parses as a number, boolean or quoted
/// string, else as a plain string.
nlohmann::json parse_value(const std::string& text);

/// `hardware`: a preset name or file (string) or a description (object). Each `sets` entry is
/// PATH=VALUE; PATH must name a field of the table (hw::find_hardware_field), VALUE be of its type and
/// in its range, and the field apply to the result (no die-to-die links on a one-die chip). Throws
/// InputError "--set PATH: ..." otherwise. A die or wafer that spanned the whole mesh keeps spanning it
/// when mesh.width / mesh.height change.
nlohmann::json override_hardware(const nlohmann::json& hardware, const std::vector<std::string>& sets);

}  // namespace nmpsim::apps
