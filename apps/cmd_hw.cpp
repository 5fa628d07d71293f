// `nmpsim hw`: list, describe, dump and exercise hardware descriptions.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/commands.h"
#include "nmpsim/apps/hw_overrides.h"
#include "nmpsim/apps/spec_options.h"
#include "nmpsim/base/output_files.h"
#include "nmpsim/hw/analytical.h"
#include "nmpsim/hw/hardware_fields.h"
#include "nmpsim/hw/system.h"
#include "nmpsim/methods/register_all.h"
#include "nmpsim/noc/pin_mesh.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

namespace {

struct ExerciseResult {
  double total_us = 0, compute_us = 0, all_to_all_us = 0;
  hw::EnergyReport energy;
  uint64_t dram_bytes = 0;
};

/// Every node streams `weight_bytes` through a GEMV (2 FLOPs per FP16 weight), then sends
/// `message_bytes` to every other node and waits for all of its own messages to arrive.
ExerciseResult exercise(hw::System& sys, uint64_t weight_bytes, uint64_t message_bytes) {
  const int n = sys.nodes();
  const double flops = 2.0 * static_cast<double>(weight_bytes) / sys.spec().compute.element_bytes;
  for (int i = 0; i < n; ++i) {
    pe::ProcessingElement& p = sys.pe(i);
    p.submit(pe::Command::compute(flops, weight_bytes, "gemv"));
    if (message_bytes == 0 || n < 2) continue;  // no all-to-all
    for (int k = 1; k < n; ++k) p.submit(pe::Command::send((i + k) % n, message_bytes, 1, "a2a"));
    p.submit(pe::Command::recv(1, n - 1, "a2a"));
    p.submit(pe::Command::wait_sends("a2a"));
  }
  sc_core::sc_start();
  ExerciseResult r;
  r.total_us = sc_core::sc_time_stamp().to_seconds() * 1e6;
  double compute_end = 0;
  for (int i = 0; i < n; ++i) {
    for (const auto& rec : sys.pe(i).log())
      if (rec.kind == pe::CommandKind::kCompute) compute_end = std::max(compute_end, rec.end.to_seconds());
    r.dram_bytes += sys.dram(i).stats().bytes_read + sys.dram(i).stats().bytes_written;
  }
  r.compute_us = compute_end * 1e6;
  r.all_to_all_us = r.total_us - r.compute_us;
  r.energy = sys.energy();
  return r;
}

/// The exercise must fit: its weights in a node's memory, its messages' packets in this machine's memory.
void check_exercise_size(const hw::HardwareSpec& spec, uint64_t weight_bytes, uint64_t message_bytes) {
  constexpr int kMaxSystemNodes = 4096;  // each node is a PE (two SystemC threads) and a DRAM model
  if (spec.topology.nodes() > kMaxSystemNodes)
    throw UsageError("--exercise: " + std::to_string(spec.topology.nodes()) +
                     " nodes; the SystemC model is built for at most " + std::to_string(kMaxSystemNodes) +
                     " (nmpsim noc simulates NoCs up to 256x256)");
  if (weight_bytes > spec.memory.capacity_bytes)
    throw UsageError("--exercise-weight-mib: " + std::to_string(weight_bytes >> 20) +
                     " MiB of weights is more than a node's " + std::to_string(spec.memory.capacity_bytes >> 20) +
                     " MiB of memory");
  const double n = spec.topology.nodes();
  if (message_bytes == 0) return;  // no all-to-all
  const double flits = std::ceil(static_cast<double>(message_bytes) / spec.flit_bytes());
  const double packets = n * (n - 1) * std::ceil(flits / spec.noc.max_packet_flits);
  // A message costs about 300 bytes and 15 us of host time (docs/PERFORMANCE.md "Memory per input"):
  // 2^22 messages or packets are ~1.2 GiB and a minute.
  constexpr double kMaxPackets = 1 << 22;
  if (packets > kMaxPackets || n * (n - 1) > kMaxPackets)
    throw UsageError("--exercise-message-bytes: " + std::to_string(message_bytes) + " bytes to each of " +
                     std::to_string(static_cast<int>(n) - 1) + " nodes from every node is " +
                     std::to_string(static_cast<long long>(n * (n - 1))) + " messages in " +
                     std::to_string(static_cast<long long>(packets)) + " packets (at most " +
                     std::to_string(static_cast<long long>(kMaxPackets)) +
                     " of each are simulated at once; 0 bytes: no all-to-all)");
}

nlohmann::json exercise_json(const hw::HardwareSpec& spec, int nodes, const ExerciseResult& r) {
  const hw::EnergyReport& e = r.energy;
  nlohmann::json hops = nlohmann::json::object();  // keys "on_die", "die_to_die", "wafer_to_wafer" (classic)
  for (int l = 0; l < spec.topology.num_levels(); ++l) hops[spec.topology.link_key(l)] = e.noc_flit_hops[l];
  return {{"hardware", spec.name},
          {"nodes", nodes},
          {"total_us", r.total_us},
          {"gemv_us", r.compute_us},
          {"all_to_all_us", r.all_to_all_us},
          {"dram_bytes", r.dram_bytes},
          {"energy_pj", {{"dram", e.dram_pj}, {"noc", e.noc_pj}, {"compute", e.compute_pj}, {"total", e.total_pj()}}},
          {"noc_flit_hops", hops}};
}

/// `nmpsim hw --exercise`: the GEMV and all-to-all workload on the SystemC system, its report on
/// `rep`, and the VCD and JSON outputs (both or neither).
int run_exercise(const hw::HardwareSpec& spec, const std::string& vcd, const std::string& json_path,
                 uint64_t weight_bytes, uint64_t msg, std::FILE* rep) {
  base::OutputFiles out;  // the VCD and the JSON, both or neither
  hw::System sys("system", spec);
  if (!vcd.empty()) sys.enable_vcd(out.stage(vcd, "--vcd"));
  const ExerciseResult r = exercise(sys, weight_bytes, msg);
  const hw::EnergyReport& e = r.energy;
  std::fprintf(rep, "exercise on %s: %d nodes, %lld MiB of weights each, %llu-byte all-to-all\n", spec.name.c_str(),
               sys.nodes(), static_cast<long long>(weight_bytes >> 20), static_cast<unsigned long long>(msg));
  std::fprintf(rep, "  time: %.3f us total = %.3f us GEMV (last node) + %.3f us all-to-all\n", r.total_us, r.compute_us,
               r.all_to_all_us);
  std::fprintf(rep, "  energy: %.4g uJ total = DRAM %.4g uJ + NoC %.4g uJ + compute %.4g uJ\n", e.total_pj() / 1e6,
               e.dram_pj / 1e6, e.noc_pj / 1e6, e.compute_pj / 1e6);
  sys.finish_vcd(true);
  if (!json_path.empty()) out.write(json_path, exercise_json(spec, sys.nodes(), r).dump(2) + "\n", "--json");
  out.commit();
  const std::string err = sys.mesh().network().check_conservation();
  const bool router_failed = sys.mesh().pin_mesh() && !sys.mesh().pin_mesh()->router_error().empty();
  if (!err.empty() || sys.mesh().network().stalled() || router_failed) {
    const noc::Network& net = sys.mesh().network();
    const noc::PinMesh* pins = sys.mesh().pin_mesh();
    const std::string own =
        pins && !pins->router_error().empty() ? "router error: " + pins->router_error() + "; then " : "";
    std::fprintf(stderr, "nmpsim hw: model failure: %s%s\n", own.c_str(),
                 net.stalled() ? net.stall_report().c_str() : err.c_str());
    return kExitCheckFailed;
  }
  return kExitOk;
}

/// The --report given (null for none) and its options; unknown reports and stray options are errors.
const mapping::HardwareReport* chosen_report(const mapping::Registry& registry, const std::string& report,
                                             const std::vector<std::string>& report_opts, nlohmann::json& options) {
  const mapping::HardwareReport* r = report.empty() ? nullptr : registry.hardware_report(report);
  if (!report.empty() && !r) throw UsageError("--report: unknown report '" + report + "' (--list-reports)");
  if (!report_opts.empty() && report.empty()) throw UsageError("--report-opt needs --report");
  nlohmann::json given = nlohmann::json::object();
  for (const std::string& o : report_opts) parse_named_option(report + "." + o, "--report-opt", given);
  options = given.value(report, nlohmann::json::object());
  return r;
}

/// --list-reports, --list-presets and --fields without a hardware: prints what was asked; false if none
/// was.
bool print_hw_lists(const po::variables_map& vm, const mapping::Registry& registry) {
  const bool fields = vm.count("fields") && !vm.count("hw") && !vm.count("preset");
  if (fields) {
    for (const char* k : {"set", "describe", "print-json", "report", "exercise"})
      if (vm.count(k)) throw UsageError(std::string("--fields with --") + k + " needs --hw");
    std::cout << hw::hardware_fields_markdown();
  }
  if (vm.count("list-reports"))
    std::cout << "hardware reports (--report NAME, --report-opt KEY=VALUE):\n" << registry.describe_hardware_reports();
  if (vm.count("list-presets"))
    for (const auto& name : hw::preset_names())
      std::printf("%-26s %s\n", name.c_str(), hw::preset_summary(name).c_str());
  return fields || vm.count("list-reports") || vm.count("list-presets");
}

}  // namespace

int cmd_hw(const std::vector<std::string>& args) {
  std::string preset, file, vcd, json_path;
  std::vector<std::string> sets;
  std::vector<std::string> report_opts;
  std::string report;
  long long weight_mib = 64, message_bytes = 8192;
  po::options_description desc(
      "nmpsim hw: hardware presets and descriptions\n\n"
      "Usage: nmpsim hw --list-presets\n"
      "       nmpsim hw --list-reports\n"
      "       nmpsim hw --fields\n"
      "       nmpsim hw --hw PRESET|FILE [--set PATH=VALUE ...] [--describe] [--print-json] [--fields] [--report NAME "
      "[--report-opt KEY=VALUE ...]] [--exercise ...]\n\nOptions");
  // clang-format off
  desc.add_options()
    ("help", "show this help")
    ("list-presets", "print the built-in presets, one per line, name first")
    ("hw", po::value(&file), "a built-in preset (see --list-presets) or a hardware description JSON file "
                             "(format in docs/FORMATS.md)")
    ("preset", po::value(&preset), "the same as --hw for a preset (kept for old command lines)")
    ("set", po::value(&sets)->composing(),
     "PATH=VALUE: override one field by its JSON path (--fields lists them), e.g. compute.peak_tflops=10 "
     "(repeatable)")
    ("describe", "print the system: nodes, bandwidths, compute/bandwidth ratios (default)")
    ("print-json", "print the full description as JSON (a starting point for your own file)")
    ("fields", "print every hardware field (JSON path, type, unit, default, range, meaning) as a Markdown table; "
               "with --hw, and its value there")
    ("list-reports", "print the reports the methods provide (--report), with their options")
    ("report", po::value(&report), "print a method's report on the hardware, e.g. hierarchy (--list-reports)")
    ("report-opt", po::value(&report_opts)->composing(),
     "KEY=VALUE: an option of the --report (VALUE as JSON when it parses, else a string); repeatable")
    ("exercise", "simulate a small workload: every node streams weights through a GEMV, then an all-to-all")
    ("exercise-weight-mib", po::value(&weight_mib)->default_value(weight_mib), "--exercise: MiB of weights per node")
    ("exercise-message-bytes", po::value(&message_bytes)->default_value(message_bytes),
     "--exercise: bytes each node sends to every other node")
    ("vcd", po::value(&vcd), "--exercise: write PE busy state and per-link flit counts to this VCD file")
    ("json", po::value(&json_path), "--exercise: write times and the energy report as JSON to this file");
  // clang-format on
  const po::variables_map vm = parse_options(args, desc);
  if (vm.count("help")) {
    std::cout << desc;
    return kExitOk;
  }
  mapping::Registry registry;
  methods::register_all(registry);
  if (print_hw_lists(vm, registry)) return kExitOk;
  if (preset.empty() == file.empty()) throw UsageError("give exactly one of --hw PRESET|FILE or --preset NAME");
  const std::string name = preset.empty() ? file : preset;
  const hw::HardwareSpec spec =
      sets.empty() ? hw::load_hardware(name) : hw::hardware_from_json(override_hardware(name, sets), "--set");
  const uint64_t weight_bytes = checked_count(weight_mib, "exercise-weight-mib", 0, 1 << 20) << 20;
  const uint64_t msg = checked_count(message_bytes, "exercise-message-bytes", 0, 1LL << 32);
  if (!vm.count("exercise"))
    for (const char* k : {"vcd", "json", "exercise-weight-mib", "exercise-message-bytes"})
      if (!vm[k].empty() && !vm[k].defaulted()) throw UsageError(std::string("--") + k + " needs --exercise");
  const bool describes = vm.count("describe") ||
                         (!vm.count("print-json") && !vm.count("fields") && !vm.count("exercise") && report.empty());
  nlohmann::json report_options;
  const mapping::HardwareReport* hw_report = chosen_report(registry, report, report_opts, report_options);
  if (vm.count("exercise")) check_exercise_size(spec, weight_bytes, msg);
  if (!vcd.empty()) base::OutputFiles::check_file(vcd, "--vcd");
  if (!json_path.empty()) base::OutputFiles::check_file(json_path, "--json");
  base::OutputFiles::check_distinct({{"--vcd", vcd}, {"--json", json_path}});
  // With an output on standard output, the report goes to standard error.
  std::FILE* rep = stdout;
  for (const std::string* p : {&vcd, &json_path})
    if (!p->empty() && base::OutputFiles::is_stdout(*p)) rep = stderr;
  for (const char* k : {"print-json", "fields", "describe", "report"})
    if (rep == stderr && vm.count(k))
      throw UsageError(std::string("--") + k + " and an output to standard output cannot share it");
  for (const std::string& w : spec.warnings()) std::cerr << "warning: " << w << "\n";
  if (vm.count("print-json")) std::cout << hw::to_json(spec).dump(2) << "\n";
  if (vm.count("fields")) std::cout << hw::hardware_fields_markdown(&spec);
  if (describes) std::cout << spec.describe();
  if (hw_report) std::cout << hw_report->report(hw::to_analytical(spec), report_options, "--report " + report);
  if (!vm.count("exercise")) return kExitOk;

  return run_exercise(spec, vcd, json_path, weight_bytes, msg, rep);
}

}  // namespace nmpsim::apps
