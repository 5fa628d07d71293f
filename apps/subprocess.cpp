#include "nmpsim/apps/subprocess.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "nmpsim/base/cleanup.h"

namespace nmpsim::apps {

ProcessResult run_program(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log_path) {
  ProcessResult r;
  if (argv.empty()) return r;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int status_pipe[2];  // the child reports a failed exec through this close-on-exec pipe
  if (pipe2(status_pipe, O_CLOEXEC) != 0) return r;
  const pid_t pid = base::cleanup::fork_child();
  if (pid < 0) {
    close(status_pipe[0]);
    close(status_pipe[1]);
    return r;
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    close(status_pipe[0]);
    const int in = open("/dev/null", O_RDONLY);
    const int out = open(log_path.empty() ? "/dev/null" : log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 ||
        (!cwd.empty() && chdir(cwd.c_str()) != 0)) {
      const int e = errno;
      (void)!write(status_pipe[1], &e, sizeof e);
      _exit(127);
    }
    execvp(args[0], args.data());
    const int e = errno;
    (void)!write(status_pipe[1], &e, sizeof e);
    _exit(127);
  }
  close(status_pipe[1]);
  int child_errno = 0;
  ssize_t got;
  do {
    got = read(status_pipe[0], &child_errno, sizeof child_errno);
  } while (got < 0 && errno == EINTR);
  close(status_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  base::cleanup::unregister_child(pid);
  r.started = got == 0;  // the pipe closed on a successful exec without a byte written
  if (r.started && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

std::string run_gnuplot(const std::string& dir, const std::string& name, const std::string& script) {
  {
    std::ofstream f(dir + "/" + name + ".gp");
    f << script;
    if (!f) return "plots skipped: cannot write the plot script in " + dir;
  }
  const ProcessResult r = run_program({"gnuplot", name + ".gp"}, dir, dir + "/" + name + ".log");
  if (!r.started) return "plots skipped: gnuplot is not installed (bash .ci/install-deps.sh installs it)";
  if (r.exit_code != 0) return "plots failed: gnuplot's messages are in " + name + ".log";
  return "";
}

}  // namespace nmpsim::apps
