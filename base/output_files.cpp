#include "nmpsim/base/output_files.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>

#include "nmpsim/base/cleanup.h"
#include "nmpsim/base/errors.h"
#include "nmpsim/base/input_file.h"

namespace fs = std::filesystem;

namespace nmpsim::base {

namespace {

bool same_file(const struct stat& a, int fd) {
  struct stat b {};
  return fstat(fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::string parent_of(const std::string& p) {
  const fs::path x(p);
  return x.has_parent_path() ? x.parent_path().string() : ".";
}

std::string name_of(const std::string& p) { return fs::path(p).filename().string(); }

void require_writable_dir(const std::string& dir, const std::string& path, const std::string& option) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) throw InputError(option + ": directory '" + dir + "' does not exist");
  if (!S_ISDIR(st.st_mode)) throw InputError(option + ": '" + path + "': " + dir + " is not a directory");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(option + ": cannot write in '" + dir + "': " + std::strerror(errno));
}

/// The closest existing ancestor of `path` (itself if it exists).
fs::path existing_ancestor(const fs::path& path) {
  fs::path p = path.empty() ? fs::path(".") : path;
  std::error_code ec;
  while (!fs::exists(p, ec)) {
    const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
    if (parent == p) break;
    p = parent;
  }
  return p;
}

void write_all(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InputError("cannot write '" + path + "': " + std::strerror(n < 0 ? errno : EIO));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

/// Copies the file `from` to the open descriptor `fd`.
void copy_to(const std::string& from, int fd, const std::string& path) {
  const int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw InputError("cannot write '" + path + "': " + std::strerror(errno));
  char buf[1 << 16];
  try {
    for (;;) {
      const ssize_t n = read(in, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw InputError("cannot write '" + path + "': " + std::strerror(errno));
      if (n == 0) break;
      write_all(fd, buf, static_cast<size_t>(n), path);
    }
  } catch (...) {
    close(in);
    throw;
  }
  close(in);
}

bool in_place(TargetKind k) { return k != TargetKind::kNew && k != TargetKind::kRegular; }

}  // namespace

OutputTarget resolve_output(const std::string& path, const std::string& option) {
  if (path == "-") return {TargetKind::kStdout, path, path};
  if (path.empty()) throw InputError(option + ": empty path");
  if (path.find('\0') != std::string::npos)
    throw InputError(option + ": the path '" + shown(path.substr(0, path.find('\0'))) + "' contains a NUL byte");
  if (path.back() == '/') throw InputError(option + ": cannot write '" + path + "': it names a directory");
  struct stat lst {};
  if (lstat(path.c_str(), &lst) != 0) {
    if (errno != ENOENT) throw InputError(option + ": cannot write '" + path + "': " + std::strerror(errno));
    require_writable_dir(parent_of(path), path, option);
    char* dir = realpath(parent_of(path).c_str(), nullptr);
    const std::string final = dir ? std::string(dir) + "/" + name_of(path) : path;
    std::free(dir);
    return {TargetKind::kNew, path, final};
  }
  struct stat st = lst;
  const bool link = S_ISLNK(lst.st_mode);
  if (link && stat(path.c_str(), &st) != 0)
    throw InputError(option + ": '" + path + "' is a symlink " +
                     (errno == ENOENT ? std::string("to a missing file")
                                      : "that cannot be followed (" + std::string(std::strerror(errno)) + ")") +
                     "; it is not replaced (name its target, or remove it)");
  if (S_ISDIR(st.st_mode)) throw InputError(option + ": cannot write '" + path + "': it is a directory");
  const bool stream = S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode);
  if (stream && same_file(st, 1)) return {TargetKind::kStdout, path, path};
  if (stream && same_file(st, 2)) return {TargetKind::kStderr, path, path};
  std::string final = path;
  char* real = realpath(path.c_str(), nullptr);
  if (real) {
    final = real;
    std::free(real);
  } else if (S_ISREG(st.st_mode)) {
    throw InputError(option + ": cannot write '" + path + "': " + std::strerror(errno));
  }
  const auto dev = static_cast<unsigned long long>(st.st_dev), ino = static_cast<unsigned long long>(st.st_ino);
  if (S_ISREG(st.st_mode)) {
    require_writable_dir(parent_of(final), path, option);
    return {TargetKind::kRegular, path, final, dev, ino};
  }
  if (S_ISCHR(st.st_mode)) return {TargetKind::kDevice, path, final, dev, ino};
  if (S_ISFIFO(st.st_mode)) return {TargetKind::kFifo, path, final, dev, ino};
  throw InputError(option + ": '" + path + "' is a " + (S_ISBLK(st.st_mode) ? "block device" : "socket") +
                   "; outputs are never written to one");
}

bool OutputTarget::same_place(const OutputTarget& o) const {
  if (kind == TargetKind::kStdout || kind == TargetKind::kStderr) return kind == o.kind;
  if (kind == TargetKind::kDevice && o.kind == TargetKind::kDevice) return false;  // /dev/null twice is fine
  if (ino != 0 && dev == o.dev && ino == o.ino) return true;                       // one file, by any name or link
  return !in_place(kind) && !in_place(o.kind) && final == o.final;
}

void OutputFiles::check_dir(const std::string& dir, const std::string& option) {
  check_path_text(dir, option);
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    require_writable_dir(dir, dir, option);
    return;
  }
  if (fs::is_symlink(fs::symlink_status(dir, ec)))
    throw InputError(option + ": '" + dir + "' is a symlink to a missing directory");
  const fs::path anc = existing_ancestor(dir);
  require_writable_dir(anc.string(), dir, option);
}

void OutputFiles::check_file(const std::string& path, const std::string& option) { (void)resolve_output(path, option); }

void OutputFiles::check_distinct(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::vector<std::pair<std::string, OutputTarget>> seen;
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    const OutputTarget t = resolve_output(path, option);
    for (const auto& [other, u] : seen) {
      if (t.same_place(u))
        throw InputError(option + ": '" + path + "' is also where " + other + " '" + u.path +
                         "' goes: name two different files");
    }
    seen.emplace_back(option, t);
  }
}

bool OutputFiles::is_stdout(const std::string& path) {
  try {
    return resolve_output(path, "").kind == TargetKind::kStdout;
  } catch (const InputError&) {
    return false;
  }
}

void OutputFiles::make_dir(const std::string& dir, const std::string& option) {
  check_dir(dir, option);
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {  // shallowest first
    if (::mkdir(it->c_str(), 0777) == 0)
      created_dirs_.emplace_back(it->string(), cleanup::register_path(it->string(), cleanup::PathKind::kEmptyDir));
    else if (errno != EEXIST)
      throw InputError(option + ": cannot create directory '" + it->string() + "': " + std::strerror(errno));
  }
  if (!fs::is_directory(dir, ec)) throw InputError(option + ": '" + dir + "' is not a directory");
}

std::string OutputFiles::make_scratch_dir(const std::string& parent) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = !parent.empty() ? parent : tmp && *tmp ? std::string(tmp) : std::string("/tmp");
  std::string tmpl = base + "/.nmpsim-scratch.XXXXXX";
  if (!mkdtemp(tmpl.data())) throw InputError("cannot create a directory in '" + base + "': " + std::strerror(errno));
  scratch_dirs_.emplace_back(tmpl, cleanup::register_path(tmpl, cleanup::PathKind::kTree));
  return tmpl;
}

std::string OutputFiles::staging_dir_for(const OutputTarget& t) {
  const std::string key = in_place(t.kind) ? std::string() : parent_of(t.final);
  for (size_t i = 0; i < staging_dirs_.size(); ++i)
    if (staging_dirs_[i].first == key) return staging_paths_[i];
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = !key.empty() ? key : tmp && *tmp ? std::string(tmp) : std::string("/tmp");
  std::string tmpl = base + "/.nmpsim-stage.XXXXXX";
  if (!mkdtemp(tmpl.data()))
    throw InputError("cannot write '" + t.path + "': cannot create a file in '" + base + "': " + std::strerror(errno));
  staging_dirs_.emplace_back(key, cleanup::register_path(tmpl, cleanup::PathKind::kTree));
  staging_paths_.push_back(tmpl);
  return tmpl;
}

std::string OutputFiles::stage(const std::string& path, const std::string& option) {
  const OutputTarget t = resolve_output(path, option);
  for (const Staged& s : staged_) {
    if (t.same_place(s.target))
      throw InputError(option + ": '" + path + "' is also where '" + s.target.path +
                       "' goes: name two different files");
  }
  const std::string file = staging_dir_for(t) + "/" + std::to_string(staged_.size()) + "." +
                           (in_place(t.kind) ? std::string("out") : name_of(t.final));
  staged_.push_back({file, t});
  return file;
}

void OutputFiles::write(const std::string& path, const std::string& text, const std::string& option) {
  const std::string file = stage(path, option);
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw InputError(option + ": cannot write '" + path + "': " + std::strerror(errno));
  try {
    write_all(fd, text.data(), text.size(), path);
  } catch (...) {
    close(fd);
    throw;
  }
  if (close(fd) != 0) throw InputError(option + ": cannot write '" + path + "': " + std::strerror(errno));
}

void OutputFiles::adopt(const std::string& written, const std::string& path, const std::string& option) {
  const std::string file = stage(path, option);
  if (std::rename(written.c_str(), file.c_str()) == 0) return;
  if (errno != EXDEV) throw InputError(option + ": cannot write '" + path + "': " + std::strerror(errno));
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // another file system
  if (fd < 0) throw InputError(option + ": cannot write '" + path + "': " + std::strerror(errno));
  try {
    copy_to(written, fd, path);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
}

void OutputFiles::remove_stale(const std::string& dir, std::vector<std::string> patterns) {
  stale_.emplace_back(dir, std::move(patterns));
}

void OutputFiles::write_in_place(const Staged& s) const {
  const OutputTarget& t = s.target;
  if (t.kind == TargetKind::kStdout || t.kind == TargetKind::kStderr) {
    std::cout.flush();
    std::fflush(stdout);
    copy_to(s.file, t.kind == TargetKind::kStdout ? 1 : 2, t.path);
    return;
  }
  const int fd = open(t.final.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw InputError("cannot write '" + t.path +
                     "': " + (errno == ENXIO ? std::string("no process is reading that FIFO") : std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    close(fd);
    throw InputError("cannot write '" + t.path + "': it changed while the program ran");
  }
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  try {
    copy_to(s.file, fd, t.path);
  } catch (...) {
    close(fd);
    throw;
  }
  if (close(fd) != 0) throw InputError("cannot write '" + t.path + "': " + std::strerror(errno));
}

void OutputFiles::commit() {
  // Everything that could stop a rename is checked first, so that either all files move or none does.
  for (const Staged& s : staged_) {
    const OutputTarget now = resolve_output(s.target.path, "output");
    const bool both_files = !in_place(now.kind) && !in_place(s.target.kind);
    if (now.kind != s.target.kind && !both_files)
      throw InputError("cannot write '" + s.target.path + "': it changed while the program ran");
  }
  for (const Staged& s : staged_)
    if (in_place(s.target.kind)) write_in_place(s);
  std::set<std::pair<dev_t, ino_t>> written;
  for (const Staged& s : staged_) {
    if (in_place(s.target.kind)) continue;
    if (std::rename(s.file.c_str(), s.target.final.c_str()) != 0)
      throw InputError("cannot write '" + s.target.path + "': " + std::strerror(errno));
    struct stat st {};
    if (stat(s.target.final.c_str(), &st) == 0) written.insert({st.st_dev, st.st_ino});
  }
  committed_ = true;
  for (const auto& [dir, patterns] : stale_) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      struct stat st {};
      if (lstat(e.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || written.count({st.st_dev, st.st_ino})) continue;
      for (const std::string& p : patterns)
        if (fnmatch(p.c_str(), name.c_str(), FNM_PERIOD) == 0) {
          ::unlink(e.path().c_str());
          break;
        }
    }
  }
}

OutputFiles::~OutputFiles() {
  for (size_t i = 0; i < staging_paths_.size(); ++i) {
    cleanup::remove_tree(staging_paths_[i]);
    cleanup::unregister_path(staging_dirs_[i].second);
  }
  for (const auto& [dir, handle] : scratch_dirs_) {
    cleanup::remove_tree(dir);
    cleanup::unregister_path(handle);
  }
  for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it) {  // deepest first
    if (!committed_) ::rmdir(it->first.c_str());                              // only if empty: never a user's files
    cleanup::unregister_path(it->second);
  }
}

void write_file(const std::string& path, const std::string& text, const std::string& option) {
  OutputFiles out;
  out.write(path, text, option);
  out.commit();
}

}  // namespace nmpsim::base
