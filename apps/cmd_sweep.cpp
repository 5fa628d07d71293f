// `nmpsim sweep`: design-space sweeps. A sweep spec (or --axis options) expands into run specs, one
// per point; every point runs in its own worker process (-j N at once) and writes DIR/points/<id>/;
// results.csv and the plots are made from whatever is complete, so a killed sweep resumes where it
// stopped. --emit-jobs writes the same points as commands for GNU parallel and a Slurm job array
// (each runs `nmpsim sweep --out DIR --point K`); --collect merges their outputs.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/commands.h"
#include "nmpsim/apps/experiment.h"
#include "nmpsim/apps/hw_overrides.h"
#include "nmpsim/apps/run_report.h"
#include "nmpsim/apps/serve_config.h"
#include "nmpsim/apps/spec_options.h"
#include "nmpsim/apps/sweep.h"
#include "nmpsim/apps/workers.h"
#include "nmpsim/base/output_files.h"
#include "nmpsim/mapping/placement_cache.h"
#include "nmpsim/methods/register_all.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

namespace {

/// A serving point: every strategy of its spec serves the point's requests (apps/serve_config.h);
/// summary.json {"serve": its options, "strategies": {name: outcome_json}}.
nlohmann::json serve_point(const SweepPoint& p, const ExperimentOptions& opt, const std::string& cache_dir) {
  const RunSpec spec = point_run_spec(p);
  const serve::ServeConfig config = serve::serve_config_from_json(point_serve(p), "sweep point " + p.id);
  nlohmann::json strategies = nlohmann::json::object();
  for (const StrategySpec& st : spec.strategies) {
    RunSpec one = spec;
    one.strategies = {st};
    // Points that differ only in their serve options (the offered rate) share the step times.
    const std::string key = run_spec_to_json(one).dump() + (config.bucketing ? "" : " every shape");
    const std::string cache = cache_dir.empty() ? "" : cache_dir + "/" + mapping::fnv1a_hex(key) + ".json";
    strategies[st.name] = serve::outcome_json(serve::serve_once(one, config, opt, cache), config);
  }
  return {{"serve", serve::serve_config_to_json(config)}, {"strategies", strategies}};
}

/// Runs one point in this process and writes its outputs (all or nothing); on failure writes
/// error.txt instead. Returns "" or the error.
std::string run_point(const SweepPoint& p, const std::string& dir, const mapping::Registry& reg,
                      const std::string& cache_dir, int concurrent_runs) {
  try {
    mapping::PlacementCache cache(cache_dir, [](const std::string&) {});
    ExperimentOptions opt;
    opt.registry = &reg;
    opt.cache = &cache;
    opt.jobs = 1;  // the sweep's workers already use the cores
    opt.concurrent_runs = concurrent_runs;
    base::OutputFiles out;
    if (p.spec.contains("serve")) {
      std::string steps;  // --no-cache: no step cache either
      if (!cache_dir.empty()) {
        steps = std::filesystem::path(dir).parent_path().parent_path().string() + "/step_cache";
        base::OutputFiles made;  // the shared step cache's directory, before the point's run
        made.make_dir(steps, "--out");
        made.commit();
      }
      const nlohmann::json sum = serve_point(p, opt, steps);
      out.make_dir(dir, "--out");
      out.write(dir + "/summary.json", sum.dump(2) + "\n");
    } else {
      Experiment x;
      x.prepared = prepare_experiment(point_run_spec(p), opt);
      x.reports = run_prepared(x.prepared, opt);
      out.make_dir(dir, "--out");
      out.write(dir + "/summary.json", summary_json(x.prepared, x.reports, &reg).dump(2) + "\n");
      out.write(dir + "/summary.csv", summary_csv(x.reports, run_steps(x.prepared)));
    }
    out.write(dir + "/point.json", nlohmann::json{{"id", p.id}, {"values", p.values}, {"spec", p.spec}}.dump(2) + "\n");
    out.remove_stale(dir, p.spec.contains("serve") ? std::vector<std::string>{"error.txt", "summary.csv"}
                                                   : std::vector<std::string>{"error.txt"});
    out.commit();
    return "";
  } catch (const std::exception& e) {
    const std::string msg = mapping::one_line(e.what());
    base::OutputFiles out;  // error.txt, and no stale result beside it
    out.make_dir(dir, "--out");
    out.write(dir + "/error.txt", msg);
    out.remove_stale(dir, {"summary.json", "summary.csv", "point.json"});
    out.commit();
    return msg.empty() ? "failed" : msg;
  }
}

/// A word for the shell that runs an emitted script: single-quoted ('\'' for a quote). Control
/// characters (a newline would end a line of GNU parallel's input or a comment of the Slurm script)
/// are refused.
std::string shell_word(const std::string& s, const std::string& what) {
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      throw UsageError(what + ": '" + mapping::one_line(s) +
                       "' contains a control character (a newline?): "
                       "it cannot go into an emitted script");
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// FILE and FILE.slurm can be written, and every name that goes into them can be quoted.
void check_emit_target(const std::string& file, const std::string& out_dir) {
  const std::filesystem::path dir = std::filesystem::weakly_canonical(std::filesystem::absolute(out_dir));
  for (const std::string& f : {file, file + ".slurm"}) {
    const base::OutputTarget t = base::resolve_output(f, "--emit-jobs");
    if (t.kind != base::TargetKind::kNew && t.kind != base::TargetKind::kRegular)
      throw UsageError("--emit-jobs: '" + f + "' is not a regular file (FILE and FILE.slurm are written)");
    // Not a file the sweep itself writes in DIR (it would replace the jobs, or they it).
    const std::filesystem::path target(t.final);
    const std::string name = target.filename().string();
    if (target.parent_path() == dir &&
        (name == "sweep.json" || name == "results.csv" || name == "points" || name.rfind("sweep_", 0) == 0))
      throw UsageError("--emit-jobs: '" + f + "' is a file of the sweep's own directory (" + name + ")");
  }
  (void)shell_word(file + ".slurm", "--emit-jobs");
  (void)shell_word(std::filesystem::absolute(out_dir).lexically_normal().string(), "--out");
}

/// FILE (one command per point, for GNU parallel) and FILE.slurm (a job array), both or neither. Every
/// string from the user is one quoted word; `extra` are options the points must run with.
void emit_jobs(base::OutputFiles& out, const std::string& file, const std::string& out_dir, size_t points,
               const std::string& extra) {
  check_emit_target(file, out_dir);
  const std::string self = shell_word(std::filesystem::canonical("/proc/self/exe").string(), "the nmpsim binary");
  const std::string dir = shell_word(std::filesystem::absolute(out_dir).lexically_normal().string(), "--out");
  const std::string slurm = shell_word(file + ".slurm", "--emit-jobs");
  std::string lines;
  for (size_t k = 0; k < points; ++k)
    lines += self + " sweep --quiet --out " + dir + extra + " --point " + std::to_string(k) + "\n";
  out.write(file, lines, "--emit-jobs");
  out.write(file + ".slurm",
            "#!/bin/bash\n# Slurm job array, one sweep point per task: sbatch " + slurm +
                "\n# then: nmpsim sweep --collect --out " + dir + "\n#SBATCH --array=0-" +
                std::to_string(points ? points - 1 : 0) +
                "\n#SBATCH --cpus-per-task=1\n#SBATCH --job-name=nmpsim-sweep\nexec " + self + " sweep --quiet --out " +
                dir + extra + " --point \"$SLURM_ARRAY_TASK_ID\"\n",
            "--emit-jobs");
}

struct Progress {
  size_t total = 0, done = 0, failed = 0;
  bool tty = false, quiet = false;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  void show() const {
    if (quiet) return;
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = done ? el / done * (total - done) : 0;
    std::fprintf(stderr, "%ssweep: %zu/%zu points, %zu failed, %.0f s elapsed, ETA %.0f s%s", tty ? "\r" : "", done,
                 total, failed, el, eta, tty ? "   " : "\n");
  }
};

/// --serve KEY=VALUE on top of the spec's "serve" object.
void apply_serve_options(SweepSpec& s, const std::vector<std::string>& options) {
  for (const std::string& o : options) {
    const size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == o.size())
      throw UsageError("--serve: expected KEY=VALUE (e.g. slo_tpot_ms=50), got '" + o + "'");
    if (s.serve.is_null()) s.serve = nlohmann::json::object();
    s.serve[o.substr(0, eq)] = parse_value(o.substr(eq + 1));
  }
  if (!options.empty()) (void)serve::serve_config_from_json(s.serve, "--serve");
}

/// The sweep spec from --spec, or DIR/sweep.json for --collect and --point, plus --axis and
/// --baseline; its base run spec with the command line's run options applied.
SweepSpec resolve_spec(const po::variables_map& vm, const SpecOptions& so, const mapping::Registry& registry,
                       const std::string& spec_file, const std::string& saved, const std::vector<std::string>& axes,
                       const std::vector<std::string>& serve, const std::string& baseline, long long point) {
  SweepSpec s;
  bool from_file = true;
  if (!spec_file.empty())
    s = sweep_from_json(base::read_json_file(spec_file), spec_file);
  else if ((vm.count("collect") || point >= 0) && axes.empty())
    s = sweep_from_json(base::read_json_file(saved), saved);
  else
    from_file = false;
  for (const std::string& a : axes) s.axes.push_back(parse_axis(a));
  apply_serve_options(s, serve);
  if (!baseline.empty()) s.baseline = baseline;
  // A serving sweep steps at flow fidelity unless told otherwise, as `nmpsim serve` does.
  const bool flow = s.serving() && !given(vm, "fidelity") && !s.base.contains("fidelity");
  RunSpec base = run_spec_from_json(s.base, spec_file.empty() ? "base" : spec_file + ": base");
  const RunSpec from = base;
  so.apply(vm, base, registry);
  if (from_file && !given(vm, "strategy")) {  // the file's strategies, not --strategy's default
    base.strategies = from.strategies;
    base.all_strategies = from.all_strategies;
  }
  s.base = run_spec_to_json(base);
  if (flow) s.base["fidelity"] = "flow";
  return s;
}

/// A serving sweep's points that share step times (the same run spec, other serve options) run one
/// after another: the first of every design first, then the second of each, ... so that points
/// running at once are of different designs and a design's later rates find its step cache filled.
void serving_order(const std::vector<SweepPoint>& points, std::vector<size_t>& todo) {
  std::map<std::string, size_t> seen;
  std::vector<std::pair<size_t, size_t>> rank;  // (occurrence of its design, position)
  for (size_t k = 0; k < todo.size(); ++k) {
    nlohmann::json run = points[todo[k]].spec;
    if (!run.contains("serve")) return;  // a run sweep: in order
    run.erase("serve");
    rank.emplace_back(seen[run.dump()]++, k);
  }
  std::stable_sort(rank.begin(), rank.end());
  std::vector<size_t> out;
  for (const auto& [occurrence, k] : rank) out.push_back(todo[k]);
  todo = out;
}

/// Runs every point without a complete result, `jobs` at once; returns how many ran and failed.
std::pair<size_t, size_t> run_pending(const std::vector<SweepPoint>& points, const std::string& out_dir, int jobs,
                                      bool quiet, const mapping::Registry& registry, const std::string& cache_dir) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < points.size(); ++i)
    if (!point_done(out_dir + "/points/" + points[i].id, points[i])) todo.push_back(i);
  Progress prog;
  prog.total = todo.size();
  prog.tty = isatty(STDERR_FILENO);
  prog.quiet = quiet;
  if (todo.empty()) return {0, 0};
  serving_order(points, todo);
  std::vector<std::string> names;
  for (size_t i : todo) names.push_back(points[i].id);
  const std::vector<std::string> answers = run_in_workers(
      static_cast<int>(todo.size()), jobs > 0 ? jobs : available_cores(), names,
      [&](int k) {
        const SweepPoint& p = points[todo[static_cast<size_t>(k)]];
        return run_point(p, out_dir + "/points/" + p.id, registry, cache_dir, jobs > 0 ? jobs : available_cores());
      },
      [&](int) {
        ++prog.done;
        prog.show();
      });
  for (const std::string& a : answers) prog.failed += a.empty() ? 0 : 1;
  if (prog.tty && !quiet) std::fprintf(stderr, "\n");
  return {todo.size(), prog.failed};
}

/// results.csv and the plots from every complete point (all or nothing); returns the exit code.
int collect(const SweepSpec& s, const std::vector<SweepPoint>& points, const std::string& out_dir, bool plots,
            bool quiet, size_t run_now) {
  base::OutputFiles out;
  SweepTally tally;
  const std::string csv = results_csv(s, points, out_dir, &tally);
  out.write(out_dir + "/results.csv", csv, "--out");
  std::string note;
  if (plots) {
    const std::string scratch = out.make_scratch_dir(out_dir);
    note = sweep_plots(scratch, s, csv);
    for (const auto& f : std::filesystem::directory_iterator(scratch))
      if (f.path().extension() == ".png" || f.path().filename() == "sweep_plots.log")
        out.adopt(f.path().string(), out_dir + "/" + f.path().filename().string(), "--out");
  }
  out.remove_stale(out_dir, {"sweep_*.png", "sweep_plots.log"});
  out.commit();
  if (!quiet) {
    std::printf("nmpsim sweep: %zu points, %zu complete (%zu run now), %zu failed%s; results in %s/results.csv\n",
                points.size(), tally.complete, run_now, tally.failed,
                tally.missing ? (", " + std::to_string(tally.missing) + " without a result").c_str() : "",
                out_dir.c_str());
    if (!note.empty()) std::printf("  %s\n", note.c_str());
  }
  return tally.failed || tally.missing ? kExitCheckFailed : kExitOk;
}

/// The point directories of an earlier sweep into DIR that this one does not have (a sweep with fewer
/// points): their files are removed, and the directory when nothing else is in it.
void remove_stale_points(const std::string& out_dir, const std::vector<SweepPoint>& points) {
  std::set<std::string> ids;
  for (const SweepPoint& p : points) ids.insert(p.id);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(out_dir + "/points", ec)) {
    const std::string id = e.path().filename().string();
    const bool point_dir = id.size() > 1 && id[0] == 'p' && id.find_first_not_of("0123456789", 1) == std::string::npos;
    if (!point_dir || ids.count(id) || !e.is_directory(ec) || e.is_symlink(ec)) continue;
    for (const char* f : {"summary.json", "summary.csv", "point.json", "error.txt"})
      std::filesystem::remove(e.path() / f, ec);
    std::filesystem::remove(e.path(), ec);  // only if empty: never a user's files
  }
}

/// --point, --collect and --emit-jobs are three different jobs: one of them at most, and only the
/// options that job reads.
void check_modes(const po::variables_map& vm, long long point, int jobs) {
  const bool is_point = given(vm, "point"), is_collect = vm.count("collect") > 0, is_emit = vm.count("emit-jobs") > 0;
  if (is_point && point < 0) throw UsageError("--point: must be >= 0 (got " + std::to_string(point) + ")");
  if (given(vm, "jobs") && (jobs < 1 || jobs > 1024))
    throw UsageError("--jobs: must be in [1, 1024] (got " + std::to_string(jobs) + ")");
  if (is_point + is_collect + is_emit > 1)
    throw UsageError(std::string(is_point ? "--point" : "--collect") + " and " +
                     (is_emit ? "--emit-jobs" : "--collect") + " are different jobs: give one of them");
  if (given(vm, "jobs") && (is_point || is_collect || is_emit))
    throw UsageError(std::string("--jobs: ") +
                     (is_point     ? "--point runs one point"
                      : is_collect ? "--collect runs nothing"
                                   : "--emit-jobs runs nothing (its jobs run at GNU parallel's -j or Slurm's pace)"));
  if (is_collect && (vm.count("axis") || vm.count("serve")))
    throw UsageError(std::string("--collect merges the points of DIR/sweep.json or --spec: it takes no ") +
                     (vm.count("axis") ? "--axis" : "--serve"));
  if (is_point && vm.count("serve") && !vm.count("spec"))
    throw UsageError("--point runs a point of DIR/sweep.json as it was resolved: it takes no --serve");
  if (is_collect && (vm.count("no-cache") || vm.count("cache-dir")))
    throw UsageError("--collect runs nothing: it takes no --cache-dir or --no-cache");
}

/// `--point K`: runs that point only (as a job of an emitted array does); 1 when it failed.
int run_only_point(SweepSpec& s, const std::vector<SweepPoint>& points, size_t k, const std::string& out_dir,
                   const mapping::Registry& registry, const std::string& cache_dir) {
  const SweepPoint& p = points[k];
  resolve_values(s, points, registry, 1, &p);
  const std::string err = run_point(p, out_dir + "/points/" + p.id, registry, cache_dir, 1);
  if (!err.empty()) std::fprintf(stderr, "nmpsim sweep: point %s: %s\n", p.id.c_str(), err.c_str());
  return err.empty() ? kExitOk : kExitCheckFailed;
}

/// The options the emitted jobs run their points with, quoted for the shell (after checking the target).
std::string emitted_options(const po::variables_map& vm, const std::string& emit, const std::string& out_dir,
                            const std::string& cache) {
  check_emit_target(emit, out_dir);
  std::string extra;
  if (vm.count("no-cache")) extra += " --no-cache";
  if (vm.count("cache-dir"))  // absolute: the jobs may run in another directory
    extra += " --cache-dir " + shell_word(std::filesystem::absolute(cache).lexically_normal().string(), "--cache-dir");
  return extra;
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& args) {
  mapping::Registry registry;
  methods::register_all(registry);
  std::string out_dir = "nmpsim-sweep", spec_file, baseline, emit, cache;
  std::vector<std::string> axes, serve;
  long long point = -1;
  int jobs = 0;
  SpecOptions so;
  po::options_description desc(
      "nmpsim sweep: run many points of a design space, each in its own process\n\n"
      "Usage: nmpsim sweep --axis PATH=V1,V2,... [--axis ...] [run options] --out DIR [-j N]\n"
      "       nmpsim sweep --spec SWEEP.json --out DIR [-j N]\n"
      "       nmpsim sweep --spec SWEEP.json --out DIR --emit-jobs FILE   (GNU parallel / Slurm), then --collect\n\n"
      "Options");
  // clang-format off
  desc.add_options()
    ("help", "show this help")
    ("spec", po::value(&spec_file), "sweep spec JSON: {\"base\": run spec, \"axes\": [{\"path\", \"values\"}], "
                                     "\"points\": [{path: value}], \"baseline\"} (docs/FORMATS.md)")
    ("axis", po::value(&axes)->composing(), "PATH=V1,V2,...: a run-spec field (batch, model, fidelity, strategy, ...) "
                                             "or a hardware JSON path (compute.peak_tflops, links.on_die.gbytes_per_s, "
                                             "mesh.width, ...) and its values (repeatable; cartesian product)")
    ("baseline", po::value(&baseline), "strategy the speedups in results.csv are over (default tp)")
    ("serve", po::value(&serve)->composing(), "KEY=VALUE: every point serves requests (nmpsim serve) with this "
                                               "option, e.g. slo_tpot_ms=50 (repeatable; keys in docs/FORMATS.md "
                                               "\"Serve spec\"); an axis serve.KEY=V1,V2,... also makes a serving sweep")
    ("out", po::value(&out_dir)->default_value(out_dir), "output directory: results.csv, points/<id>/, plots")
    ("jobs", po::value(&jobs), "points run at once, each in its own process (default: the host's cores)")
    ("point", po::value(&point), "run only point K (0-based) of DIR/sweep.json or --spec, e.g. from a job array")
    ("emit-jobs", po::value(&emit), "write one command per point to FILE (GNU parallel) and FILE.slurm, run nothing")
    ("collect", "run nothing: merge the points' outputs into results.csv and plots")
    ("cache-dir", po::value(&cache), "where solved placements are kept (as for run)")
    ("no-cache", "solve placements again")
    ("no-plots", "do not draw PNG plots")
    ("quiet", "print nothing but errors");
  // clang-format on
  so.add_strategies(desc, registry, registry.default_strategies());
  so.add_run_shape(desc, 32, /*simulation=*/true);
  so.add_workload(desc);
  const po::variables_map vm = parse_options(args, desc);
  if (vm.count("help")) {
    std::cout << desc
              << "\nOutputs: docs/FORMATS.md \"nmpsim sweep --out DIR\". Exit codes: 0 ok, 1 a point failed (or, for "
                 "--collect, has no result), 2 bad input.\n";
    return kExitOk;
  }
  const bool quiet = vm.count("quiet") > 0;
  check_modes(vm, point, jobs);
  base::OutputFiles::check_dir(out_dir, "--out");
  const std::string saved = out_dir + "/sweep.json";
  SweepSpec s = resolve_spec(vm, so, registry, spec_file, saved, axes, serve, baseline, point);
  if (s.axes.empty() && s.points.empty())
    throw UsageError("give at least one --axis PATH=V1,V2,... or a --spec with axes");
  const std::vector<SweepPoint> points = expand(s);
  if (point >= static_cast<long long>(points.size()))
    throw UsageError("--point " + std::to_string(point) + ": the sweep has " + std::to_string(points.size()) +
                     " points");
  const std::string cache_dir = placement_cache_dir(vm, cache);
  if (point >= 0) return run_only_point(s, points, static_cast<size_t>(point), out_dir, registry, cache_dir);
  if (vm.count("collect")) return collect(s, points, out_dir, !vm.count("no-plots"), quiet, 0);
  resolve_values(s, points, registry, jobs > 0 ? jobs : available_cores());  // before the first point runs
  const std::string extra = emit.empty() ? "" : emitted_options(vm, emit, out_dir, cache);
  {
    base::OutputFiles out;  // sweep.json, and with --emit-jobs its two files: all three or none
    out.make_dir(out_dir, "--out");
    out.write(saved, sweep_to_json(s).dump(2) + "\n", "--out");
    if (!emit.empty()) emit_jobs(out, emit, out_dir, points.size(), extra);
    out.commit();
  }
  remove_stale_points(out_dir, points);
  if (!emit.empty()) {
    if (!quiet)
      std::printf(
          "nmpsim sweep: %zu points written to %s (parallel -j N < %s) and %s.slurm (sbatch); then nmpsim "
          "sweep --collect --out %s\n",
          points.size(), emit.c_str(), emit.c_str(), emit.c_str(), out_dir.c_str());
    return kExitOk;
  }
  const auto [ran, failed] = run_pending(points, out_dir, jobs, quiet, registry, cache_dir);
  return collect(s, points, out_dir, !vm.count("no-plots"), quiet, ran - failed);
}

}  // namespace nmpsim::apps
