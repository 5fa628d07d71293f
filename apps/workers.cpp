#include "nmpsim/apps/workers.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "nmpsim/base/cleanup.h"
#include "nmpsim/base/model_failure.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/noc/noc_config.h"

namespace nmpsim::apps {

namespace {

// A child's answer, in an anonymous temporary file (gone when closed): one status byte, then text.
enum : char { kOk = '0', kFailed = '1', kBadInput = '2', kModelFailed = '3' };

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    done += static_cast<size_t>(n);
  }
}

std::string read_all(FILE* f) {
  std::string s;
  if (std::fseek(f, 0, SEEK_SET) != 0) return s;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

[[noreturn]] void child(FILE* out, int i, const std::function<std::string(int)>& job) {
  char status = kOk;
  std::string text;
  try {
    text = job(i);
  } catch (const mapping::InputError& e) {
    status = kBadInput;
    text = e.what();
  } catch (const noc::ConfigError& e) {  // a configuration the job's hardware refuses: bad input too
    status = kBadInput;
    text = e.what();
  } catch (const base::ModelFailure& e) {
    status = kModelFailed;
    text = e.what();
  } catch (const std::exception& e) {
    status = kFailed;
    text = e.what();
  }
  write_all(fileno(out), std::string(1, status) + text);
  std::fflush(stderr);
  _exit(0);  // no atexit handlers, no second flush of the parent's buffers
}

}  // namespace

int available_cores() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

std::vector<std::string> run_in_workers(int count, int jobs, const std::vector<std::string>& names,
                                        const std::function<std::string(int)>& job,
                                        const std::function<void(int)>& on_done) {
  std::vector<std::string> results(static_cast<size_t>(count));
  std::map<pid_t, std::pair<int, FILE*>> running;
  std::string first_error;
  bool bad_input = false, model_failed = false;
  auto reap = [&] {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) throw std::runtime_error(std::string("waiting for a worker: ") + std::strerror(errno));
    base::cleanup::unregister_child(pid);
    auto it = running.find(pid);
    if (it == running.end()) return;
    const auto [i, file] = it->second;
    running.erase(it);
    const std::string answer = read_all(file);
    std::fclose(file);
    const std::string& name = names[static_cast<size_t>(i)];
    std::string error;
    if (WIFSIGNALED(status))
      error = "strategy " + name + ": its worker process was killed by signal " + std::to_string(WTERMSIG(status));
    else if (answer.empty())
      error = "strategy " + name + ": its worker process ended without a result";
    else if (answer[0] == kOk)
      results[static_cast<size_t>(i)] = answer.substr(1);
    else
      error = answer.substr(1);
    if (!error.empty() && first_error.empty()) {
      first_error = error;
      bad_input = !answer.empty() && answer[0] == kBadInput;
      model_failed = !answer.empty() && answer[0] == kModelFailed;
    }
    if (on_done) on_done(i);
  };
  for (int i = 0; i < count; ++i) {
    while (static_cast<int>(running.size()) >= std::max(1, jobs)) reap();
    if (!first_error.empty()) break;
    FILE* file = std::tmpfile();
    if (!file) throw std::runtime_error(std::string("cannot create a worker's result file: ") + std::strerror(errno));
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = base::cleanup::fork_child();  // a fatal signal reaches the workers too
    if (pid < 0) {
      std::fclose(file);
      throw std::runtime_error(std::string("cannot start a worker process: ") + std::strerror(errno));
    }
    if (pid == 0) child(file, i, job);
    running[pid] = {i, file};
  }
  while (!running.empty()) reap();
  if (!first_error.empty()) {
    if (bad_input) throw mapping::InputError(first_error);
    if (model_failed) throw base::ModelFailure(first_error);
    throw std::runtime_error(first_error);
  }
  return results;
}

}  // namespace nmpsim::apps
