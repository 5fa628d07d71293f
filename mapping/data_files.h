// Vendored data shipped with nmpsim under data/ (see data/README.md): the Mixtral-8x7B MT-Bench
// routing traces and the HD-MoE authors' reference tables. Plain C++.
#pragma once

#include <string>
#include <vector>

namespace nmpsim::mapping {

/// The data folder: $NMPSIM_DATA_DIR when set, otherwise the source tree's data/ (fixed at build time).
std::string data_dir();
/// Names of the vendored routing traces: "mtbench-<category>" (Mixtral-8x7B, 8 experts, top-2, 32 layers).
std::vector<std::string> vendored_trace_names();
/// A vendored trace name resolved to its file under data_dir(); anything else is returned unchanged (a path).
std::string resolve_trace_path(const std::string& name_or_path);

}  // namespace nmpsim::mapping
