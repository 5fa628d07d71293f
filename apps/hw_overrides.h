// One-off hardware overrides, `--set PATH=VALUE` (issue 17): any field of the hardware description
// by its JSON path as `nmpsim hw --print-json` shows it (compute.peak_tflops,
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
/// PATH=VALUE; PATH must name an existing number, string or boolean field, and VALUE must be of its
/// kind (an integer for an integer field). Throws InputError "--set PATH: ..." otherwise. A die or
/// wafer that spanned the whole mesh keeps spanning it when mesh.width / mesh.height change.
nlohmann::json override_hardware(const nlohmann::json& hardware, const std::vector<std::string>& sets);

}  // namespace nmpsim::apps
