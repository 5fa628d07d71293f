// Bad, odd and extreme inputs, as a new user would try them: every one gets exit code 2 and a one-line
// error naming the file or option, nothing crashes or hangs, no shell ever runs, and nothing is left
// behind. One table row per case; each runs in a fresh directory that must hold only its inputs
// afterwards.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "hardening_util.h"

namespace nmpsim {
namespace {

using namespace nmpsim::hardening;  // NOLINT: the table's types and check()

// Flow-fidelity runs of one strategy keep the valid cases fast.
const std::string kBase = "run --fidelity flow --steps 1 --batch 8 --no-plots --out {D}/out";
const std::string kRun = kBase + " --strategy tp";

TEST(CliHardening, NoShellEverRuns) {
  const std::string evil = "x'; system('touch PWNED'); print '";
  for (const Case& c : std::vector<Case>{
           // A directory name with quotes: gnuplot is run by argv, the name is never parsed.
           {"out_with_quotes",
            "run --fidelity flow --strategy tp --steps 1 --batch 8 --out",
            0,
            "",
            {},
            {},
            {"o';touch PWNED;'"}},
           // A hardware name with quotes and a newline reaches the plot titles as data only.
           {"hw_name_in_plot_titles",
            "run --fidelity flow --strategy tp --steps 1 --batch 8 --hw {D}/hw.json --out {D}/o", 0, "",
            hw_with("/name", evil + "')")},
           // Placement strategy names name output files: only identifiers are accepted.
           {"strategy_name_code", kBase + " --strategy {D}/p.json", 2, "strategy: 'x'; system",
            file("p.json", nlohmann::json{{"strategy", evil}, {"experts", 8}, {"nodes", 32}}.dump())},
           {"strategy_name_slash", kBase + " --strategy {D}/p.json", 2, "'a/b' is not a name",
            file("p.json", R"({"strategy": "a/b", "experts": 8, "nodes": 32, "layers": []})")},
           {"strategy_name_newline", kBase + " --strategy {D}/p.json", 2, "is not a name",
            file("p.json", R"({"strategy": "a\nb", "experts": 8, "nodes": 32, "layers": []})")},
       })
    check(c);
}

TEST(CliHardening, NoCrashOnDeepTracesUnwritableVcdsOrInfiniteOptions) {
  const std::string deep = "{\"0\": [" + std::string(100000, '[') + std::string(100000, ']') + "]}";
  for (const Case& c : std::vector<Case>{
           {"trace_nested_100k", kRun + " --trace {D}/t.json", 2,
            "t.json: layer 0 token 0: expert id: expected an integer, got an array", file("t.json", deep)},
           {"hw_vcd_unwritable", "hw --preset nmp-4x4-5t50g --exercise --vcd /nonexistent/d/x.vcd", 2,
            "--vcd: directory '/nonexistent/d' does not exist"},
           {"run_vcd_unwritable", "run --strategy tp --steps 1 --batch 8 --vcd /nonexistent/d/x.vcd --out {D}/o", 2,
            "--vcd: directory '/nonexistent/d' does not exist"},
           {"gamma_inf", "place --strategy hdmoe-node --gamma inf --out {D}/p.json", 2,
            "strategy hdmoe-node options: gamma: expected a number"},
           {"gamma_huge", "place --strategy hdmoe-node --gamma 1e300 --out {D}/p.json", 2,
            "gamma: must be in (0, 1e6]"},
       })
    check(c);
}

TEST(CliHardening, EveryNumberHasAPhysicalRange) {
  for (const Case& c : std::vector<Case>{
           {"tflops_tiny", kRun + " --hw {D}/hw.json", 2,
            "hw.json: compute.peak_tflops: must be in [0.001, 1e+06] TFLOP/s (got 1e-300)",
            hw_with("/compute/peak_tflops", 1e-300)},
           {"tflops_1e-9", kRun + " --hw {D}/hw.json", 2,
            "compute.peak_tflops: must be in [0.001, 1e+06] TFLOP/s (got 1e-09)",
            hw_with("/compute/peak_tflops", 1e-9)},
           {"tflops_huge", kRun + " --hw {D}/hw.json", 2,
            "compute.peak_tflops: must be in [0.001, 1e+06] TFLOP/s (got 1e+300)",
            hw_with("/compute/peak_tflops", 1e300)},
           {"memory_gbps_tiny", kRun + " --hw {D}/hw.json", 2,
            "memory.peak_gbytes_per_s: must be in [0.001, 1e+06] GB/s", hw_with("/memory/peak_gbytes_per_s", 1e-300)},
           {"startup_huge", kRun + " --hw {D}/hw.json", 2, "compute.startup_ns: must be in [0, 1e+06] ns (got 1e+300)",
            hw_with("/compute/startup_ns", 1e300)},
           {"latency_huge", kRun + " --hw {D}/hw.json", 2, "links.on_die.latency_ns: must be in [0, 1e+06] ns",
            hw_with("/links/on_die/latency_ns", 1e300)},
           {"latency_cycles", kRun + " --hw {D}/hw.json", 2,
            "links.on_die.latency_ns: 1e+06 ns is 1000000 cycles at 1 GHz (at most 4096)",
            hw_with("/links/on_die/latency_ns", 1e6)},
           {"flit_derived", kRun + " --hw {D}/hw.json", 2,
            "noc.clock_ghz: 0.001 GHz with 100 GB/s links needs 100000-byte flits (at most 65536)",
            [](const std::string& d) {
              nlohmann::json j = preset_json("nmp-4x4-5t50g");
              j["noc"]["clock_ghz"] = 0.001;
              j["noc"]["flit_bytes"] = 0;
              j["links"]["on_die"]["gbytes_per_s"] = 100;
              write(d + "/hw.json", j.dump());
            }},
           {"weight_bytes_inf", kRun + " --weight-bytes inf", 2, "--weight-bytes: expected a number, got 'inf'"},
           {"weight_bytes_range", kRun + " --weight-bytes 9", 2, "weight_bytes must be in [0.125, 8] bytes (got 9)"},
           {"model_file_range", kRun + " --model {D}/m.json", 2, "m.json: hidden: must be in [1, 262144]",
            file("m.json", R"({"experts": 8, "top_k": 2, "moe_layers": 2, "hidden": 0, "intermediate": 64})")},
       })
    check(c);
}

TEST(CliHardening, BadInputsGetExitCodeTwoNotOne) {
  for (const Case& c : std::vector<Case>{
           {"overflow_hw", kRun + " --hw {D}/hw.json", 2, "hw.json: malformed JSON: number overflow",
            file("hw.json", R"({"mesh": {"width": 1e400}})")},
           {"overflow_trace", kRun + " --trace {D}/t.json", 2, "t.json: malformed JSON: number overflow",
            file("t.json", R"({"0": [[1e400, 1]]})")},
           {"overflow_spec", "run --spec {D}/s.json --out {D}/o", 2, "s.json: malformed JSON: number overflow",
            file("s.json", R"({"batch": 1e400})")},
           {"gamma_abc", "place --strategy hdmoe-node --gamma abc --out {D}/p.json", 2, "gamma: expected a number"},
           {"noc_vcd_dir", "noc --router rtl --mesh 2x2 --cycles 100 --vcd {D}/vd", 2,
            "--vcd: cannot write '{D}/vd': it is a directory",
            [](const std::string& d) { fs::create_directory(d + "/vd"); }},
           {"exercise_weights", "hw --preset nmp-4x4-5t50g --exercise --exercise-weight-mib 8193", 2,
            "--exercise-weight-mib: 8193 MiB of weights is more than a node's 8192 MiB"},
           {"exercise_messages", "hw --preset nmp-4x4-5t50g --exercise --exercise-message-bytes 4294967296", 2,
            "--exercise-message-bytes: 4294967296 bytes"},
           {"placement_huge", kBase + " --strategy {D}/p.json", 2,
            "p.json: layers: 1 layers x 65535 experts x 65536 nodes",
            file("p.json", R"({"experts": 65535, "nodes": 65536, "layers": [[]]})")},
           {"mesh_256", kRun + " --hw {D}/hw.json", 2, "65536 nodes; MoE runs take at most 4096",
            [](const std::string& d) {
              nlohmann::json j = preset_json("nmp-4x4-5t50g");
              j["mesh"] = {{"width", 256}, {"height", 256}};
              j["die"] = j["wafer"] = {{"width", 256}, {"height", 256}};
              write(d + "/hw.json", j.dump());
            }},
           {"synthetic_huge",
            "run --fidelity flow --strategy tp --hw wsc-4x4 --model qwen3-235b-a22b --synthetic-tokens "
            "16777216 --out {D}/o",
            2, "synthetic trace (--synthetic-tokens): 94 layers x 16777216 tokens x top-8 needs 24064 MiB"},
       })
    check(c);
}

TEST(CliHardening, BadInputIsNeverAcceptedQuietly) {
  for (const Case& c : std::vector<Case>{
           {"duplicate_key", kRun + " --hw {D}/hw.json", 2, "hw.json: malformed JSON: key \"compute\" appears twice",
            file("hw.json", R"({"compute": {}, "compute": {}})")},
           {"nul_and_garbage", kRun + " --trace {D}/t.json", 2, "t.json: not a text file: a NUL byte at offset 14",
            file("t.json", std::string(R"({"0": [[0,1]]})") + std::string(1, '\0') + "garbage")},
           {"node_id_2_32", kBase + " --strategy {D}/p.json", 2, "node_map: entry 4294967296 out of range [0, 32)",
            [](const std::string& d) {
              std::string map = "4294967296";
              for (int n = 1; n < 32; ++n) map += ", " + std::to_string(n);
              write(d + "/p.json",
                    R"({"experts": 1, "nodes": 32, "layers": [[[[0, 1.0]]]], "node_map": [)" + map + "]}");
            }},
           {"pair_node_2_32", kBase + " --strategy {D}/p.json", 2, "layers[0] expert 0: node 4294967297 out of range",
            file("p.json", R"({"experts": 1, "nodes": 32, "layers": [[[[4294967297, 1.0]]]]})")},
           {"row_object", kBase + " --strategy {D}/p.json", 2, "expected a list of [node, share] pairs, got an object",
            file("p.json", R"({"experts": 1, "nodes": 32, "layers": [[{"0": 1.0}]]})")},
           {"gamma_1abc", "place --strategy hdmoe-node --gamma 1abc --out {D}/p.json", 2, "gamma: expected a number"},
           {"profile_negative", kRun + " --profile-tokens -5", 2, "--profile-tokens: must be"},
           {"cb_regions_negative", kBase + " --strategy cb --cb-regions -1", 2, "strategy cb options: regions: "},
           {"cb_regions_without_cb", kRun + " --cb-regions 4", 2, "--cb-regions applies to the cb strategy only"},
           {"strategy_twice", "run --fidelity flow --strategy tp,tp --out {D}/o", 2, "strategy 'tp' is listed twice"},
           {"stdout_full",
            "hw --preset nmp-4x4-5t50g --print-json",
            2,
            "cannot write to standard output",
            {},
            CliOptions{"", "/dev/full", -1, {}}},
       })
    check(c);
}

TEST(CliHardening, MessagesSayWhatIsWrong) {
  for (const Case& c : std::vector<Case>{
           {"unsigned_max", kBase + " --strategy {D}/p.json", 2,
            "experts: must be in [1, 65535] (got 18446744073709551615)",
            file("p.json", R"({"experts": 18446744073709551615, "nodes": 32, "layers": []})")},
           {"hw_is_dir", kRun + " --hw {D}/adir", 2, "adir: is a directory, not a file",
            [](const std::string& d) { fs::create_directory(d + "/adir"); }},
           {"trace_is_dir", kRun + " --trace {D}/adir", 2, "adir: is a directory, not a file",
            [](const std::string& d) { fs::create_directory(d + "/adir"); }},
           {"trace_extra_key", kRun + " --trace {D}/t.json", 2, "t.json: unexpected key \"x\" (layers are keys",
            file("t.json", R"({"0": [[0, 1]], "x": [[0, 1]]})")},
           {"strategy_unknown", kBase + " --strategy foo", 2, "'foo' is neither a strategy (tp, ep, cb"},
           {"stray_argument", kRun + " stray", 2, "unexpected argument 'stray' (options start with --)"},
           {"exercise_too_many_nodes", "hw --hw {D}/hw.json --exercise --exercise-message-bytes 0", 2,
            "--exercise: 65536 nodes; the SystemC model is built for at most 4096",
            [](const std::string& d) {
              nlohmann::json j = preset_json("nmp-4x4-5t50g");
              j["mesh"] = j["die"] = j["wafer"] = {{"width", 256}, {"height", 256}};
              write(d + "/hw.json", j.dump());
            }},
       })
    check(c);
  // No arguments: the usage goes to stderr (an error), not stdout.
  const CliRun r = run_nmpsim({});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.stdout_text, "");
  EXPECT_NE(r.stderr_text.find("Usage: nmpsim <command>"), std::string::npos);
}

TEST(CliHardening, QuietMeansQuiet) {
  const std::string dir = ::testing::TempDir() + "/hardening/quiet";
  fs::remove_all(dir);
  fs::create_directories(dir + "/bin");
  // A gnuplot that fails loudly: its messages go to plots.log, never to our stderr under --quiet.
  write(dir + "/bin/gnuplot", "#!/bin/sh\necho 'gnuplot: something is broken' >&2\nexit 1\n");
  fs::permissions(dir + "/bin/gnuplot", fs::perms::owner_all);
  CliOptions o;
  o.env = {"PATH=" + dir + "/bin:/usr/bin:/bin"};
  const CliRun r =
      run_nmpsim(words("run --fidelity flow --strategy tp --steps 1 --batch 8 --quiet --out " + dir + "/o"), o);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(testing::read_all(dir + "/o/plots.log").find("something is broken"), std::string::npos);
  // SystemC's informational notes ("Info: (I703) tracing timescale unit set") never reach stdout.
  const CliRun v =
      run_nmpsim(words("hw --preset nmp-4x4-5t50g --exercise --exercise-weight-mib 1 --vcd " + dir + "/x.vcd"));
  EXPECT_EQ(v.code, 0) << v.out;
  EXPECT_EQ(v.out.find("Info"), std::string::npos) << v.out;
  EXPECT_TRUE(fs::exists(dir + "/x.vcd"));
  EXPECT_FALSE(fs::exists(dir + "/x.vcd.partial.vcd"));
}

TEST(CliHardening, NothingIsLeftBehindWhenOutputsCannotBeWritten) {
  for (const Case& c : std::vector<Case>{
           // Checked before anything is created: no empty output directory.
           {"flow_with_vcd", kRun + " --vcd {D}/x.vcd", 2, "--vcd needs cycle fidelity"},
           {"convergence_then_bad_out", "place --strategy hdmoe --convergence {D}/c.csv --out /nonexistent/p.json", 2,
            "--out: directory '/nonexistent' does not exist"},
           {"placement_does_not_fit",
            "place --quiet --strategy hdmoe --hw {D}/hw.json --convergence {D}/c.csv --out {D}/p.json", 2,
            "model mixtral-8x7b: 86.5 GiB of MoE weights do not fit in 16 nodes of 1.0 GiB",
            hw_with("/memory/capacity_bytes", 1 << 30)},
           // summary.csv cannot be written (a directory is in the way): no summary.json either.
           {"summary_csv_blocked", kRun + " --quiet", 2, "cannot write '{D}/out/summary.csv'",
            [](const std::string& d) { fs::create_directories(d + "/out/summary.csv"); }},
           // The file-size limit: the write fails with EFBIG (no SIGXFSZ death), nothing half-written.
           {"file_size_limit", kRun + " --quiet", 2, "File too large", {}, CliOptions{"", "", 1024, {}}},
       })
    check(c);
}

TEST(CliHardening, ImbalanceIsNeverNegativeNoise) {
  const std::string dir = ::testing::TempDir() + "/hardening/noise";
  fs::remove_all(dir);
  const CliRun r = run_nmpsim(words("run --fidelity flow --strategy tp,ep,cb --no-plots --out " + dir));
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(testing::read_all(dir + "/summary.json"));
  for (const auto& [name, s] : j["strategies"].items())
    for (const auto& l : s["layers"]) EXPECT_GE(l["expert_imbalance_us"].get<double>(), 0.0) << name;
  EXPECT_EQ(testing::read_all(dir + "/layers.csv").find(",-0.0000"), std::string::npos);
}

}  // namespace
}  // namespace nmpsim
