// Inputs that are checked before any work (sizes, names, UTF-8, sweep values), nonsense that is never
// accepted quietly, and files that are not what they claim (FIFOs, gzip with garbage, edited cache
// entries): hardening round 2, classes 3, 4, 5 and 7. Every refusal is one line, exit code 2, nothing
// written.
#include <sys/stat.h>
#include <zlib.h>

#include "hardening_util.h"

namespace nmpsim {
namespace {

using namespace nmpsim::hardening;  // NOLINT: the table's types and check()

const std::string kBase = "run --fidelity flow --steps 1 --batch 8 --no-plots --out {D}/out";
const std::string kRun = kBase + " --strategy tp";
const std::string kSweep = "sweep --fidelity flow --steps 1 --strategy tp --no-plots --out {D}/s";

/// `text` gzip-compressed into `name`, with `tail` appended after the gzip data.
std::function<void(const std::string&)> gzip_file(const std::string& name, const std::string& text,
                                                  const std::string& tail = "") {
  return [=](const std::string& d) {
    gzFile f = gzopen((d + "/" + name).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    for (size_t at = 0; at < text.size(); at += 1 << 20)
      gzwrite(f, text.data() + at, static_cast<unsigned>(std::min<size_t>(1 << 20, text.size() - at)));
    gzclose(f);
    std::ofstream(d + "/" + name, std::ios::app | std::ios::binary) << tail;
  };
}

/// A gzip file whose data is `bytes` zero bytes (a "gzip bomb": a few MB that decompress to GBs).
std::function<void(const std::string&)> gzip_zeros(const std::string& name, size_t bytes) {
  return [=](const std::string& d) {
    gzFile f = gzopen((d + "/" + name).c_str(), "wb9");
    ASSERT_NE(f, nullptr);
    const std::string chunk(size_t{1} << 20, '0');
    for (size_t done = 0; done < bytes; done += chunk.size())
      gzwrite(f, chunk.data(), static_cast<unsigned>(chunk.size()));
    gzclose(f);
  };
}

void make_fifo(const std::string& d) { ASSERT_EQ(mkfifo((d + "/fifo").c_str(), 0644), 0); }

std::string values(int n) {
  std::string v;
  for (int i = 1; i <= n; ++i) v += (i > 1 ? "," : "") + std::to_string(i);
  return v;
}

const std::string kTinyModel =
    R"({"name": "tiny", "experts": 8, "top_k": 2, "moe_layers": 2, "hidden": 256, "intermediate": 512,
        "attention": {"kind": "gqa", "heads": 4, "kv_heads": 4, "head_dim": 64}})";

TEST(CliInputs, SizesAndTextAreCheckedBeforeAnyWork) {
  CliOptions quick;
  quick.timeout_s = 60;
  for (const Case& c : std::vector<Case>{
           {"axes_1e9",
            "sweep --out {D}/s --axis batch=" + values(1000) + " --axis context=" + values(1000) +
                " --axis seed=" + values(1000),
            2,
            "sweep: the axes make more than 100000 points",
            {},
            quick},
           {"axis_trailing_comma", kSweep + " --axis batch=8,", 2, "--axis batch: an empty item in '8,'"},
           {"utf8_set", kRun + " --set", 2, "is not valid UTF-8", {}, {}, {"name=\xff"}},
           {"utf8_axis", kSweep + " --axis", 2, "is not valid UTF-8", {}, {}, {"model=\xc3"}},
           {"utf8_strategy_opt", kRun + " --strategy-opt", 2, "is not valid UTF-8", {}, {}, {"tp.x=\xed\xa0\x80"}},
           {"utf8_out", "run --fidelity flow --strategy tp --out", 2, "is not valid UTF-8", {}, {}, {"{D}/o\xff"}},
           {"gzip_bomb", kRun + " --trace {D}/t.json.gz", 2, "t.json.gz: decompresses to more than 1024 MiB",
            gzip_zeros("t.json.gz", (size_t{1} << 30) + (size_t{1} << 20)), quick},
           {"gzip_trailing_garbage", kRun + " --trace {D}/t.json.gz", 2,
            "t.json.gz: 7 bytes of garbage after the gzip data",
            gzip_file("t.json.gz", R"({"0": [[0, 1]]})", "garbage")},
           {"gzip_truncated", kRun + " --trace {D}/t.json.gz", 2, "the compressed stream ends early",
            [](const std::string& d) {
              gzip_file("full.gz", std::string(100000, ' ') + R"({"0": [[0, 1]]})")(d);
              std::string bytes = testing::read_all(d + "/full.gz");
              fs::remove(d + "/full.gz");
              write(d + "/t.json.gz", bytes.substr(0, bytes.size() / 2));
            }},
       })
    check(c);
}

TEST(CliInputs, TinyInputsThatAskForHugeWorkAreRefused) {
  CliOptions quick;
  quick.timeout_s = 60;
  for (const Case& c : std::vector<Case>{
           {"top_4096", kRun + " --model {D}/m.json", 2, "m.json: top_k: must be in [1, 64] (got 4096)",
            file("m.json", R"({"experts": 4096, "top_k": 4096, "moe_layers": 2, "hidden": 64, "intermediate": 64})"),
            quick},
           {"synthetic_2gib",
            kRun + " --synthetic-tokens 16777216",
            2,
            "synthetic trace (--synthetic-tokens)",
            {},
            quick},
       })
    check(c);
}

TEST(CliInputs, EverySweepValueIsResolvedBeforeThePointsRun) {
  for (const Case& c : std::vector<Case>{
           {"unknown_strategy", kSweep + " --axis strategy=tp,nope", 2,
            "sweep point p0001 ({\"strategy\":\"nope\"}): unknown strategy 'nope'"},
           {"unknown_preset", kSweep + " --axis hardware=nmp-4x4-5t50g,nope", 2,
            "sweep point p0001 ({\"hardware\":\"nope\"}): unknown hardware preset 'nope'"},
           {"unknown_model", kSweep + " --axis model=mixtral-8x7b,nope", 2, "sweep point p0001 ({\"model\":\"nope\"})"},
           {"unknown_trace", kSweep + " --axis trace=synthetic,{D}/none.json", 2, "none.json: cannot open file"},
           {"unknown_policy", "sweep --spec {D}/sw.json --out {D}/s", 2,
            "sweep point p0001 ({\"policies\":[{\"name\":\"nope\"}]}): unknown policy 'nope'",
            file("sw.json",
                 R"({"base": {"fidelity": "flow", "strategies": ["tp"]}, "axes": [{"path": "batch", "values": [8]}],
                               "points": [{"policies": [{"name": "nope"}]}]})")},
           {"attn_tp_not_divisor", kSweep + " --axis attn_tp=4,3", 2,
            "sweep point p0001 ({\"attn_tp\":3}): attention TP group size 3 must divide the 32 nodes"},
           {"missing_link_level", kSweep + " --axis links.die_to_die.gbytes_per_s=10", 2, "links.die_to_die"},
           {"profile_beyond_trace", kSweep + " --axis profile_tokens=1,100000", 2,
            "profile_tokens: 100000 is more than the trace's 4096 tokens"},
           {"weight_bytes_tiny", kSweep + " --axis weight_bytes=1,0.01", 2, "weight_bytes must be in [0.125, 8]"},
           {"strategy_option_unknown", kSweep + " --axis batch=8 --strategy-opt tp.nosuch=1", 2,
            "nosuch: unknown field"},
           {"accounting_option_bad",
            kSweep + " --axis batch=8 --accounting hdmoe-authors --accounting-opt "
                     "hdmoe-authors.random_mesh_for=nope",
            2, "random_mesh_for"},
           {"memory_of_a_point", kSweep + " --axis mesh.width=4,64 --set mesh.height=64", 2, "the run needs about"},
           {"value_twice", kSweep + " --axis batch=8,8", 2, "sweep: axis 'batch' lists the value 8 twice"},
           {"baseline_absent", kSweep + " --axis batch=8,16 --baseline nope", 2,
            "sweep: baseline 'nope' is not a strategy of any point"},
           {"strategy_trailing_comma", "sweep --spec {D}/sw.json --out {D}/s", 2, "an empty item in 'tp,'",
            file("sw.json", R"({"base": {"fidelity": "flow"}, "axes": [{"path": "strategy", "values": ["tp,"]}]})")},
           {"cache_and_no_cache", kSweep + " --axis batch=8 --cache-dir {D}/c --no-cache", 2,
            "--cache-dir and --no-cache: give one of them"},
           {"duplicate_axis", kSweep + " --axis batch=8 --axis batch=16", 2, "sweep: axis 'batch' is given twice"},
           {"strategy_and_strategies", kSweep + " --axis strategy=tp --axis strategies=ep", 2,
            "axis 'strategies' is given twice"},
           {"point_and_collect", kSweep + " --axis batch=8 --point 0 --collect", 2,
            "--point and --collect are different jobs"},
           {"emit_and_point", kSweep + " --axis batch=8 --point 0 --emit-jobs {D}/j", 2,
            "--point and --emit-jobs are different jobs"},
           {"jobs_with_point", kSweep + " --axis batch=8 --point 0 --jobs 2", 2, "--jobs: --point runs one point"},
           {"collect_with_axis", "sweep --out {D}/s --collect --axis batch=8", 2, "--collect merges the points"},
       })
    check(c);
}

TEST(CliInputs, ACollectedSweepNeverCallsADamagedPointComplete) {
  const std::string dir = ::testing::TempDir() + "/hardening/collect";
  fs::remove_all(dir);
  const CliRun r = run_nmpsim(words(replace_dir(kSweep, dir) + " --axis batch=8,16,24"));
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string s0 = dir + "/s/points/p0000/summary.json", s1 = dir + "/s/points/p0001/summary.json";
  const std::string text = testing::read_all(s0);
  write(s0, text.substr(0, text.size() / 2));  // truncated
  nlohmann::json j = nlohmann::json::parse(testing::read_all(s1));
  j["strategies"]["tp"].erase("mean_tbt_us");  // valid JSON, but a result is missing
  write(s1, j.dump());
  const CliRun c = run_nmpsim(words("sweep --collect --no-plots --out " + dir + "/s"));
  EXPECT_EQ(c.code, 1) << c.out;
  EXPECT_NE(c.out.find("3 points, 1 complete (0 run now), 0 failed, 2 without a result"), std::string::npos) << c.out;
  const std::string csv = testing::read_all(dir + "/s/results.csv");
  EXPECT_NE(csv.find("p0000,8,,,,,,,,,,,,,missing: no complete result in points/p0000"), std::string::npos) << csv;
  // Running the sweep again runs exactly the two damaged points.
  const CliRun again = run_nmpsim(words(replace_dir(kSweep, dir) + " --axis batch=8,16,24"));
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("3 points, 3 complete (2 run now)"), std::string::npos) << again.out;
  // A sweep with fewer points into the same directory leaves none of the earlier ones behind.
  const CliRun fewer = run_nmpsim(words(replace_dir(kSweep, dir) + " --axis batch=8"));
  EXPECT_EQ(fewer.code, 0) << fewer.out;
  EXPECT_TRUE(fs::exists(dir + "/s/points/p0000"));
  EXPECT_FALSE(fs::exists(dir + "/s/points/p0001"));
  EXPECT_FALSE(fs::exists(dir + "/s/points/p0002"));
}

TEST(CliInputs, NonsenseIsNeverAcceptedQuietly) {
  CliOptions quick;
  quick.timeout_s = 60;  // a FIFO nobody writes must not block
  for (const Case& c : std::vector<Case>{
           {"spec_nul_path", "run --spec {D}/s.json --out {D}/o", 2, "the file name 't.json' contains a NUL byte",
            file("s.json", R"({"trace": {"file": "t.json\u0000x"}})")},
           {"row_node_twice", kBase + " --strategy {D}/p.json", 2, "layers[0] expert 0: node 3 appears twice",
            file("p.json",
                 R"({"experts": 8, "nodes": 32, "layers": [[[[3, 0.5], [3, 0.5]], [], [], [], [], [], [], []]]})")},
           {"weight_bytes_underflow", kRun + " --weight-bytes 1e-400", 2,
            "--weight-bytes: '1e-400' is too small to represent"},
           {"skew_nan", kRun + " --skew nan", 2, "--skew: expected a number, got 'nan'"},
           {"spec_weight_underflow", "run --spec {D}/s.json --out {D}/o", 2, "s.json: malformed JSON: number underflow",
            file("s.json", R"({"model": {"preset": "mixtral-8x7b", "weight_bytes": 1e-400}})")},
           {"accounting_opt_value",
            kBase + " --strategy tp --accounting hdmoe-authors --accounting-opt hdmoe-authors.random_mesh_for=nope", 2,
            "random_mesh_for: the string \"nope\" names no strategy"},
           {"curve_trailing_comma", "noc --mesh 2x2 --curve 0.1,", 2, "--curve: an empty item in '0.1,'"},
           {"rtl_nodes_twice", "noc --mesh 2x2 --router mixed --rtl-nodes 1,1", 2,
            "--rtl-nodes: node 1 is listed twice"},
           {"hotspot_fraction_alone", "noc --mesh 2x2 --hotspot-fraction 0.5", 2,
            "--hotspot-fraction needs --traffic hotspot"},
           {"cache_dir_empty", kRun + " --cache-dir", 2, "--cache-dir: empty value", {}, {}, {""}},
           {"fifo_hw", kRun + " --hw {D}/fifo", 2, "fifo: malformed JSON", make_fifo, quick},
           {"fifo_model", kRun + " --model {D}/fifo", 2, "fifo: malformed JSON", make_fifo, quick},
           {"fifo_trace", kRun + " --trace {D}/fifo", 2, "fifo: malformed JSON", make_fifo, quick},
           {"fifo_strategy", kBase + " --strategy {D}/fifo", 2, "fifo: malformed JSON", make_fifo, quick},
           {"fifo_spec", "run --spec {D}/fifo --out {D}/o", 2, "fifo: malformed JSON", make_fifo, quick},
           {"dev_zero_hw",
            kRun + " --hw /dev/zero",
            2,
            "/dev/zero: not a text file: a NUL byte at offset 0",
            {},
            quick},
           {"curve_subnormal", "noc --mesh 2x2 --warmup-cycles 10 --cycles 100 --curve 1e-320", 0, "", {}, quick},
           {"hw_name_newline", kRun + " --hw {D}/hw.json", 2, "hw.json: name: must be printable text",
            hw_with("/name", "a\nb")},
           {"scenarios_beyond_tokens", kRun + " --synthetic-tokens 16 --scenarios 17", 2,
            "scenarios must be in [1, tokens] (got 17 for 16 tokens)"},
           {"first_token_beyond", kRun + " --first-token 4096", 2,
            "first_token: 4096 is beyond the trace's 4096 tokens"},
           {"gzip_twice", kRun + " --trace {D}/t.json.gz", 2, "t.json.gz: gzip-compressed twice",
            [](const std::string& d) {
              gzip_file("inner.gz", R"({"0": [[0, 1]]})")(d);
              gzip_file("t.json.gz", testing::read_all(d + "/inner.gz"))(d);
              fs::remove(d + "/inner.gz");
            }},
           {"empty_json_path", "noc --mesh 2x2 --cycles 100 --json", 2, "--json: empty value", {}, {}, {""}},
           {"unused_link_level", kRun + " --set links.wafer_to_wafer.gbytes_per_s=5", 2,
            "--set links.wafer_to_wafer.gbytes_per_s: does not apply to this hardware (only where the topology has "
            "wafer-to-wafer links"},
           {"fit_levels_1024",
            "hw --hw nmp-4x8-5t50g --set mesh.width=32 --set mesh.height=32 --report hierarchy --report-opt fit=true",
            2, "--report hierarchy: fit: 1024 nodes; at most 256"},
           {"pin_routers_16k", "noc --mesh 128x128 --router sc --cycles 5", 2, "16384 pin-level routers; at most 4096"},
           {"exercise_64x64", "hw --hw nmp-4x8-5t50g --set mesh.width=64 --set mesh.height=64 --exercise", 2,
            "--exercise-message-bytes: 8192 bytes to each of 4095 nodes from every node is 16773120 messages"},
           {"describe_64x64", "hw --hw nmp-4x8-5t50g --set mesh.width=64 --set mesh.height=64 --describe", 0, ""},
           {"set_twice", kRun + " --set compute.peak_tflops=1 --set compute.peak_tflops=2", 2,
            "--set compute.peak_tflops is given twice"},
           {"set_value_spaces", kRun + " --set", 2, "without spaces around it", {}, {}, {"compute.peak_tflops= 5"}},
           {"strategy_opt_twice", kBase + " --strategy cb --strategy-opt cb.regions=2 --strategy-opt cb.regions=4", 2,
            "--strategy-opt cb.regions is given twice"},
           {"gamma_spaces",
            "place --strategy hdmoe-node --out {D}/p.json --gamma",
            2,
            "without spaces around it",
            {},
            {},
            {" 5"}},
           {"jobs_with_flow", kRun + " --jobs 2", 2,
            "--jobs: only cycle fidelity simulates strategies in worker processes"},
           {"skew_with_trace_file", kRun + " --trace mtbench-math --skew 2", 2,
            "--skew: applies to the synthetic trace, not --trace FILE"},
           {"strategy_trailing_comma", kBase + " --strategy tp,", 2, "--strategy: an empty item in 'tp,'"},
           {"strategy_all_and_more", kBase + " --strategy all,tp", 2, "'all' is every registered strategy"},
           {"curve_twice", "noc --mesh 2x2 --curve 0.1,0.1", 2, "--curve: the load 0.1 is listed twice"},
           {"weight_without_exercise", "hw --hw nmp-4x4-5t50g --exercise-weight-mib 2", 2,
            "--exercise-weight-mib needs --exercise"},
           {"report_opt_without_report", "hw --hw nmp-4x4-5t50g --print-json --report-opt virtual_levels=2", 2,
            "--report-opt needs --report"},
           {"report_unknown", "hw --hw nmp-4x4-5t50g --report nothing", 2, "--report: unknown report 'nothing'"},
           {"report_bad_option", "hw --hw nmp-4x4-5t50g --report hierarchy --report-opt levels=2", 2,
            "--report hierarchy: levels: unknown field"},
           {"fit_gamma_with_out", "place --fit-gamma flow --out {D}/p.json", 2,
            "--out: --fit-gamma builds no placement"},
           {"place_without_strategy", "place --out {D}/p.json", 2, "--strategy: give the strategy to build"},
           {"place_cache_dir_empty", "place --strategy ep --cache-dir= --out {D}/p.json", 2,
            "the argument for option '--cache-dir'"},
           {"place_link_cost_bad", "place --strategy hdmoe --link-cost nope --out {D}/p.json", 2,
            "link_cost: expected flow or authors"},
           {"place_convergence_not_hdmoe", "place --strategy ep --convergence {D}/c.csv --out {D}/p.json", 2,
            "--convergence applies to the hdmoe strategy only"},
           {"place_gamma_not_hdmoe", "place --strategy ep --gamma 2 --out {D}/p.json", 2,
            "--gamma applies to the strategies hdmoe-node, hdmoe only"},
           {"list_presets_with_model", "model --list-presets --model dbrx", 2, "--model goes without it"},
           {"share_zero", kBase + " --strategy {D}/p.json", 2, "layers[0] expert 0: share the number 0 must be above 0",
            file("p.json",
                 R"({"experts": 8, "nodes": 32, "layers": [[[[3, 0], [4, 1]], [], [], [], [], [], [], []]]})")},
           {"gqa_with_latent_fields", kRun + " --model {D}/m.json", 2,
            "m.json: attention.q_lora_rank: applies to mla attention only",
            file("m.json", R"({"experts": 8, "top_k": 2, "moe_layers": 2, "hidden": 64, "intermediate": 64,
                               "attention": {"kind": "gqa", "heads": 4, "kv_heads": 4, "head_dim": 16, "q_lora_rank": 8}})")},
           {"integer_as_float", kRun + " --model {D}/m.json", 0, "",
            file("m.json", R"({"experts": 8, "top_k": 2, "moe_layers": 2, "hidden": 64e0, "intermediate": 64.0,
                               "attention": {"kind": "gqa", "heads": 4, "kv_heads": 4, "head_dim": 16}})")},
       })
    check(c);
}

TEST(CliInputs, AnEditedPlacementCacheEntryIsSolvedAgain) {
  const std::string dir = ::testing::TempDir() + "/hardening/cache";
  fs::remove_all(dir);
  fs::create_directories(dir);
  write(dir + "/m.json", kTinyModel);
  const std::string run = "run --fidelity flow --steps 1 --batch 16 --no-plots --strategy hdmoe-node --model " + dir +
                          "/m.json --hw nmp-4x4-5t50g --cache-dir " + dir + "/cache --out ";
  const CliRun first = run_nmpsim(words(run + dir + "/a"));
  ASSERT_EQ(first.code, 0) << first.out;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir + "/cache")) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 1u);
  nlohmann::json entry = nlohmann::json::parse(testing::read_all(entries[0].string()));
  for (auto& layer : entry["placement"]["layers"])
    for (auto& row : layer) row = nlohmann::json::parse("[[0, 1.0]]");  // every expert on node 0
  write(entries[0].string(), entry.dump());
  const CliRun second = run_nmpsim(words(run + dir + "/b"));
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_NE(second.stderr_text.find("does not match what it was stored with: solving again"), std::string::npos)
      << second.out;
  EXPECT_EQ(testing::read_all(dir + "/a/layers.csv"), testing::read_all(dir + "/b/layers.csv"));
}

}  // namespace
}  // namespace nmpsim
