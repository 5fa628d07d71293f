// The hardware description's parameters, each declared once: JSON path, type, unit, range, one-line
// doc, and where it lives in HardwareSpec. Its default is the value of a default-constructed
// HardwareSpec (the struct initialisers are the one place a default is written). Reading, writing,
// range validation, `--set`, `nmpsim hw --fields` and the table in docs/FORMATS.md are all produced
// from this table (after SST's documented parameter registration, ELI_DOCUMENT_PARAMS).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nmpsim::hw {

struct HardwareSpec;

enum class FieldType { kNumber, kInteger, kBoolean, kText, kChoice };
/// "number", "integer", "boolean", "text", "choice".
const char* field_type_name(FieldType t);

/// When a field must be given.
enum class Presence {
  kOptional,  ///< absent: its default (or `default_from`)
  kRequired   ///< wherever it applies (a link level's bandwidth: where the topology has that level)
};

struct HardwareField {
  std::string path;  ///< JSON path, "compute.peak_tflops"
  FieldType type = FieldType::kNumber;
  std::string unit;                  ///< "TFLOP/s", "ns", ... ("-" for none)
  double min = 0, max = 0;           ///< inclusive range (kNumber, kInteger)
  bool power_of_two = false;         ///< kInteger: also a power of two
  std::vector<std::string> choices;  ///< kChoice: the accepted names, in the enum's order
  Presence presence = Presence::kOptional;
  std::string default_from;  ///< absent: the value of this other field (read before this one)
  std::string range_note;    ///< what the range column adds to [min, max] (cross-field rules)
  std::string default_note;  ///< what the default column adds (the meaning of 0, say)
  std::string doc;           ///< one line
  /// The value in the JSON's unit, from a spec; and into a spec (already checked against the type).
  std::function<nlohmann::json(const HardwareSpec&)> get;
  std::function<void(HardwareSpec&, const nlohmann::json&)> set;
  /// Whether the field is read and validated for this spec (a link level the topology lacks: no).
  std::function<bool(const HardwareSpec&)> applies;
  std::string applies_note;  ///< when it applies, in words ("where the topology has die-to-die links")
  /// Given where it does not apply: an error (compute.static_w with scaled static power), and not
  /// written there. Without it such a field is read and ignored (a link level the mesh lacks).
  bool strict_applies = false;
  /// A field of the classic hierarchy (die, wafer, links): absent from a description with "levels".
  bool classic_only = false;

  /// Parent object's path ("compute"; "" at the root) and the last key ("peak_tflops").
  std::string parent() const;
  std::string key() const;
  /// Its place in a JSON document ("/compute/peak_tflops").
  nlohmann::json::json_pointer pointer() const;
  /// "[0.001, 1e6]", "1..4096", "power of two, 64..2^20", "`vc`, `lookahead`", "true, false", ...
  std::string range_text() const;
  /// "required", or the default as written in JSON, with default_note.
  std::string default_text() const;
  /// A one-line error if `v` (in the JSON's unit) is outside the range, else "".
  std::string violation(const nlohmann::json& v) const;
};

/// Every field, in reading order (a field's default_from comes before it).
const std::vector<HardwareField>& hardware_fields();
/// The field with this JSON path, or nullptr.
const HardwareField* find_hardware_field(const std::string& path);

/// The table of docs/FORMATS.md (Markdown): field, type, unit, default, range, meaning. With a spec, a
/// column "value" gives that spec's values (fields that do not apply to it: blank).
std::string hardware_fields_markdown(const HardwareSpec* values = nullptr);

/// Reads a hardware description's fields from `j` into `s` (one-line errors naming `where` and the
/// field; unknown keys are errors). Does not validate cross-field rules: HardwareSpec::validate does.
void read_hardware_fields(const nlohmann::json& j, const std::string& where, HardwareSpec& s);
/// Every field of `s` as JSON (to_json).
nlohmann::json write_hardware_fields(const HardwareSpec& s);
/// The first field of `s` outside its range, as "path: why", or "" (HardwareSpec::validate).
std::string first_field_violation(const HardwareSpec& s);

}  // namespace nmpsim::hw
