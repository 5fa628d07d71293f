// What a process leaves behind if it is interrupted: the temporary files and directories it has
// staged and the child processes it has started. `install_signal_handlers()` (called once by the
// command line's main) makes SIGINT, SIGTERM and SIGHUP forward the signal to the registered
// children, wait for them (2 s, then SIGKILL), remove the registered paths and end the process by the
// same signal. Everything the handler touches is a fixed table of plain characters and numbers, and
// the handler uses only async-signal-safe calls (the pattern of GNU sort's temporary files).
//
// This is the project's one piece of process-wide mutable state: a signal handler has no other way to
// learn what to clean up.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>

namespace nmpsim::base::cleanup {

enum class PathKind {
  kFile,      ///< unlinked
  kTree,      ///< a staging directory: its entries (two levels deep at most) and itself removed
  kEmptyDir,  ///< a directory this process created for outputs: removed only if empty
};

/// Registers `path` for removal on a fatal signal; returns a handle for unregister_path (-1 if the
/// table of 256 paths is full or the path longer than 4095 bytes: the path is then not cleaned up).
int register_path(const std::string& path, PathKind kind);
void unregister_path(int handle);

/// Registers a child process to forward fatal signals to (and wait for).
void register_child(pid_t pid);
void unregister_child(pid_t pid);

/// In a child right after fork(): forget the parent's paths and children (the child cleans up only
/// what it registers itself; the parent cleans up its own).
void forget_inherited();

/// fork() with the handled signals blocked across it: the child forgets what it inherited
/// (forget_inherited) and the parent registers the child before either can take a signal. Returns
/// fork()'s value.
pid_t fork_child();

/// While it lives, SIGINT, SIGTERM and SIGHUP wait (blocked, pending); when it ends they are delivered
/// to whatever handler is installed then. For library calls that install their own SIGINT handler and
/// swallow the signal (COIN-OR Clp's initialSolve does), so that an interrupt still ends the process.
class SignalsDeferred {
 public:
  SignalsDeferred();
  ~SignalsDeferred();
  SignalsDeferred(const SignalsDeferred&) = delete;
  SignalsDeferred& operator=(const SignalsDeferred&) = delete;

 private:
  sigset_t old_;
};

/// Installs the handlers for SIGINT, SIGTERM and SIGHUP. Idempotent.
void install_signal_handlers();

/// Removes a staging tree now (the same walk the handler makes), ignoring errors.
void remove_tree(const std::string& path);

}  // namespace nmpsim::base::cleanup
