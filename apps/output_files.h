// Output files written all or nothing: every file is written to a temporary beside its final path
// and commit() renames them all into place; if anything fails before that (or commit is never
// reached), the temporaries are removed, and so is any directory this set created. Paths are checked
// before a long run starts, so that a run never ends with nowhere to write.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nmpsim::apps {

class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles();

  /// Checks, creating nothing, that `dir` can take outputs: an existing writable directory, or a new
  /// path whose closest existing ancestor is a writable directory. Throws UsageError naming `option`.
  static void check_dir(const std::string& dir, const std::string& option);
  /// Checks, creating nothing, that `path` can be written: not a directory, in a writable directory.
  static void check_file(const std::string& path, const std::string& option);

  /// Creates `dir` and missing parents; they are removed again if the set is not committed.
  void make_dir(const std::string& dir, const std::string& option);
  /// A scratch directory (e.g. for a plotting tool), removed when the set is destroyed.
  std::string make_scratch_dir(const std::string& parent);
  /// Writes `text` to a temporary beside `path`. Throws UsageError on any write error.
  void write(const std::string& path, const std::string& text);
  /// Takes a file already written elsewhere on the same file system (e.g. by gnuplot) as `path`.
  void adopt(const std::string& written, const std::string& path);
  /// Renames every staged file into place.
  void commit();

 private:
  std::vector<std::pair<std::string, std::string>> staged_;  // temporary, final
  std::vector<std::string> created_dirs_, scratch_dirs_;
  bool committed_ = false;
};

}  // namespace nmpsim::apps
