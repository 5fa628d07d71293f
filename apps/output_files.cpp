#include "apps/output_files.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "apps/cli_common.h"

namespace fs = std::filesystem;

namespace nmpsim::apps {

namespace {

std::string temp_name(const std::string& path) { return path + ".tmp." + std::to_string(static_cast<long>(getpid())); }

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

void require_writable_dir(const fs::path& dir, const std::string& what, const std::string& option) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError(option + ": '" + what + "': " + dir.string() + " is not a directory");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw UsageError(option + ": cannot write in '" + dir.string() + "': " + std::strerror(errno));
}

}  // namespace

void OutputFiles::check_dir(const std::string& dir, const std::string& option) {
  std::error_code ec;
  if (dir.empty()) throw UsageError(option + ": empty path");
  if (fs::exists(dir, ec)) {
    require_writable_dir(dir, dir, option);
    return;
  }
  require_writable_dir(existing_ancestor(dir), dir, option);
}

void OutputFiles::check_file(const std::string& path, const std::string& option) {
  std::error_code ec;
  if (path.empty()) throw UsageError(option + ": empty path");
  if (fs::is_directory(path, ec)) throw UsageError(option + ": '" + path + "' is a directory");
  const fs::path parent = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  if (!fs::exists(parent, ec)) throw UsageError(option + ": directory '" + parent.string() + "' does not exist");
  require_writable_dir(parent, path, option);
}

void OutputFiles::make_dir(const std::string& dir, const std::string& option) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  if (ec) throw UsageError(option + ": cannot create directory '" + dir + "': " + ec.message());
  if (!fs::is_directory(dir, ec)) throw UsageError(option + ": '" + dir + "' is not a directory");
  for (const fs::path& p : missing) created_dirs_.push_back(p.string());  // deepest first
}

std::string OutputFiles::make_scratch_dir(const std::string& parent) {
  const std::string dir = parent + "/.nmpsim-scratch." + std::to_string(static_cast<long>(getpid()));
  std::error_code ec;
  fs::create_directory(dir, ec);
  if (ec) throw UsageError("cannot create directory '" + dir + "': " + ec.message());
  scratch_dirs_.push_back(dir);
  return dir;
}

void OutputFiles::write(const std::string& path, const std::string& text) {
  const std::string tmp = temp_name(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw UsageError("cannot write '" + path + "': " + std::strerror(errno));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    const int e = ok ? errno : write_errno;
    std::remove(tmp.c_str());
    throw UsageError("cannot write '" + path + "': " + std::strerror(e));
  }
  staged_.emplace_back(tmp, path);
}

void OutputFiles::adopt(const std::string& written, const std::string& path) { staged_.emplace_back(written, path); }

void OutputFiles::commit() {
  // Everything that could stop a rename is checked first, so that either all files move or none does.
  std::error_code ec;
  for (const auto& staged : staged_)
    if (fs::is_directory(staged.second, ec))
      throw UsageError("cannot write '" + staged.second + "': it is a directory");
  for (const auto& [tmp, path] : staged_)
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw UsageError("cannot write '" + path + "': " + std::strerror(errno));
  committed_ = true;
}

OutputFiles::~OutputFiles() {
  std::error_code ec;
  if (!committed_)
    for (const auto& staged : staged_) std::remove(staged.first.c_str());
  for (const std::string& d : scratch_dirs_) fs::remove_all(d, ec);
  if (!committed_)
    for (const std::string& d : created_dirs_) fs::remove(d, ec);  // only if empty: never a user's files
}

}  // namespace nmpsim::apps
