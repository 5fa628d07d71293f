// Output files written all or nothing, and never through something the program does not own.
//
// Every file is first written into a private staging directory and commit() puts them all in place.
// A target is resolved when it is named (docs/FORMATS.md "Output files"):
// - a new path, or a regular file: staged beside it (beside the file a symlink points to, so that
//   the link stays a link) and renamed over it;
// - `-`, or any path that is this process's standard output or error (`/dev/stdout`, `/dev/fd/2`):
//   written to that stream;
// - a character device (`/dev/null`) or a FIFO: written in place, never replaced (a FIFO nobody
//   reads is an error, not a hang);
// - a directory, a dangling symlink, a block device or a socket: refused with a one-line error.
// If anything fails before commit() (an error, an exception, SIGINT/SIGTERM/SIGHUP through
// base/cleanup.h), the staged files and any directory this set created are removed.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nmpsim::base {

enum class TargetKind { kNew, kRegular, kStdout, kStderr, kDevice, kFifo };

struct OutputTarget {
  TargetKind kind = TargetKind::kNew;
  std::string path;                     ///< as named
  std::string final;                    ///< after symlinks, absolute: what is written or replaced
  unsigned long long dev = 0, ino = 0;  ///< an existing target's identity (hard links share it)
  /// Whether two targets are one place: the same file, or both the same standard stream.
  bool same_place(const OutputTarget& o) const;
};

/// Resolves an output path named by `option` (see above). Throws InputError "<option>: ...".
OutputTarget resolve_output(const std::string& path, const std::string& option);

class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles();

  /// Checks, creating nothing, that `dir` can take outputs: an existing writable directory, or a new
  /// path whose closest existing ancestor is a writable directory. Throws InputError naming `option`.
  static void check_dir(const std::string& dir, const std::string& option);
  /// Checks, creating nothing, that `path` can be written (resolve_output, and its directory writable).
  static void check_file(const std::string& path, const std::string& option);
  /// Refuses two outputs that would go to one place (the same file, or both to standard output);
  /// pairs of (option, path), empty paths skipped. Throws InputError naming both options.
  static void check_distinct(const std::vector<std::pair<std::string, std::string>>& outputs);
  /// Whether `path` names this process's standard output.
  static bool is_stdout(const std::string& path);

  /// Creates `dir` and missing parents; they are removed again if the set is not committed.
  void make_dir(const std::string& dir, const std::string& option);
  /// A scratch directory inside `parent` ($TMPDIR or /tmp if empty), e.g. for a plotting tool; removed
  /// when the set is destroyed.
  std::string make_scratch_dir(const std::string& parent);
  /// A path to write the contents of `path` into (for a tool that writes files itself); commit()
  /// puts that file in place.
  std::string stage(const std::string& path, const std::string& option = "output");
  /// Writes `text` as the contents of `path`. Throws InputError on any write error.
  void write(const std::string& path, const std::string& text, const std::string& option = "output");
  /// Takes a file already written in one of this set's scratch directories as the contents of `path`.
  void adopt(const std::string& written, const std::string& path, const std::string& option = "output");
  /// At commit: regular files in `dir` whose names match one of the shell `patterns` and that this
  /// commit did not write are removed (the outputs of an earlier run that this one does not make).
  void remove_stale(const std::string& dir, std::vector<std::string> patterns);
  /// Puts every staged file in place: device, FIFO and standard-output targets first, then the renames.
  void commit();

 private:
  struct Staged {
    std::string file;  ///< the staged contents
    OutputTarget target;
  };
  std::string staging_dir_for(const OutputTarget& t);
  void write_in_place(const Staged& s) const;

  std::vector<Staged> staged_;
  std::vector<std::pair<std::string, int>> staging_dirs_;                 // (key directory, cleanup handle) ...
  std::vector<std::string> staging_paths_;                                // ... and the staging directory itself
  std::vector<std::pair<std::string, int>> created_dirs_, scratch_dirs_;  // (path, cleanup handle)
  std::vector<std::pair<std::string, std::vector<std::string>>> stale_;
  bool committed_ = false;
};

/// Writes one file all or nothing (an OutputFiles of one file).
void write_file(const std::string& path, const std::string& text, const std::string& option = "output");

}  // namespace nmpsim::base
