// `nmpsim place`: build a placement file with any registered strategy. The strategies' flags (short
// spellings of their options), extra outputs and the methods' placement tools all come from the registry.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/commands.h"
#include "nmpsim/apps/experiment.h"
#include "nmpsim/apps/method_flags.h"
#include "nmpsim/apps/spec_options.h"
#include "nmpsim/base/output_files.h"
#include "nmpsim/firmware/cycle_executor.h"
#include "nmpsim/hw/analytical.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/methods/register_all.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

namespace {

/// The registered placement tool given on the command line, or nullptr; two are an error.
const mapping::PlacementTool* given_tool(const mapping::Registry& registry, const po::variables_map& vm) {
  const mapping::PlacementTool* tool = nullptr;
  for (const mapping::PlacementTool& t : registry.placement_tools())
    if (given(vm, t.name.c_str())) {
      if (tool) throw UsageError("--" + tool->name + " and --" + t.name + ": give one tool at a time");
      tool = &t;
    }
  return tool;
}

/// Runs placement tool `tool` with its command-line value.
int run_tool(const mapping::PlacementTool* tool, const std::map<std::string, std::string>& tool_values,
             const po::variables_map& vm, RunSpec spec, const ExperimentOptions& opt, bool extra_outputs) {
  for (const char* k : {"out", "strategy", "strategy-opt"})
    if (given(vm, k))
      throw UsageError(std::string("--") + k + ": --" + tool->name +
                       " builds no placement (it only prints its result)");
  if (extra_outputs) throw UsageError("--" + tool->name + " builds no placement: it writes no extra output");
  spec.strategies = {StrategySpec::named("tp")};  // a tool builds what it needs itself
  const PreparedExperiment e = prepare_experiment(spec, opt);
  const mapping::AnalyticalHardware ah = hw::to_analytical(e.hardware);
  const mapping::StrategyContext ctx = strategy_context(e, ah, opt, e.profile);
  std::unique_ptr<hw::System> sys;  // made on the first cycle-level executor the tool asks for
  const mapping::ExecutorFactory cycle = [&]() -> std::unique_ptr<mapping::Executor> {
    if (!sys) sys = std::make_unique<hw::System>("system", e.hardware);
    return std::make_unique<firmware::CycleExecutor>(*sys);
  };
  std::printf("%s", tool->run(ctx, tool_values.at(tool->name), cycle).c_str());
  return kExitOk;
}

/// Builds strategy `name`'s placement and writes it to `out` with the strategy's extra outputs (all or
/// none), then reports it on standard output (standard error when an output goes there).
int build_placement(const mapping::Registry& registry, const std::string& name, const RunSpec& spec,
                    const ExperimentOptions& opt, const std::string& out,
                    const std::vector<std::pair<std::string, std::string>>& extra, bool quiet) {
  base::OutputFiles::check_file(out, "--out");
  std::vector<std::pair<std::string, std::string>> named;
  for (const auto& [flag, file] : extra) {
    base::OutputFiles::check_file(file, "--" + flag);
    named.emplace_back("--" + flag, file);
  }
  named.emplace_back("--out", out);
  base::OutputFiles::check_distinct(named);
  // With an output on standard output, the report goes to standard error.
  std::FILE* rep = stdout;
  for (const auto& [flag, file] : named)
    if (base::OutputFiles::is_stdout(file)) rep = stderr;
  const PreparedExperiment e = prepare_experiment(spec, opt);
  const mapping::Placement& p = e.placements.at(0);
  base::OutputFiles files;  // the placement and its extra outputs, all or none
  if (!extra.empty()) {
    const mapping::AnalyticalHardware ah = hw::to_analytical(e.hardware);
    mapping::StrategyContext ctx = strategy_context(e, ah, opt, e.profile);
    ctx.options = e.spec.strategies.at(0).options;
    for (const auto& o : registry.strategy(name)->extra_outputs())
      for (const auto& [flag, file] : extra)
        if (o.flag == flag) files.write(file, o.text(p, ctx), "--" + flag);
  }
  files.write(out, mapping::placement_to_json(p).dump(2) + "\n", "--out");
  files.commit();
  if (quiet) return kExitOk;
  std::fprintf(rep, "nmpsim place: %s placement of %s on %s written to %s\n", p.strategy.c_str(), e.model.name.c_str(),
               e.hardware.name.c_str(), out.c_str());
  for (const std::string& line : registry.strategy(name)->summary(p)) std::fprintf(rep, "  %s\n", line.c_str());
  return kExitOk;
}

}  // namespace

int cmd_place(const std::vector<std::string>& args) {
  mapping::Registry registry;
  methods::register_all(registry);
  std::string out = "placement.json", cache_dir;
  SpecOptions so;
  po::options_description desc(
      "nmpsim place: build a placement file for nmpsim run --strategy FILE\n\n"
      "Usage: nmpsim place --strategy NAME [options] --out FILE\n"
      "       nmpsim place --TOOL VALUE [options]   (a method's tool, listed below)\n\nOptions");
  // clang-format off
  desc.add_options()
    ("help", "show this help")
    ("out", po::value(&out)->default_value(out), "placement JSON to write (format in docs/FORMATS.md)")
    ("cache-dir", po::value(&cache_dir),
     "reuse solved placements from DIR and keep new ones there, as nmpsim run does (default: none, place always "
     "solves); hdmoe then reuses hdmoe-node's solve")
    ("quiet", "print nothing but errors (and a tool's result)");
  // clang-format on
  std::map<std::string, std::string> tool_values;
  for (const mapping::PlacementTool& t : registry.placement_tools()) {
    const std::string help = t.description + " (" + t.value_help + ")";
    desc.add_options()(t.name.c_str(), po::value(&tool_values[t.name]), help.c_str());
  }
  const MethodFlags flags(registry, desc, /*outputs=*/true, /*policies=*/false);
  so.add_strategies(desc, registry, "");  // no default: name the strategy to build
  so.add_run_shape(desc, 64, /*simulation=*/false);
  so.add_workload(desc);
  const po::variables_map vm = parse_options(args, desc);
  if (vm.count("help")) {
    std::cout << desc;
    return kExitOk;
  }
  if (vm.count("list-strategies")) {
    std::cout << "strategies (--strategy, --strategy-opt NAME.KEY=VALUE):\n" << registry.describe_strategies();
    return kExitOk;
  }
  const mapping::PlacementTool* tool = given_tool(registry, vm);
  const bool tool_given = tool != nullptr;
  const std::string name = vm.count("strategy") ? vm["strategy"].as<std::string>() : "";
  if (name.empty() && !tool_given)
    throw UsageError("--strategy: give the strategy to build (nmpsim place --list-strategies)");
  if (!tool_given && (split_list(name, "--strategy").size() != 1 || name == "all" || !registry.strategy(name)))
    throw UsageError("--strategy: expected one registered strategy (nmpsim place --list-strategies), got '" + name +
                     "'");
  if (vm.count("policy")) throw UsageError("--policy: runtime policies act during nmpsim run, not place");
  if (!tool_given) flags.strategy_options(vm, {name}, so);
  if (tool_given && !flags.first_given(vm).empty())
    throw UsageError("--" + flags.first_given(vm) + ": sets a strategy option, and a tool builds no placement");
  RunSpec spec;
  spec.batch = 64;
  spec.fidelity = mapping::Fidelity::kFlow;
  so.apply(vm, spec, registry);
  ExperimentOptions opt;
  opt.registry = &registry;
  const bool quiet = vm.count("quiet") > 0;
  if (vm.count("cache-dir") && cache_dir.empty()) throw UsageError("--cache-dir: empty value");
  // Without --cache-dir, within this command only: `place` always solves.
  mapping::PlacementCache memory(cache_dir, [quiet](const std::string& w) {
    if (!quiet) std::fprintf(stderr, "%s\n", w.c_str());
  });
  opt.cache = &memory;
  opt.note = [quiet](const std::string& line) {
    if (!quiet) std::fprintf(stderr, "%s\n", line.c_str());
  };
  const auto extra = flags.given_outputs(vm);  // a strategy's extra outputs, written with the placement
  if (tool) return run_tool(tool, tool_values, vm, spec, opt, !extra.empty());
  return build_placement(registry, name, spec, opt, out, extra, quiet);
}

}  // namespace nmpsim::apps
