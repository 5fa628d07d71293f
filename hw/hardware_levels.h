// A hardware description's general hierarchy: "levels", an array of up to five nested rectangles, the
// finest first and the whole system last, each with its links (docs/FORMATS.md "Hierarchies of any
// depth"). The classic form (die / wafer / links) is the field table's (hardware_fields.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "nmpsim/base/json_fields.h"
#include "nmpsim/mapping/topology.h"

namespace nmpsim::hw {

/// Reads root["levels"] into `t` (t.classic = false). The mesh size must be read already: a level's
/// link fields are required only where such links exist. One-line InputErrors name the field.
void read_levels(const base::JsonFields& root, mapping::Topology& t);
/// The "levels" array of a general topology (the last level without a size).
nlohmann::json write_levels(const mapping::Topology& t);
/// `--set levels.<i>.<field>=value` on a description `j` that has "levels"; throws InputError (one line).
void set_level_field(nlohmann::json& j, const std::string& path, const nlohmann::json& value);
/// The fields of one level, as Markdown table rows (docs/FORMATS.md, `nmpsim hw --fields`). With `values`
/// (a general topology) each row ends with a value column: every level's value, the finest first ("-"
/// where a level has no such field: the last level's size, a level without links).
std::string levels_fields_markdown(const mapping::Topology* values = nullptr);

}  // namespace nmpsim::hw
