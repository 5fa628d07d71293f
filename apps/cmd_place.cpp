// `nmpsim place`: build a placement file with any registered strategy; HD-MoE's tools (gamma fit,
// link-balance convergence).
#include <cstdio>
#include <iostream>

#include "apps/cli_common.h"
#include "apps/commands.h"
#include "apps/experiment.h"
#include "apps/spec_options.h"
#include "base/output_files.h"
#include "firmware/cycle_executor.h"
#include "mapping/json_fields.h"
#include "methods/hdmoe/gamma_fit.h"
#include "methods/register_all.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

namespace {

/// The method flags of `nmpsim place` (HD-MoE's, and HybridEP's --sed), as options of their strategies.
struct HdmoeFlags {
  std::string gamma = "1", mapper = "bo", sed;
  double time_limit = 1.0;
  long long max_groups = 32, evaluations = 150, samples = 4;

  void add_to(po::options_description& desc) {
    // clang-format off
    desc.add_options()
      ("gamma", po::value(&gamma)->default_value(gamma), "hdmoe: Eq. 3 scaling of the communication estimate")
      ("time-limit", po::value(&time_limit)->default_value(time_limit, "1"), "hdmoe: MILP time limit per layer (relaxation and CBC), seconds")
      ("max-groups", po::value(&max_groups)->default_value(max_groups),
       "hdmoe: co-activation groups kept exactly per layer (the rest are folded into per-expert terms)")
      ("mapper", po::value(&mapper)->default_value(mapper), "hdmoe: link balance by bo (Bayesian optimisation) | sa | random")
      ("evaluations", po::value(&evaluations)->default_value(evaluations), "hdmoe: link-balance cost evaluations")
      ("mapping-samples", po::value(&samples)->default_value(samples), "hdmoe: sampled batches in the link-balance cost")
      ("sed", po::value(&sed), "hybridep: expert domain size per level, coarse to fine, e.g. 1,4 (same as --strategy-opt hybridep.sed=...)");
    // clang-format on
  }
  /// As strategy options of `name` (only the flags given; the link-balance ones only for hdmoe).
  void alias(const po::variables_map& vm, const std::string& name, SpecOptions& so) const {
    auto add = [&](const char* flag, const std::string& key, const std::string& value) {
      if (given(vm, flag)) so.add_strategy_option(name + "." + key + "=" + value);
    };
    if (given(vm, "sed")) {
      if (name != "hybridep") throw UsageError("--sed applies to the hybridep strategy only");
      so.add_strategy_option("hybridep.sed=" + sed);
    }
    if (name == "hybridep") {
      for (const char* f : {"gamma", "time-limit", "max-groups", "mapper", "evaluations", "mapping-samples"})
        if (given(vm, f)) throw UsageError(std::string("--") + f + " applies to the hdmoe strategies only");
      return;
    }
    if (name != "hdmoe" && name != "hdmoe-node") {
      for (const char* f : {"gamma", "time-limit", "max-groups", "mapper", "evaluations", "mapping-samples"})
        if (given(vm, f)) throw UsageError(std::string("--") + f + " applies to the hdmoe strategies only");
      return;
    }
    char limit[64];
    std::snprintf(limit, sizeof limit, "%.17g", time_limit);
    add("gamma", "gamma", gamma);
    add("time-limit", "time_limit_s", limit);
    add("max-groups", "max_groups", std::to_string(max_groups));
    if (name == "hdmoe") {
      add("mapper", "mapper", mapper);
      add("evaluations", "evaluations", std::to_string(evaluations));
      add("mapping-samples", "mapping_samples", std::to_string(samples));
    }
  }
};

/// The resolved hdmoe options of a prepared spec's only strategy, as the method's option struct.
methods::hdmoe::HdmoeOptions hdmoe_options(const PreparedExperiment& e) {
  methods::hdmoe::HdmoeOptions o;
  const nlohmann::json& j = e.spec.strategies.at(0).options;
  o.batch = j.value("batch", e.cfg.shape.batch);
  o.gamma = j.value("gamma", 1.0);
  o.time_limit_s = j.value("time_limit_s", 1.0);
  o.max_groups = j.value("max_groups", size_t{32});
  o.sampled_batches = j.value("sampled_batches", 4);
  o.mapper = methods::hdmoe::parse_mapper(j.value("mapper", std::string("bo")), "mapper");
  o.evaluations = j.value("evaluations", 150);
  o.mapping_samples = j.value("mapping_samples", 4);
  o.seed = e.spec.seed;
  o.memory_capacity_bytes = static_cast<double>(e.hardware.memory.capacity_bytes);
  o.attn_tp = e.cfg.attn_tp;
  o.context = e.cfg.shape.context;
  return o;
}

int fit_gamma(const PreparedExperiment& e, const std::string& fidelity) {
  const mapping::Fidelity f = mapping::parse_fidelity(fidelity, "--fit-gamma");
  const auto r = methods::hdmoe::fit_gamma(e.model, e.hardware, e.profile, hdmoe_options(e), f);
  std::printf(
      "gamma = %.4f   R^2 = %.4f   (%d samples: %d placements x 3 batches; %s-level dispatch time vs Eq. 2 estimate)\n",
      r.fit.gamma, r.fit.r2, r.fit.samples, r.placements, fidelity.c_str());
  return kExitOk;
}

}  // namespace

int cmd_place(const std::vector<std::string>& args) {
  mapping::Registry registry;
  methods::register_all(registry);
  std::string out = "placement.json", convergence, fit;
  SpecOptions so;
  HdmoeFlags flags;
  po::options_description desc(
      "nmpsim place: build a placement file for nmpsim run --strategy FILE\n\n"
      "Usage: nmpsim place --strategy NAME [options] --out FILE\n"
      "       nmpsim place --fit-gamma flow|cycle [options]\n\nOptions");
  // clang-format off
  desc.add_options()
    ("help", "show this help")
    ("out", po::value(&out)->default_value(out), "placement JSON to write (format in docs/FORMATS.md)")
    ("convergence", po::value(&convergence), "hdmoe: write best cost vs evaluations of BO, SA and random search to this CSV")
    ("fit-gamma", po::value(&fit), "fit Eq. 3's gamma against flow- or cycle-level dispatch times and print it")
    ("quiet", "print nothing but errors (and --fit-gamma's result)");
  // clang-format on
  so.add_strategies(desc, registry, "hdmoe");
  so.add_run_shape(desc, 64, /*simulation=*/false);
  so.add_workload(desc);
  flags.add_to(desc);
  const po::variables_map vm = parse_options(args, desc);
  if (vm.count("help")) {
    std::cout << desc;
    return kExitOk;
  }
  if (vm.count("list-strategies")) {
    std::cout << "strategies (--strategy, --strategy-opt NAME.KEY=VALUE):\n" << registry.describe_strategies();
    return kExitOk;
  }
  const std::string name = vm["strategy"].as<std::string>();
  if (split_list(name, "--strategy").size() != 1 || name == "all" || !registry.strategy(name))
    throw UsageError("--strategy: expected one registered strategy (nmpsim place --list-strategies), got '" + name +
                     "'");
  if (vm.count("policy")) throw UsageError("--policy: runtime policies act during nmpsim run, not place");
  flags.alias(vm, name, so);
  RunSpec spec;
  spec.batch = 64;
  spec.fidelity = mapping::Fidelity::kFlow;
  so.apply(vm, spec, registry);
  ExperimentOptions opt;
  opt.registry = &registry;
  mapping::PlacementCache memory("");  // within this command only: `place` always solves
  opt.cache = &memory;
  const bool quiet = vm.count("quiet") > 0;
  opt.note = [quiet](const std::string& line) {
    if (!quiet) std::fprintf(stderr, "%s\n", line.c_str());
  };
  if (!fit.empty()) {
    for (const char* k : {"out", "convergence", "strategy", "strategy-opt"})
      if (given(vm, k))
        throw UsageError(std::string("--") + k + ": --fit-gamma builds no placement (it only prints gamma)");
    spec.strategies = {StrategySpec::named("tp")};  // gamma fitting builds its own sample placements
    return fit_gamma(prepare_experiment(spec, opt), fit);
  }
  if (!convergence.empty() && name != "hdmoe") throw UsageError("--convergence: needs --strategy hdmoe");
  base::OutputFiles::check_file(out, "--out");
  if (!convergence.empty()) base::OutputFiles::check_file(convergence, "--convergence");
  base::OutputFiles::check_distinct({{"--convergence", convergence}, {"--out", out}});
  // With an output on standard output, the report goes to standard error.
  std::FILE* rep = base::OutputFiles::is_stdout(out) ? stderr : stdout;
  if (!convergence.empty() && base::OutputFiles::is_stdout(convergence)) rep = stderr;
  const PreparedExperiment e = prepare_experiment(spec, opt);
  const mapping::Placement& p = e.placements.at(0);
  base::OutputFiles files;  // the placement and the convergence CSV, both or neither
  if (!convergence.empty()) {
    const mapping::AnalyticalHardware ah = firmware::to_analytical(e.hardware);
    files.write(convergence, methods::hdmoe::convergence_csv(e.model, ah, e.profile, p, hdmoe_options(e)),
                "--convergence");
  }
  files.write(out, mapping::placement_to_json(p).dump(2) + "\n", "--out");
  files.commit();
  if (quiet) return kExitOk;
  std::fprintf(rep, "nmpsim place: %s placement of %s on %s written to %s\n", p.strategy.c_str(), e.model.name.c_str(),
               e.hardware.name.c_str(), out.c_str());
  for (const std::string& line : registry.strategy(name)->summary(p)) std::fprintf(rep, "  %s\n", line.c_str());
  return kExitOk;
}

}  // namespace nmpsim::apps
