// The error type for a failed simulation check (a stall, a flit conservation or pin-check violation, a
// router's own error): the model, or a router plugged into it, did something wrong, as opposed to
// bad input (base::InputError, exit code 2) or a bug in nmpsim. The command line reports it as
// "model failure" with exit code 1.
#pragma once

#include <stdexcept>
#include <string>

#include "nmpsim/base/errors.h"

namespace nmpsim::base {

/// Thrown when a simulation check fails; what() is the whole message, on one line.
class ModelFailure : public std::runtime_error {
 public:
  explicit ModelFailure(const std::string& what) : std::runtime_error(one_line(what)) {}
};

}  // namespace nmpsim::base
