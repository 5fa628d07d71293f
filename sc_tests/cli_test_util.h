// Runs the nmpsim binary for CLI tests by its argument vector (fork/exec, never a shell), with its
// standard output and error captured separately.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace nmpsim::testing {

struct CliRun {
  int code = -1;            ///< exit status; -1 if killed by a signal
  int signal = 0;           ///< the signal that killed it, if any
  bool timed_out = false;   ///< killed by CliOptions::timeout_s
  bool group_left = false;  ///< a process of its process group was still alive after it ended
  std::string stdout_text, stderr_text;
  std::string out;  ///< stdout + stderr
};

struct CliOptions {
  std::string cwd;                 ///< run in this directory (empty: the current one)
  std::string stdout_path;         ///< send stdout here instead of capturing it (e.g. /dev/full)
  long long file_size_limit = -1;  ///< RLIMIT_FSIZE in bytes (-1: unchanged)
  std::vector<std::string> env;    ///< extra NAME=VALUE entries
  double timeout_s = 0;            ///< kill the run (SIGKILL) after this long (0: wait for ever)
  int signal = 0;                  ///< send this signal to nmpsim ...
  double signal_after_s = 0;       ///< ... after this long
  /// Called in the test while nmpsim runs, just before `signal` is sent (e.g. to look at its files).
  std::function<void()> before_signal = {};
};

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Runs NMPSIM_BIN with `args` (no shell is involved: quotes and spaces reach nmpsim as they are).
inline CliRun run_nmpsim(const std::vector<std::string>& args, const CliOptions& o = {}) {
  char out_tmpl[] = "/tmp/nmpsim_cli_outXXXXXX", err_tmpl[] = "/tmp/nmpsim_cli_errXXXXXX";
  const int out_fd = mkstemp(out_tmpl), err_fd = mkstemp(err_tmpl);
  std::vector<std::string> argv_s{NMPSIM_BIN};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  auto overridden = [&](const std::string& entry) {
    for (const std::string& x : o.env)
      if (entry.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0) return true;
    return false;
  };
  for (char** e = environ; *e; ++e)
    if (!overridden(*e)) env_s.push_back(*e);
  env_s.insert(env_s.end(), o.env.begin(), o.env.end());
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own process group: the test can tell whether any of its workers outlives it
    int stdout_fd = out_fd;
    if (!o.stdout_path.empty()) stdout_fd = open(o.stdout_path.c_str(), O_WRONLY);
    dup2(stdout_fd, 1);
    dup2(err_fd, 2);
    if (o.file_size_limit >= 0) {
      const rlimit lim{static_cast<rlim_t>(o.file_size_limit), static_cast<rlim_t>(o.file_size_limit)};
      setrlimit(RLIMIT_FSIZE, &lim);
    }
    if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) _exit(126);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);
  int status = 0;
  bool timed_out = false, signalled = false;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (o.signal && !signalled && t >= o.signal_after_s) {
      if (o.before_signal) o.before_signal();
      kill(pid, o.signal);
      signalled = true;
    }
    if (o.timeout_s > 0 && t >= o.timeout_s && !timed_out) {
      kill(-pid, SIGKILL);
      timed_out = true;
    }
    usleep(5000);
  }
  usleep(20000);
  const bool group_left = kill(-pid, 0) == 0;
  if (group_left) kill(-pid, SIGKILL);
  close(out_fd);
  close(err_fd);
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  r.timed_out = timed_out;
  r.group_left = group_left;
  r.stdout_text = read_all(out_tmpl);
  r.stderr_text = read_all(err_tmpl);
  r.out = r.stdout_text + r.stderr_text;
  unlink(out_tmpl);
  unlink(err_tmpl);
  return r;
}

/// Splits on spaces (for argument lists without spaces inside arguments).
inline std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

inline CliRun nmpsim(const std::string& args) { return run_nmpsim(words(args)); }

/// A one-layer Mixtral-8x7B (`nmpsim model --print-json`, one MoE layer, no dense one), written into
/// the test's temporary directory; returns its path.
inline std::string one_layer_model() {
  const std::string path = ::testing::TempDir() + "nmpsim_router_model.json";
  const CliRun r = run_nmpsim({"model", "--model", "mixtral-8x7b", "--print-json"});
  nlohmann::json m = nlohmann::json::parse(r.stdout_text);
  m["moe_layers"] = 1;
  m["dense_layers"] = 0;
  std::ofstream(path) << m.dump();
  return path;
}

inline int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace nmpsim::testing
