#include "nmpsim/base/cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

namespace nmpsim::base::cleanup {

namespace {

constexpr int kMaxPaths = 256, kMaxChildren = 1024;
constexpr size_t kMaxPath = 4096;
const int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

struct Slot {
  volatile sig_atomic_t used;
  PathKind kind;
  char path[kMaxPath];
};
Slot g_paths[kMaxPaths];
volatile sig_atomic_t g_children[kMaxChildren];  // 0: free
volatile sig_atomic_t g_installed = 0;

/// The handled signals are blocked while the tables change, so the handler never sees half an entry.
class Blocked {
 public:
  Blocked() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : kSignals) sigaddset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~Blocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  Blocked(const Blocked&) = delete;
  Blocked& operator=(const Blocked&) = delete;

 private:
  sigset_t old_;
};

/// Removes the entries of the directory open as `fd` (directories among them up to `depth` levels
/// more), with async-signal-safe calls only. Unlinking while reading may skip entries: passes repeat
/// until one removes nothing.
void empty_dir(int fd, int depth) {
  alignas(dirent64) char buf[4096];
  for (int pass = 0; pass < 16; ++pass) {
    bool removed = false;
    if (lseek(fd, 0, SEEK_SET) < 0) return;
    for (;;) {
      const ssize_t n = getdents64(fd, buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t off = 0; off < n;) {
        const dirent64* d = reinterpret_cast<const dirent64*>(buf + off);
        off += d->d_reclen;
        const char* name = d->d_name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
        if (unlinkat(fd, name, 0) == 0) {
          removed = true;
          continue;
        }
        if (errno != EISDIR || depth <= 0) continue;
        const int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        empty_dir(sub, depth - 1);
        close(sub);
        if (unlinkat(fd, name, AT_REMOVEDIR) == 0) removed = true;
      }
    }
    if (!removed) return;
  }
}

void remove_tree_c(const char* path) {
  const int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  empty_dir(fd, 2);
  close(fd);
  rmdir(path);
}

void stop_children(int sig) {
  for (int i = 0; i < kMaxChildren; ++i)
    if (g_children[i] > 0) kill(static_cast<pid_t>(g_children[i]), sig);
  // Up to 2 s for them to end, then SIGKILL.
  const timespec tick{0, 10 * 1000 * 1000};
  for (int t = 0; t <= 200; ++t) {
    bool left = false;
    for (int i = 0; i < kMaxChildren; ++i) {
      const pid_t pid = static_cast<pid_t>(g_children[i]);
      if (pid <= 0) continue;
      int status = 0;
      const pid_t got = waitpid(pid, &status, WNOHANG);
      if (got == pid || (got < 0 && errno == ECHILD)) {
        g_children[i] = 0;
        continue;
      }
      if (t == 200) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        g_children[i] = 0;
      } else {
        left = true;
      }
    }
    if (!left) return;
    nanosleep(&tick, nullptr);
  }
}

void on_fatal_signal(int sig) {
  stop_children(sig);
  // Files and staging trees first, then the directories that held them (deepest first: passes repeat
  // while one removes something).
  for (int i = 0; i < kMaxPaths; ++i) {
    if (!g_paths[i].used || g_paths[i].kind == PathKind::kEmptyDir) continue;
    if (g_paths[i].kind == PathKind::kFile)
      unlink(g_paths[i].path);
    else
      remove_tree_c(g_paths[i].path);
    g_paths[i].used = 0;
  }
  for (bool removed = true; removed;) {
    removed = false;
    for (int i = 0; i < kMaxPaths; ++i)
      if (g_paths[i].used && rmdir(g_paths[i].path) == 0) {
        g_paths[i].used = 0;
        removed = true;
      }
  }
  // End by the same signal, so that the caller sees how the process ended.
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  _exit(128 + sig);
}

}  // namespace

int register_path(const std::string& path, PathKind kind) {
  if (path.empty() || path.size() >= kMaxPath) return -1;
  const Blocked blocked;
  for (int i = 0; i < kMaxPaths; ++i)
    if (!g_paths[i].used) {
      std::memcpy(g_paths[i].path, path.c_str(), path.size() + 1);
      g_paths[i].kind = kind;
      g_paths[i].used = 1;
      return i;
    }
  return -1;
}

void unregister_path(int handle) {
  if (handle < 0 || handle >= kMaxPaths) return;
  const Blocked blocked;
  g_paths[handle].used = 0;
}

void register_child(pid_t pid) {
  const Blocked blocked;
  for (int i = 0; i < kMaxChildren; ++i)
    if (g_children[i] == 0) {
      g_children[i] = pid;
      return;
    }
}

void unregister_child(pid_t pid) {
  const Blocked blocked;
  for (int i = 0; i < kMaxChildren; ++i)
    if (g_children[i] == pid) g_children[i] = 0;
}

void forget_inherited() {
  const Blocked blocked;
  for (int i = 0; i < kMaxPaths; ++i) g_paths[i].used = 0;
  for (int i = 0; i < kMaxChildren; ++i) g_children[i] = 0;
}

SignalsDeferred::SignalsDeferred() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kSignals) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, &old_);
}

SignalsDeferred::~SignalsDeferred() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

pid_t fork_child() {
  const Blocked blocked;
  const pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < kMaxPaths; ++i) g_paths[i].used = 0;
    for (int i = 0; i < kMaxChildren; ++i) g_children[i] = 0;
  } else if (pid > 0) {
    for (int i = 0; i < kMaxChildren; ++i)
      if (g_children[i] == 0) {
        g_children[i] = pid;
        break;
      }
  }
  return pid;  // the signal mask is restored in both processes as `blocked` ends
}

void install_signal_handlers() {
  if (g_installed) return;
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals) sigaddset(&sa.sa_mask, s);  // one handler at a time
  for (int s : kSignals) {
    struct sigaction old {};
    // A signal ignored by the caller (nohup, a background job of a non-interactive shell) stays ignored.
    if (sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(s, &sa, nullptr);
  }
  g_installed = 1;
}

void remove_tree(const std::string& path) { remove_tree_c(path.c_str()); }

}  // namespace nmpsim::base::cleanup
