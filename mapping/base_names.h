// The base utilities the mapping layer (and the methods built on it) use by their short names:
// strict JSON reading, one-line input errors, the seeded RNG. Callers outside may also write
// mapping::InputError. Included by mapping/topology.h, so every mapping header has them.
#pragma once

#include "nmpsim/base/errors.h"
#include "nmpsim/base/json_fields.h"
#include "nmpsim/base/rng.h"

namespace nmpsim::mapping {

using base::check_no_nul;
using base::check_underflow;
using base::describe_json;
using base::InputError;
using base::is_valid_name;
using base::JsonFields;
using base::kMaxJsonDepth;
using base::number_text;
using base::NumberRange;
using base::one_line;
using base::parse_json_text;
using base::read_json_file;
using base::read_text_file;
using base::Rng;

}  // namespace nmpsim::mapping
