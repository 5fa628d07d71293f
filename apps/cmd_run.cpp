// `nmpsim run`: MoE inference end to end, from a run spec (a --spec file and/or command-line options)
// to results: run_experiment() does the work, this command only parses, calls it and reports.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/commands.h"
#include "nmpsim/apps/experiment.h"
#include "nmpsim/apps/method_flags.h"
#include "nmpsim/apps/router_choice.h"
#include "nmpsim/apps/spec_options.h"
#include "nmpsim/base/output_files.h"
#include "nmpsim/methods/register_all.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

namespace {

/// Files of `nmpsim run --out DIR` that a run may write: those this run does not write are an earlier
/// run's and are removed when it commits (docs/FORMATS.md).
const std::vector<std::string> kRunOutputs = {"summary.json",        "summary.csv",   "layers.csv",    "links.csv",
                                              "links*_*.png",        "links*_*.dat",  "node_load.dat", "node_load.png",
                                              "layer_imbalance.dat", "phases.dat",    "phases.png",    "plots.gp",
                                              "plots.log",           "messages-*.csv"};

/// Every output of the run, all or nothing (a failure leaves the directory as it was); `logs` is the
/// scratch directory the message logs were written to ("" for none).
std::string write_outputs(const Experiment& x, const mapping::Registry& registry, const std::string& out_dir,
                          bool plots, const std::string& logs, const std::string& timeline, base::OutputFiles& out) {
  if (!timeline.empty()) {
    std::vector<std::pair<std::string, const nlohmann::json*>> events;
    for (const StrategyReport& r : x.reports) events.emplace_back(r.result.strategy, &r.result.timeline);
    out.write(timeline, mapping::timeline_file(events).dump() + "\n", "--timeline");
  }
  out.write(out_dir + "/summary.json", summary_json(x.prepared, x.reports, &registry).dump(2) + "\n", "--out");
  out.write(out_dir + "/summary.csv", summary_csv(x.reports, run_steps(x.prepared)), "--out");
  out.write(out_dir + "/layers.csv", layers_csv(x.reports), "--out");
  out.write(out_dir + "/links.csv", links_csv(x.reports, x.prepared.hardware), "--out");
  std::string note;
  if (plots) {
    const std::string scratch = out.make_scratch_dir(out_dir);
    const PreparedExperiment& e = x.prepared;
    const std::string context = e.model.name + " on " + e.hardware.name + ", batch " +
                                std::to_string(e.cfg.shape.batch) + ", attention TP " +
                                std::to_string(e.cfg.attn_tp > 0 ? e.cfg.attn_tp : e.hardware.topology.nodes());
    note = write_plots(scratch, x.reports, e.hardware, context);
    for (const auto& f : std::filesystem::directory_iterator(scratch))
      if (f.is_regular_file()) out.adopt(f.path().string(), out_dir + "/" + f.path().filename().string(), "--out");
  }
  if (!logs.empty())
    for (const auto& f : std::filesystem::directory_iterator(logs))
      if (f.is_regular_file()) out.adopt(f.path().string(), out_dir + "/" + f.path().filename().string(), "--out");
  out.remove_stale(out_dir, kRunOutputs);
  out.commit();
  return note;
}

void print_table(std::FILE* rep, const Experiment& x, const std::string& out_dir, const std::string& plot_note) {
  const PreparedExperiment& e = x.prepared;
  const std::string how = e.spec.accounting.name.empty()
                              ? std::string(mapping::fidelity_name(e.spec.fidelity)) + " fidelity"
                              : e.spec.accounting.name + " accounting (no simulation, 1 step)";
  const mapping::RunShape& sh = e.cfg.shape;
  const RunSteps steps = run_steps(e);
  std::string shape = "batch " + std::to_string(sh.batch) + ", " + std::to_string(e.cfg.steps) + " steps, context " +
                      std::to_string(sh.context);
  if (sh.kind == mapping::StepKind::kPrefill)
    shape = "prefill of " + std::to_string(sh.batch) + " x " + std::to_string(sh.prompt_tokens) + " prompt tokens, " +
            std::to_string(e.cfg.steps) + " step" + (e.cfg.steps > 1 ? "s" : "");
  if (sh.kind == mapping::StepKind::kTrain)
    shape = "training on " + std::to_string(sh.batch) + " x " + std::to_string(sh.prompt_tokens) + " tokens" +
            (sh.recompute ? " with recomputation" : "") + ", " + std::to_string(e.cfg.steps) + " step" +
            (e.cfg.steps > 1 ? "s" : "");
  if (sh.kind == mapping::StepKind::kMixed)
    shape = "mixed steps of " + std::to_string(sh.batch) + " decode tokens (context " + std::to_string(sh.context) +
            ") and a " + std::to_string(sh.prompt_tokens) + "-token prompt in chunks of " +
            std::to_string(sh.prefill_chunk) + ", " + std::to_string(e.cfg.steps) + " steps";
  std::fprintf(rep, "nmpsim run: %s on %s, %s, %s trace, %s\n", e.model.name.c_str(), e.hardware.name.c_str(),
               shape.c_str(), e.trace.source().c_str(), how.c_str());
  double tp_tbt = 0;
  for (const auto& r : x.reports)
    if (r.result.strategy == "tp") tp_tbt = r.result.mean_tbt_s();
  int w = 12;  // the strategy column fits the longest name
  for (const auto& r : x.reports) w = std::max(w, static_cast<int>(r.result.strategy.size()));
  std::fprintf(rep, "  %-*s %12s %8s %12s %12s %12s %12s\n", w, "strategy",
               sh.kind == mapping::StepKind::kDecode ? "TBT (us)" : "step (us)", "vs TP", "attention", "allreduce",
               "moe compute", "moe comm");
  using F = mapping::PhaseFamily;
  for (const auto& report : x.reports) {
    const mapping::StrategyResult& r = report.result;
    char speed[32] = "-";
    if (tp_tbt > 0) std::snprintf(speed, sizeof speed, "%.2fx", tp_tbt / r.mean_tbt_s());
    std::fprintf(rep, "  %-*s %12.1f %8s %12.1f %12.1f %12.1f %12.1f\n", w, r.strategy.c_str(), r.mean_tbt_s() * 1e6,
                 speed, r.mean_family_s(F::kAttention) * 1e6, r.mean_family_s(F::kAllReduce) * 1e6,
                 r.mean_family_s(F::kMoeCompute) * 1e6, r.mean_family_s(F::kMoeComm) * 1e6);
    const double other = r.mean_family_s(F::kOther);
    if (other > 0) std::fprintf(rep, "  %-*s %12s other phases %.1f us\n", w, "", "", other * 1e6);
  }
  std::fprintf(rep, "  (microseconds per %s step, summed over %d layers%s; outputs in %s/)\n",
               mapping::step_kind_name(sh.kind), e.model.layers(),
               sh.kind == mapping::StepKind::kTrain ? ", forward and backward, and the optimizer" : "",
               out_dir.c_str());
  if (sh.kind == mapping::StepKind::kTrain)
    for (const auto& report : x.reports) {
      const mapping::TrainTimes t = steps.train_times(report.result);
      std::fprintf(
          rep, "  %-*s forward %.1f, backward %.1f (recompute %.1f), grad sync %.1f, optimizer %.1f us; MFU %.1f%%\n",
          w, report.result.strategy.c_str(), t.forward_s * 1e6, t.backward_s * 1e6, t.recompute_s * 1e6,
          t.grad_sync_s * 1e6, t.optimizer_s * 1e6, 100 * steps.mfu(report.result));
    }
  if (sh.kind != mapping::StepKind::kDecode && sh.kind != mapping::StepKind::kTrain)
    for (const auto& report : x.reports)
      std::fprintf(rep, "  %-*s TTFT %.1f us, %.0f prefill tokens/s\n", w, report.result.strategy.c_str(),
                   steps.ttft_s(report.result) * 1e6, steps.prefill_tokens_per_s(report.result));
  if (!plot_note.empty()) std::fprintf(rep, "  %s\n", plot_note.c_str());
}

}  // namespace

namespace {
/// --router, --rtl-nodes and --message-log, once the experiment is prepared (they need cycle fidelity
/// and the hardware's mesh). Returns the scratch directory the message logs go to ("" for none).
std::string set_router_options(const po::variables_map& vm, const PreparedExperiment& p, const std::string& router,
                               const std::string& rtl_nodes, const std::string& out_dir, base::OutputFiles& out,
                               ExperimentOptions& opt) {
  const bool cycle = p.spec.fidelity == mapping::Fidelity::kCycle && p.spec.accounting.name.empty();
  if (!cycle && (router != "engine" || vm.count("rtl-nodes") || vm.count("message-log")))
    throw UsageError(std::string(router != "engine"      ? "--router"
                                 : vm.count("rtl-nodes") ? "--rtl-nodes"
                                                         : "--message-log") +
                     ": needs --fidelity cycle (the flow model has no routers and no messages)");
  opt.pin_routers =
      router_factory(parse_router_choice(router, rtl_nodes, vm.count("rtl-nodes") > 0, p.hardware.noc_config()));
  if (!vm.count("message-log")) return "";
  opt.message_log_dir = out.make_scratch_dir(out_dir);  // each strategy's log, as it finishes
  return opt.message_log_dir;
}
/// --list-strategies, --list-policies, --list-accountings: prints what was asked; false if none was.
bool print_run_lists(const po::variables_map& vm, const mapping::Registry& registry) {
  if (!vm.count("list-strategies") && !vm.count("list-policies") && !vm.count("list-accountings")) return false;
  if (vm.count("list-accountings"))
    std::cout << "accountings (--accounting, --accounting-opt NAME.KEY=VALUE):\n" << registry.describe_accountings();
  if (vm.count("list-strategies"))
    std::cout << "strategies (--strategy, --strategy-opt NAME.KEY=VALUE):\n" << registry.describe_strategies();
  if (vm.count("list-policies"))
    std::cout << "runtime policies (--policy, --policy-opt NAME.KEY=VALUE):\n" << registry.describe_policies();
  return true;
}

/// --jobs: cycle fidelity without --vcd only, 1-1024.
void set_jobs(const po::variables_map& vm, const RunSpec& spec, const std::string& vcd, ExperimentOptions& opt) {
  if (!vm.count("jobs")) return;
  const bool cycle = spec.fidelity == mapping::Fidelity::kCycle && spec.accounting.name.empty();
  if (!cycle || !vcd.empty())
    throw UsageError(std::string("--jobs: ") + (cycle
                                                    ? "with --vcd one process runs every strategy in turn"
                                                    : "only cycle fidelity simulates strategies in worker processes"));
  opt.jobs = vm["jobs"].as<int>();
  if (opt.jobs < 1 || opt.jobs > 1024)
    throw UsageError("--jobs: must be in [1, 1024] (got " + std::to_string(opt.jobs) + ")");
}

/// Progress on standard error (unless `quiet`): notes, and each layer as it finishes (a line that
/// rewrites itself on a terminal, the last layer of each step otherwise). `layers` and `steps` are
/// filled in once the experiment is prepared.
void report_progress(ExperimentOptions& opt, bool quiet, bool tty, const int& layers, const int& steps) {
  opt.note = [quiet](const std::string& line) {
    if (!quiet) std::fprintf(stderr, "%s\n", line.c_str());
  };
  opt.on_layer = [quiet, tty, &layers, &steps](const std::string& strategy, int s, int l) {
    if (quiet || (!tty && l + 1 != layers)) return;
    std::fprintf(stderr, "%s  %-12s step %d/%d layer %d/%d", tty ? "\r" : "", strategy.c_str(), s + 1, steps, l + 1,
                 layers);
    if (!tty) std::fprintf(stderr, "\n");
  };
}

/// --timeline-step and --timeline-layers (A or A-B), once the experiment is prepared.
void set_timeline(const po::variables_map& vm, const std::string& timeline, long long step, const std::string& layers,
                  PreparedExperiment& e) {
  if (timeline.empty()) {
    if (given(vm, "timeline-step") || given(vm, "timeline-layers"))
      throw UsageError(std::string(given(vm, "timeline-step") ? "--timeline-step" : "--timeline-layers") +
                       ": applies with --timeline FILE");
    return;
  }
  if (!e.spec.accounting.name.empty())
    throw UsageError("--timeline: needs a simulation (not --accounting " + e.spec.accounting.name + ")");
  mapping::TimelineWindow& w = e.cfg.timeline;
  w.step = static_cast<int>(checked_count(step, "timeline-step", 0, e.cfg.steps - 1));
  // A training step's schedules: forward 0..L-1, backward of layer L-1..0 as L..2L-1, optimizer 2L.
  const bool train = e.cfg.shape.kind == mapping::StepKind::kTrain;
  const int last = train ? 2 * e.model.layers() : e.model.layers() - 1;
  const size_t dash = layers.find('-');
  try {
    size_t used = 0;
    w.first_layer = std::stoi(layers.substr(0, dash), &used);
    if (used != (dash == std::string::npos ? layers.size() : dash)) throw std::invalid_argument(layers);
    w.last_layer = dash == std::string::npos ? w.first_layer : std::stoi(layers.substr(dash + 1), &used);
    if (dash != std::string::npos && used != layers.size() - dash - 1) throw std::invalid_argument(layers);
  } catch (const std::exception&) {
    throw UsageError("--timeline-layers: expected A or A-B (layer numbers from 0), got '" + layers + "'");
  }
  if (w.first_layer < 0 || w.last_layer < w.first_layer || w.last_layer > last)
    throw UsageError("--timeline-layers: " + layers + " is not a range within the model's layers 0-" +
                     std::to_string(last) +
                     (train ? " (a training step: forward 0-" + std::to_string(e.model.layers() - 1) +
                                  ", backward, optimizer " + std::to_string(last) + ")"
                            : std::string()));
}

/// The options of `nmpsim run` beyond the run spec's.
struct RunOptions {
  std::string out_dir = "nmpsim-out", vcd, spec_file, cache, router = "engine", rtl_nodes, timeline,
              timeline_layers = "0";
  long long timeline_step = 0;
};

void add_run_options(po::options_description& desc, RunOptions& o) {
  // clang-format off
  desc.add_options()
    ("help", "show this help")
    ("spec", po::value(&o.spec_file), "run spec JSON (docs/FORMATS.md); summary.json's \"spec\" is one")
    ("out", po::value(&o.out_dir)->default_value(o.out_dir), "output directory (summary.json, CSVs, PNGs)")
    ("vcd", po::value(&o.vcd), "cycle fidelity: trace PE busy state and per-link flit counters to this VCD file")
    ("cache-dir", po::value(&o.cache), "where solved placements are kept (default $NMPSIM_CACHE_DIR, else ~/.cache/nmpsim)")
    ("no-cache", "solve placements again instead of reusing cached ones")
    ("jobs", po::value<int>(), "cycle fidelity: strategies simulated at once, each in its own process (default: the host's cores; results do not depend on it)")
    ("router", po::value(&o.router)->default_value(o.router),
     "cycle fidelity: the mesh's routers: engine (built-in, fastest; a look-ahead mesh runs its SystemC model) | sc (pin-level SystemC modules) | rtl[:NAME] (Verilated SystemVerilog: nmp, or la for noc.router_kind lookahead) | mixed[:NAME] (RTL at --rtl-nodes, SystemC elsewhere); every message is delivered in the same cycle with each")
    ("rtl-nodes", po::value(&o.rtl_nodes), "--router mixed: comma-separated node ids with the RTL router (default: the nodes with x + y even)")
    ("message-log", "cycle fidelity: write every delivered message to OUT/messages-STRATEGY.csv")
    ("timeline", po::value(&o.timeline),
     "write a timeline of one step's layers to this JSON file (Chrome trace events: open in Perfetto or "
     "chrome://tracing): per node its compute and network lanes, per micro-batch its phases, an arrow per transfer")
    ("timeline-step", po::value(&o.timeline_step)->default_value(0), "--timeline: the step (from 0)")
    ("timeline-layers", po::value(&o.timeline_layers)->default_value(o.timeline_layers),
     "--timeline: the layers, A or A-B (from 0)")
    ("no-plots", "do not draw PNG plots")
    ("quiet", "print nothing but errors");
  // clang-format on
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  mapping::Registry registry;
  methods::register_all(registry);
  RunOptions o;
  SpecOptions so;
  po::options_description desc(
      "nmpsim run: time-between-tokens of an MoE model on NMP or wafer-scale hardware\n\n"
      "Usage: nmpsim run [options]     (defaults: HD-MoE 4x8 mesh, Mixtral-8x7B, synthetic trace, every strategy)\n"
      "       nmpsim run --spec FILE [options]   (a run spec; options given here override its fields)\n\nOptions");
  add_run_options(desc, o);
  so.add_strategies(desc, registry, registry.default_strategies());  // the registered default comparison
  so.add_run_shape(desc, 32, /*simulation=*/true);
  so.add_workload(desc);
  const MethodFlags flags(registry, desc, /*outputs=*/false, /*policies=*/true);
  const po::variables_map vm = parse_options(args, desc);
  if (vm.count("help")) {
    std::cout << desc
              << "\nOutputs and their units: docs/FORMATS.md. Exit codes: 0 ok, 1 simulation failure, 2 bad input.\n";
    return kExitOk;
  }
  if (print_run_lists(vm, registry)) return kExitOk;
  const bool quiet = vm.count("quiet") > 0;
  RunSpec spec = o.spec_file.empty() ? RunSpec{} : load_run_spec(o.spec_file);
  flags.strategy_options(vm, strategy_names(vm, spec, registry), so);
  so.apply(vm, spec, registry);
  flags.policies(vm, spec);

  mapping::PlacementCache placements(placement_cache_dir(vm, o.cache), [&](const std::string& w) {
    if (!quiet) std::fprintf(stderr, "%s\n", w.c_str());
  });
  ExperimentOptions opt;
  opt.registry = &registry;
  opt.cache = &placements;
  set_jobs(vm, spec, o.vcd, opt);
  const bool tty = isatty(STDERR_FILENO);
  int layers = 0, steps = 0;
  report_progress(opt, quiet, tty, layers, steps);
  base::OutputFiles::check_dir(o.out_dir, "--out");  // before anything runs: nowhere to write is an input error
  if (!o.vcd.empty()) base::OutputFiles::check_file(o.vcd, "--vcd");
  if (!o.timeline.empty()) base::OutputFiles::check_file(o.timeline, "--timeline");
  check_router_name(o.router);  // before any placement is solved
  base::OutputFiles out;        // every output, staged from the start: an interrupted run leaves nothing
  out.make_dir(o.out_dir, "--out");
  if (!o.vcd.empty()) opt.vcd = out.stage(o.vcd, "--vcd");
  std::FILE* rep = !o.vcd.empty() && base::OutputFiles::is_stdout(o.vcd) ? stderr : stdout;
  Experiment x;
  x.prepared = prepare_experiment(spec, opt);
  const std::string logs = set_router_options(vm, x.prepared, o.router, o.rtl_nodes, o.out_dir, out, opt);
  set_timeline(vm, o.timeline, o.timeline_step, o.timeline_layers, x.prepared);
  layers = x.prepared.model.layers();
  // A training step's records: the forward of every layer, the backward of every layer, the optimizer.
  if (x.prepared.cfg.shape.kind == mapping::StepKind::kTrain) layers = 2 * layers + 1;
  steps = x.prepared.cfg.steps;
  x.reports = run_prepared(x.prepared, opt);
  if (tty && !quiet) std::fprintf(stderr, "\r%70s\r", "");
  const std::string plot_note = write_outputs(x, registry, o.out_dir, !vm.count("no-plots"), logs, o.timeline, out);
  if (!quiet) print_table(rep, x, o.out_dir, plot_note);
  if (!quiet)
    for (const std::string& w : setup_warnings(x.prepared, x.reports)) std::fprintf(stderr, "%s\n", w.c_str());
  return kExitOk;
}

}  // namespace nmpsim::apps
