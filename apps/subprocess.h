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
/// Writes `script` to DIR/NAME.gp and runs gnuplot on it in DIR (by argv: no path or label reaches a
/// shell), its messages in DIR/NAME.log. Returns empty, or a one-line note (no gnuplot, it failed).
std::string run_gnuplot(const std::string& dir, const std::string& name, const std::string& script);

}  // namespace nmpsim::apps
