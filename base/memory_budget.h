// How much memory one nmpsim process may plan to use: inputs whose estimated cost (the memory model
// of mapping/memory_model.h) exceeds it are refused before the work, with a one-line error.
#pragma once

#include <cstdint>
#include <string>

namespace nmpsim::base {

/// 3/4 of the smaller of the machine's physical memory and the process's address-space and data
/// limits (RLIMIT_AS, RLIMIT_DATA), or $NMPSIM_MEMORY_BUDGET_MIB when set (a positive integer, MiB).
uint64_t memory_budget_bytes();
/// Where the budget comes from, for error messages ("3/4 of this machine's 23.4 GiB", "...").
std::string memory_budget_source();
/// "1.5 GiB", "340 MiB".
std::string bytes_text(double bytes);

}  // namespace nmpsim::base
