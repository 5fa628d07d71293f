// Worker processes: runs independent jobs (one strategy's cycle-level simulation each) in forked
// children, at most `jobs` at a time. SystemC allows one elaboration and one simulation clock per
// process, so processes, not threads; each child starts from the parent's prepared state (copy on
// write) and builds its own hardware, so a strategy's result does not depend on which strategies
// ran before it or how many ran at once.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace nmpsim::apps {

/// Host cores available (at least 1).
int available_cores();

/// Runs job(0) .. job(count - 1), each in its own child process, at most `jobs` at once, and returns
/// their results in order. A job that throws mapping::InputError or base::ModelFailure is rethrown
/// as one here, any other exception as std::runtime_error with its message; a child killed by a signal is reported as
/// such, naming `names[i]`. `on_done(i)`, when given, is called in this process as each job ends.
std::vector<std::string> run_in_workers(int count, int jobs, const std::vector<std::string>& names,
                                        const std::function<std::string(int)>& job,
                                        const std::function<void(int)>& on_done = {});

}  // namespace nmpsim::apps
