// Outputs that never replace what nmpsim does not own (devices, FIFOs, symlinks, standard output),
// emitted scripts that quote every name, and runs that leave nothing behind when a signal stops them
// or when they rerun into a directory of an earlier run (hardening round 2, classes 1, 2 and 6).
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "hardening_util.h"

namespace nmpsim {
namespace {

using namespace nmpsim::hardening;  // NOLINT: the table's types and check()

const std::string kNoc = "noc --mesh 2x2 --warmup-cycles 10 --cycles 200";
const std::string kFlowRun = "run --fidelity flow --steps 1 --batch 8 --no-plots --strategy tp";

void dev_null_intact(const std::string&, const CliRun&) {
  EXPECT_TRUE(fs::is_character_file("/dev/null")) << "/dev/null was replaced";
  EXPECT_TRUE(fs::is_symlink("/dev/stdout")) << "/dev/stdout was replaced";
}

void stdout_is_json(const std::string& dir, const CliRun& r) {
  dev_null_intact(dir, r);
  EXPECT_FALSE(nlohmann::json::parse(r.stdout_text, nullptr, false).is_discarded()) << r.stdout_text;
}

/// target.json and a symlink link.json to it.
void linked(const std::string& d) {
  write(d + "/target.json", "old");
  fs::create_symlink("target.json", d + "/link.json");
}

/// link.json is still a link, and its target was written.
void link_kept(const std::string& d, const CliRun&) {
  EXPECT_TRUE(fs::is_symlink(d + "/link.json"));
  EXPECT_NE(testing::read_all(d + "/target.json"), "old");
}

void make_fifo(const std::string& d) { ASSERT_EQ(mkfifo((d + "/fifo").c_str(), 0644), 0); }

void make_socket(const std::string& d) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string path = d + "/sock";
  ASSERT_LT(path.size(), sizeof a.sun_path);
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  close(fd);
}

TEST(CliOutputs, DevicesFifosSymlinksAndStandardOutputAreNeverReplaced) {
  for (const Case& c : std::vector<Case>{
           {"noc_json_dev_null", kNoc + " --json /dev/null", 0, "", {}, {}, {}, true, dev_null_intact},
           {"noc_json_dash", kNoc + " --json -", 0, "packet latency", {}, {}, {}, true, stdout_is_json},
           {"noc_json_dev_stdout", kNoc + " --json /dev/stdout", 0, "packet latency", {}, {}, {}, true, stdout_is_json},
           {"noc_json_symlink", kNoc + " --json {D}/link.json", 0, "", linked, {}, {}, false, link_kept},
           {"noc_json_dangling", kNoc + " --json {D}/link.json", 2, "'{D}/link.json' is a symlink to a missing file",
            [](const std::string&d) { fs::create_symlink("missing.json", d + "/link.json"); }},
           {"noc_json_fifo_unread", kNoc + " --json {D}/fifo", 2, "no process is reading that FIFO", make_fifo},
           {"noc_json_socket", kNoc + " --json {D}/sock", 2, "'{D}/sock' is a socket", make_socket},
           {"noc_json_dir", kNoc + " --json {D}", 2, "--json: cannot write '{D}': it is a directory"},
           {"noc_vcd_dev_null",
            "noc --router rtl --mesh 2x2 --cycles 100 --vcd /dev/null",
            0,
            "",
            {},
            {},
            {},
            true,
            dev_null_intact},
           {"noc_plot_dev_null",
            "noc --mesh 2x2 --warmup-cycles 10 --cycles 100 --curve 0.1 --plot /dev/null",
            0,
            "",
            {},
            {},
            {},
            true,
            dev_null_intact},
           {"noc_curve_json_symlink",
            "noc --mesh 2x2 --warmup-cycles 10 --cycles 100 --curve 0.1 --json {D}/link.json",
            0,
            "",
            linked,
            {},
            {},
            false,
            link_kept},
           {"place_out_dev_null",
            "place --strategy tp --quiet --out /dev/null",
            0,
            "",
            {},
            {},
            {},
            true,
            dev_null_intact},
           {"place_out_symlink",
            "place --strategy tp --quiet --out {D}/link.json",
            0,
            "",
            linked,
            {},
            {},
            false,
            link_kept},
           {"place_out_dash", "place --strategy tp --out -", 0, "placement of", {}, {}, {}, true, stdout_is_json},
           {"place_twice_stdout", "place --strategy hdmoe --out - --convergence /dev/stdout", 2,
            "--out: '-' is also where --convergence '/dev/stdout' goes"},
           {"hw_json_dev_null",
            "hw --hw nmp-4x4-5t50g --exercise --exercise-weight-mib 1 --json /dev/null",
            0,
            "",
            {},
            {},
            {},
            true,
            dev_null_intact},
           {"hw_json_dash",
            "hw --hw nmp-4x4-5t50g --exercise --exercise-weight-mib 1 --json -",
            0,
            "exercise on",
            {},
            {},
            {},
            true,
            stdout_is_json},
           {"hw_vcd_symlink",
            "hw --hw nmp-4x4-5t50g --exercise --exercise-weight-mib 1 --vcd {D}/link.json",
            0,
            "",
            linked,
            {},
            {},
            false,
            link_kept},
           {"run_vcd_dev_null",
            "run --hw nmp-4x4-5t50g --steps 1 --batch 8 --strategy tp --no-plots --quiet --vcd /dev/null --out {D}/o",
            0,
            "",
            {},
            {},
            {},
            false,
            dev_null_intact},
           {"run_summary_symlink",
            kFlowRun + " --quiet --out {D}",
            0,
            "",
            [](const std::string&d) {
              write(d + "/kept.json", "old");
              fs::create_symlink("kept.json", d + "/summary.json");
            },
            {},
            {},
            false,
            [](const std::string&d, const CliRun&) {
              EXPECT_TRUE(fs::is_symlink(d + "/summary.json"));
              EXPECT_NE(testing::read_all(d + "/kept.json").find("\"strategies\""), std::string::npos);
            }},
           {"run_summary_fifo", kFlowRun + " --quiet --out {D}", 2, "no process is reading that FIFO",
            [](const std::string&d) { ASSERT_EQ(mkfifo((d + "/summary.csv").c_str(), 0644), 0); }},
           {"same_file_dot_slash",
            "noc --mesh 2x2 --warmup-cycles 10 --cycles 100 --curve 0.1 --json {D}/x --plot "
            "{D}/./x",
            2, "--plot: '{D}/./x' is also where --json '{D}/x' goes"},
           {"same_file_symlink", "noc --router rtl --mesh 2x2 --cycles 100 --json {D}/x --vcd {D}/lx", 2,
            "is also where",
            [](const std::string&d) {
              write(d + "/x", "old");
              fs::create_symlink("x", d + "/lx");
            }},
           {"same_file_hard_link", "noc --router rtl --mesh 2x2 --cycles 100 --json {D}/x --vcd {D}/hx", 2,
            "is also where",
            [](const std::string&d) {
              write(d + "/x", "old");
              fs::create_hard_link(d + "/x", d + "/hx");
            }},
           {"two_outputs_dev_null",
            "hw --hw nmp-4x4-5t50g --exercise --exercise-weight-mib 1 --json /dev/null --vcd "
            "/dev/null",
            0,
            "",
            {},
            {},
            {},
            true,
            dev_null_intact},
           {"emit_is_out_dir", "sweep --axis batch=8 --fidelity flow --strategy tp --out {D}/s --emit-jobs {D}/s", 2,
            "--emit-jobs: cannot write '{D}/s': it is a directory"},
           {"emit_slurm_fifo", "sweep --axis batch=8 --fidelity flow --strategy tp --out {D}/s --emit-jobs {D}/jobs", 2,
            "--emit-jobs: '{D}/jobs.slurm' is not a regular file",
            [](const std::string&d) { ASSERT_EQ(mkfifo((d + "/jobs.slurm").c_str(), 0644), 0); }},
           {"emit_into_results",
            "sweep --axis batch=8 --fidelity flow --strategy tp --out {D}/s --emit-jobs "
            "{D}/s/results.csv",
            2, "is a file of the sweep's own directory (results.csv)",
            [](const std::string&d) { fs::create_directories(d + "/s"); }},
           {"sweep_emit_dev_null",
            "sweep --axis batch=8 --fidelity flow --strategy tp --out {D}/s --emit-jobs /dev/null", 2,
            "--emit-jobs: '/dev/null' is not a regular file"},
       })
    check(c);
}

/// Runs argv (no shell of ours) in `cwd` with extra environment entries; returns the exit code.
int run_argv(const std::vector<std::string>& argv, const std::string& cwd, const std::vector<std::string>& env = {}) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> a;
    for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execvp(a[0], a.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// A file an injected `touch PWNED...` would have made (the names themselves contain "PWNED" as text).
bool pwned_anywhere(const std::string& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("PWNED", 0) == 0 && n.size() <= 6) return true;
  }
  return false;
}

TEST(CliOutputs, EmittedScriptsQuoteEveryNameAndRunUnderBashAndGnuParallel) {
  const std::string root = ::testing::TempDir() + "/hardening/scripts";
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string out = "o'; touch PWNED; echo '$(touch PWNED2) `touch PWNED3`", jobs = "jobs $(touch PWNED4);'.txt";
  const CliRun emit =
      run_nmpsim({"sweep", "--axis", "batch=8,16", "--strategy", "tp", "--fidelity", "flow", "--steps", "1",
                  "--no-plots", "--quiet", "--out", out, "--emit-jobs", jobs, "--cache-dir", "c $(touch PWNED5)"},
                 CliOptions{root, "", -1, {}});
  ASSERT_EQ(emit.code, 0) << emit.out;
  // The Slurm script, as sbatch would run it: one task per point.
  for (const char* task : {"SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_ID=1"})
    EXPECT_EQ(run_argv({"bash", jobs + ".slurm"}, root, {task}), 0);
  EXPECT_FALSE(pwned_anywhere(root)) << "the Slurm script ran an injected command";
  fs::remove_all(root + "/" + out + "/points");
  // The GNU parallel file.
  const int p = run_argv({"parallel", "--will-cite", "-j", "2", "-a", jobs}, root);
  ASSERT_NE(p, 127) << "GNU parallel is not installed (bash .ci/install-deps.sh)";
  EXPECT_EQ(p, 0);
  EXPECT_FALSE(pwned_anywhere(root)) << "GNU parallel ran an injected command";
  const CliRun collect = run_nmpsim({"sweep", "--collect", "--no-plots", "--out", root + "/" + out});
  EXPECT_EQ(collect.code, 0) << collect.out;
  EXPECT_NE(collect.out.find("2 points, 2 complete"), std::string::npos) << collect.out;
  EXPECT_NE(testing::read_all(root + "/" + jobs).find("/c $(touch PWNED5)' "), std::string::npos)
      << "the points do not use the --cache-dir given";
  // A newline cannot be quoted for GNU parallel or a comment: refused, nothing written.
  for (const Case& c : std::vector<Case>{
           {"emit_newline",
            "sweep --axis batch=8 --fidelity flow --strategy tp --out {D}/s --emit-jobs",
            2,
            "--emit-jobs: 'jobs?touch PWNED?#.slurm' contains a control character",
            {},
            {},
            {"jobs\ntouch PWNED\n#"}},
           {"emit_out_newline",
            "sweep --axis batch=8 --fidelity flow --strategy tp --emit-jobs {D}/j --out",
            2,
            "contains a control character",
            {},
            {},
            {"{D}/s\ntouch PWNED\n"}},
       })
    check(c);
}

/// Nothing of the run is left: no output directory, no staging or scratch directory, no .partial file.
const std::string kLong = "run --hw nmp-4x8-5t50g --steps 8 --batch 32 --quiet --out {D}/o";

TEST(CliOutputs, SignalsStopWorkersAndLeaveNothingBehind) {
  auto after = [](double s, int sig) {
    CliOptions o;
    o.signal = sig;
    o.signal_after_s = s;
    return o;
  };
  auto killed_by = [](int sig) {
    return [sig](const std::string&, const CliRun& r) { EXPECT_EQ(r.signal, sig) << r.out; };
  };
  for (const Case& c : std::vector<Case>{
           {"sigterm_message_log",
            kLong + " --strategy tp,ep,cb --message-log",
            -1,
            "",
            {},
            after(3, SIGTERM),
            {},
            true,
            killed_by(SIGTERM)},
           {"sigint_run_vcd",
            kLong + " --strategy tp --vcd {D}/x.vcd",
            -1,
            "",
            {},
            after(2, SIGINT),
            {},
            true,
            killed_by(SIGINT)},
           {"sigint_hw_vcd",
            "hw --hw nmp-8x8-5t50g --exercise --exercise-weight-mib 1 --exercise-message-bytes 65536 --vcd {D}/x.vcd",
            -1,
            "",
            {},
            after(2, SIGINT),
            {},
            true,
            killed_by(SIGINT)},
           {"sigint_noc_vcd",
            "noc --router rtl --mesh 4x4 --cycles 5000000 --vcd {D}/x.vcd",
            -1,
            "",
            {},
            after(2, SIGINT),
            {},
            true,
            killed_by(SIGINT)},
           {"sighup_workers",
            kLong + " --strategy tp,ep,cb --jobs 2",
            -1,
            "",
            {},
            after(3, SIGHUP),
            {},
            true,
            killed_by(SIGHUP)},
       })
    check(c);
  // COIN-OR Clp installs its own SIGINT handler while it solves: an interrupt then still ends the run.
  const std::string milp = "place --strategy hdmoe --evaluations 30 --time-limit 0.3 --quiet --out {D}/p.json";
  for (double at : {0.1, 0.15, 0.2, 0.25}) {
    CliOptions o;
    o.signal = SIGINT;
    o.signal_after_s = at;
    check(Case{"sigint_place_" + std::to_string(static_cast<int>(at * 100)),
               milp,
               -1,
               "",
               {},
               o,
               {},
               true,
               killed_by(SIGINT)});
  }
}

TEST(CliOutputs, ARerunReplacesEveryOutputOfTheEarlierRun) {
  const std::string dir = ::testing::TempDir() + "/hardening/rerun";
  fs::remove_all(dir);
  const CliRun first =
      run_nmpsim(words(kFlowRun.substr(0, kFlowRun.find(" --no-plots")) + " --strategy tp,ep --out " + dir));
  ASSERT_EQ(first.code, 0) << first.out;
  ASSERT_TRUE(fs::exists(dir + "/links_ep.png")) << first.out;
  write(dir + "/notes.txt", "mine");  // not an output of nmpsim: kept
  const CliRun second = run_nmpsim(words(kFlowRun + " --out " + dir));
  ASSERT_EQ(second.code, 0) << second.out;
  for (const char* gone : {"links_ep.png", "links_tp.png", "node_load.png", "phases.png", "plots.gp"})
    EXPECT_FALSE(fs::exists(dir + "/" + gone)) << gone << " of the earlier run is still there";
  EXPECT_EQ(testing::read_all(dir + "/notes.txt"), "mine");
  const nlohmann::json s = nlohmann::json::parse(testing::read_all(dir + "/summary.json"));
  EXPECT_EQ(s["strategies"].size(), 1u);
}

TEST(CliOutputs, NamesThatDifferOnlyInPunctuationNameDifferentFiles) {
  const std::string dir = ::testing::TempDir() + "/hardening/names";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const CliRun place =
      run_nmpsim(words("place --strategy tp --hw nmp-4x4-5t50g --batch 8 --quiet --out " + dir + "/p.json"));
  ASSERT_EQ(place.code, 0) << place.out;
  nlohmann::json p = nlohmann::json::parse(testing::read_all(dir + "/p.json"));
  for (const char* name : {"a+b", "a_b"}) {
    p["strategy"] = name;
    write(dir + "/" + name + ".json", p.dump());
  }
  const CliRun r =
      run_nmpsim(words("run --hw nmp-4x4-5t50g --steps 1 --batch 8 --no-plots --quiet --message-log --strategy " + dir +
                       "/a+b.json," + dir + "/a_b.json --out " + dir + "/o"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(dir + "/o/messages-a+b.csv"));
  EXPECT_TRUE(fs::exists(dir + "/o/messages-a_b.csv"));
  EXPECT_EQ(testing::read_all(dir + "/o/messages-a+b.csv"), testing::read_all(dir + "/o/messages-a_b.csv"));
}

}  // namespace
}  // namespace nmpsim
