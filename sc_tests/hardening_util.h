// The table of test_cli_hardening*.cpp: one row per bad, odd or extreme input, each run in a fresh
// directory that must hold only its inputs afterwards when the run is refused (exit code 2, one line).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace nmpsim::hardening {

namespace fs = std::filesystem;
using testing::CliOptions;
using testing::CliRun;
using testing::run_nmpsim;
using testing::words;

struct Case {
  std::string name;
  std::string args;  ///< split on spaces; "{D}" is the case's directory
  int code;
  std::string message;  ///< a fragment of stderr
  std::function<void(const std::string& dir)> setup = {};
  CliOptions options = {};
  std::vector<std::string> extra_args = {};  ///< appended as they are (may contain spaces, quotes)
  bool unchanged = false;  ///< the directory must hold only its inputs afterwards whatever the exit code
  /// Checks of the directory after the run (beyond the listing), e.g. that a symlink is still one.
  std::function<void(const std::string& dir, const CliRun& r)> after = {};
};

inline void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

/// 2 layers of 8 experts on hidden 256 (a few million parameters): quick at cycle fidelity on a 4x4
/// mesh, and small enough to train on an NMP chip.
inline const std::string kTinyMoeModel =
    R"({"name": "tiny", "experts": 8, "top_k": 2, "moe_layers": 2, "hidden": 256, "intermediate": 512,
        "max_context": 4096, "attention": {"kind": "gqa", "heads": 4, "kv_heads": 2, "head_dim": 64}})";

/// A new, empty scratch directory `name` under the test's temporary directory, holding tiny.json
/// (kTinyMoeModel).
inline std::string scratch_with_tiny_model(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  write(dir + "/tiny.json", kTinyMoeModel);
  return dir;
}

inline nlohmann::json preset_json(const std::string& name) {
  return nlohmann::json::parse(run_nmpsim({"hw", "--preset", name, "--print-json"}).stdout_text);
}

/// A hardware file: the 4x4 preset with one field changed.
inline std::function<void(const std::string&)> hw_with(const std::string& pointer, nlohmann::json value) {
  return [pointer, value](const std::string& dir) {
    nlohmann::json j = preset_json("nmp-4x4-5t50g");
    j[nlohmann::json::json_pointer(pointer)] = value;
    write(dir + "/hw.json", j.dump());
  };
}

/// A file with raw text.
inline std::function<void(const std::string&)> file(const std::string& name, const std::string& text) {
  return [name, text](const std::string& dir) { write(dir + "/" + name, text); };
}

inline std::set<std::string> listing(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.insert(fs::relative(e.path(), dir).string());
  return names;
}

inline std::string replace_dir(std::string s, const std::string& dir) {
  for (size_t at; (at = s.find("{D}")) != std::string::npos;) s.replace(at, 3, dir);
  return s;
}

inline void check(const Case& c) {
  const std::string dir = ::testing::TempDir() + "/hardening/" + c.name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  if (c.setup) c.setup(dir);
  const std::set<std::string> before = listing(dir);
  std::vector<std::string> args = words(replace_dir(c.args, dir));
  for (const std::string& a : c.extra_args) args.push_back(replace_dir(a, dir));
  CliOptions o = c.options;
  if (o.cwd.empty()) o.cwd = dir;
  if (o.timeout_s == 0) o.timeout_s = 300;  // a hang is a failure, not a stuck test
  const CliRun r = run_nmpsim(args, o);
  EXPECT_FALSE(r.timed_out) << c.name << ": still running after " << o.timeout_s << " s";
  EXPECT_FALSE(r.group_left) << c.name << ": a process it started outlived it";
  if (!o.signal) {
    EXPECT_EQ(r.signal, 0) << c.name << ": killed by signal " << r.signal << "\n" << r.out;
  }
  EXPECT_EQ(r.code, c.code) << c.name << ": " << r.out;
  const std::string message = replace_dir(c.message, dir);
  EXPECT_NE(r.stderr_text.find(message), std::string::npos) << c.name << ": expected '" << message << "' in\n"
                                                            << r.stderr_text;
  if (c.after) c.after(dir, r);
  if (c.code != 2 && c.unchanged) {
    EXPECT_EQ(listing(dir), before) << c.name << ": files were left behind";
  }
  if (c.code == 2) {
    EXPECT_EQ(testing::lines(r.stderr_text), 1) << c.name << ": " << r.stderr_text;
    EXPECT_EQ(listing(dir), before) << c.name << ": files were left behind";
  }
  EXPECT_FALSE(fs::exists(dir + "/PWNED")) << c.name << ": a shell ran";
}

}  // namespace nmpsim::hardening
