// Runs another program by its argument vector, never through a shell: no user string is ever
// interpreted as a command line.
#pragma once

#include <string>
#include <vector>

namespace nmpsim::apps {

struct ProcessResult {
  bool started = false;  ///< false: the program could not be executed (e.g. not installed)
  int exit_code = -1;    ///< exit status when it exited normally, else -1
};

/// Runs argv[0] (looked up in PATH) with `argv`, in directory `cwd` (empty: the current one), with its
/// standard input from /dev/null and its standard output and error appended to `log_path` (empty:
/// discarded). Waits for it to finish.
ProcessResult run_program(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log_path);

}  // namespace nmpsim::apps
