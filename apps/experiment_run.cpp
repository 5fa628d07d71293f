// Simulating a prepared experiment (apps/experiment.h): the flow back end in this process, the cycle
// back end in worker processes (one System each), placements that make the same simulation simulated
// once, message logs, and the accounting path.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/experiment.h"
#include "nmpsim/apps/workers.h"
#include "nmpsim/base/model_failure.h"
#include "nmpsim/firmware/cycle_executor.h"
#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/hw/system.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/layer_runner.h"
#include "nmpsim/mapping/memory_model.h"

namespace nmpsim::apps {

using mapping::InputError;

namespace {

/// The run's policies, then the ones placement `pl` needs itself (its "runtime" list).
mapping::PolicyList make_policies(const PreparedExperiment& e, const ExperimentOptions& opt,
                                  const mapping::Placement& pl) {
  mapping::PolicyList list;
  for (const PolicySpec& p : e.spec.policies)
    list.emplace_back(p.name, opt.registry->policy(p.name)->create(p.options, "policy " + p.name + " options"));
  for (const auto& r : pl.runtime) {
    const std::string name = r.at("name").get<std::string>();
    const mapping::PolicyFactory* f = opt.registry->policy(name);
    if (!f) throw InputError("placement " + pl.strategy + ": runtime: unknown policy '" + name + "'");
    list.emplace_back(name, f->create(r.at("options"), "placement " + pl.strategy + ": runtime policy " + name));
  }
  return list;
}

/// `in` with the dispatch planner placement `p` names (kept alive by `planner`; none: direct dispatch).
mapping::RunInputs with_planner(const mapping::RunInputs& in, const ExperimentOptions& opt, const mapping::Placement& p,
                                std::unique_ptr<mapping::DispatchPlanner>& planner) {
  planner = opt.registry->make_planner(p, in.hw.topology, mapping::groups_for(p, in.hw.topology, in.cfg.attn_tp));
  mapping::RunInputs out = in;
  out.planner = planner.get();
  return out;
}

/// Every message the NoC delivers while it lives, written to `path` by write() (`path` is in a scratch
/// directory of the run's outputs, which are put in place all or nothing when the run ends).
class MessageLog {
 public:
  MessageLog(hw::System& sys, std::string path) : sys_(sys), path_(std::move(path)) {
    if (path_.empty()) return;
    sys_.set_message_log([this](const noc::Delivery& d) { rows_.push_back(d); });
  }
  MessageLog(const MessageLog&) = delete;
  MessageLog& operator=(const MessageLog&) = delete;
  ~MessageLog() { sys_.set_message_log(nullptr); }
  void write() const {
    if (path_.empty()) return;
    std::ofstream f(path_);
    f << "message_id,tag,src,dst,bytes,create_cycle,deliver_cycle\n";
    for (const noc::Delivery& d : rows_)
      f << d.message_id << ',' << d.tag << ',' << d.src << ',' << d.dst << ',' << d.bytes << ',' << d.create_cycle
        << ',' << d.deliver_cycle << '\n';
    f.close();
    if (!f) throw std::runtime_error("cannot write the message log '" + path_ + "'");
  }

 private:
  hw::System& sys_;
  std::string path_;
  std::vector<noc::Delivery> rows_;
};

/// A strategy's name is a file name already (base::is_valid_name): distinct names, distinct files.
std::string message_log_path(const ExperimentOptions& opt, const std::string& strategy) {
  if (opt.message_log_dir.empty()) return "";
  return (std::filesystem::path(opt.message_log_dir) / ("messages-" + strategy + ".csv")).string();
}

/// A strategy that shares another's simulation gets a copy of its message log.
void copy_message_log(const ExperimentOptions& opt, const std::string& from, const std::string& to) {
  const std::string src = message_log_path(opt, from), dst = message_log_path(opt, to);
  if (src.empty() || src == dst || !std::filesystem::exists(src)) return;
  std::filesystem::copy_file(src, dst, std::filesystem::copy_options::overwrite_existing);
}

StrategyReport run_cycle_one(hw::System& sys, const PreparedExperiment& e, const ExperimentOptions& opt,
                             const mapping::RunInputs& in, const mapping::Placement& p) {
  MessageLog log(sys, message_log_path(opt, p.strategy));
  const hw::EnergyReport before = sys.energy();
  firmware::CycleExecutor ex(sys);
  mapping::PolicyList policies = make_policies(e, opt, p);
  auto progress = [&](int s, int l) {
    if (opt.on_layer) opt.on_layer(p.strategy, s, l);
  };
  const noc::Network::ReplayCounters replay0 = sys.mesh().network().replay_counters();
  std::unique_ptr<mapping::DispatchPlanner> planner;
  mapping::StrategyResult r = mapping::run_placement(ex, with_planner(in, opt, p, planner), p, policies, progress);
  const noc::Network::ReplayCounters& replay1 = sys.mesh().network().replay_counters();
  r.simulator["noc_sessions"] = {{"sessions", replay1.sessions - replay0.sessions},
                                 {"replayed", replay1.replayed - replay0.replayed},
                                 {"resimulated", replay1.diverged - replay0.diverged},
                                 {"recorded", replay1.recorded - replay0.recorded}};
  const hw::EnergyReport after = sys.energy();
  EnergyPj en;
  en.dram = after.dram_pj - before.dram_pj;
  en.dram_array = after.dram_array_pj - before.dram_array_pj;
  en.dram_interface = after.dram_interface_pj - before.dram_interface_pj;
  en.dram_activate = after.dram_activate_pj - before.dram_activate_pj;
  en.noc = after.noc_pj - before.noc_pj;
  for (int l = 0; l < mapping::kMaxLevels; ++l) en.noc_level[l] = after.noc_level_pj[l] - before.noc_level_pj[l];
  en.level_links = link_names(sys.spec().topology);
  en.compute = after.compute_pj - before.compute_pj;
  log.write();
  return StrategyReport{std::move(r), en};
}

hw::SystemOptions system_options(const ExperimentOptions& opt) {
  hw::SystemOptions o;
  o.pin_routers = opt.pin_routers;
  return o;
}

void check_conservation(hw::System& sys) {
  const std::string err = sys.mesh().network().check_conservation();
  if (!err.empty()) throw base::ModelFailure("NoC check failed: " + err);
  // Pin-level routers report what only they can see (e.g. a flit into a full buffer).
  if (noc::PinMesh* pins = sys.mesh().pin_mesh(); pins && !pins->router_error().empty())
    throw base::ModelFailure("NoC router error: " + pins->router_error());
}

/// The strategies `which` (indices into e.placements), each in its own worker process with its own
/// System (apps/workers.h).
std::vector<StrategyReport> run_cycle_in_workers(const PreparedExperiment& e, const ExperimentOptions& opt,
                                                 const mapping::RunInputs& in, const std::vector<size_t>& which) {
  const int count = static_cast<int>(which.size());
  std::vector<std::string> names;
  for (size_t i : which) names.push_back(e.placements[i].strategy);
  const int jobs = opt.jobs > 0 ? opt.jobs : std::min(available_cores(), count);
  const std::vector<std::string> answers = run_in_workers(count, jobs, names, [&](int k) {
    hw::System sys("system", e.hardware, system_options(opt));
    const StrategyReport rep = run_cycle_one(sys, e, opt, in, e.placements[which[static_cast<size_t>(k)]]);
    check_conservation(sys);
    return nlohmann::json{{"result", mapping::result_to_json(rep.result)}, {"energy", energy_to_json(*rep.energy)}}
        .dump();
  });
  std::vector<StrategyReport> out;
  for (const std::string& a : answers) {
    const nlohmann::json j = nlohmann::json::parse(a);
    out.push_back(StrategyReport{mapping::result_from_json(j.at("result")), energy_from_json(j.at("energy"))});
  }
  return out;
}

/// True when two placements make the same simulation: everything a run reads from a placement but
/// its name and its solver's statistics.
bool same_simulation(const mapping::Placement& a, const mapping::Placement& b) {
  return a.experts == b.experts && a.nodes == b.nodes && a.share == b.share && a.node_map == b.node_map &&
         a.tp_rings == b.tp_rings && a.dispatch == b.dispatch && a.runtime == b.runtime;
}

/// For each placement, the first one (itself included) that makes the same simulation.
std::vector<size_t> first_same(const std::vector<mapping::Placement>& ps) {
  std::vector<size_t> first(ps.size());
  for (size_t i = 0; i < ps.size(); ++i) {
    first[i] = i;
    for (size_t j = 0; j < i; ++j)
      if (first[j] == j && same_simulation(ps[i], ps[j])) {
        first[i] = j;
        break;
      }
  }
  return first;
}

}  // namespace

namespace {

/// Simulates the placements `which` at the spec's fidelity, in that order.
std::vector<StrategyReport> simulate(const PreparedExperiment& e, const ExperimentOptions& opt,
                                     const mapping::RunInputs& in, const std::vector<size_t>& which) {
  std::vector<StrategyReport> out;
  if (e.spec.fidelity == mapping::Fidelity::kFlow) {
    for (size_t i : which) {
      const mapping::Placement& p = e.placements[i];
      flow::FlowExecutor ex(in.hw);
      mapping::PolicyList policies = make_policies(e, opt, p);
      auto progress = [&](int s, int l) {
        if (opt.on_layer) opt.on_layer(p.strategy, s, l);
      };
      std::unique_ptr<mapping::DispatchPlanner> planner;
      mapping::StrategyResult r = mapping::run_placement(ex, with_planner(in, opt, p, planner), p, policies, progress);
      flow::record_sessions(r, ex);
      out.push_back(StrategyReport{std::move(r), std::nullopt});
    }
    return out;
  }
  return run_cycle_in_workers(e, opt, in, which);
}

std::vector<StrategyReport> run_simulation(const PreparedExperiment& e, const ExperimentOptions& opt) {
  const mapping::AnalyticalHardware ah = hw::to_analytical(e.hardware);
  const mapping::RunInputs in{e.model, e.trace, ah, e.cfg};
  std::vector<StrategyReport> out;
  if (!e.spec.accounting.name.empty()) {
    const mapping::AccountingFactory* a = opt.registry->accounting(e.spec.accounting.name);
    const mapping::AccountingInputs ai{e.model, e.trace, ah, e.cfg, e.spec.seed};
    for (const mapping::Placement& p : e.placements)
      out.push_back(StrategyReport{a->account(p, ai, e.spec.accounting.options), std::nullopt});
    return out;
  }
  if (e.spec.fidelity == mapping::Fidelity::kCycle && !opt.vcd.empty()) {
    // One VCD for the whole run: every strategy in this process, one after another on one System.
    hw::System sys("system", e.hardware, system_options(opt));
    sys.enable_vcd(opt.vcd);
    for (const mapping::Placement& p : e.placements) out.push_back(run_cycle_one(sys, e, opt, in, p));
    check_conservation(sys);
    sys.finish_vcd(true);
    return out;
  }
  // Every simulation starts from a fresh network, so placements that make the same simulation (e.g.
  // two HD-MoE variants that chose one placement) are simulated once and share the results.
  const std::vector<size_t> first = first_same(e.placements);
  std::vector<size_t> distinct;
  for (size_t i = 0; i < first.size(); ++i)
    if (first[i] == i)
      distinct.push_back(i);
    else if (opt.note)
      opt.note(e.placements[i].strategy + ": the same placement as " + e.placements[first[i]].strategy +
               ", simulated once");
  const std::vector<StrategyReport> ran = simulate(e, opt, in, distinct);
  for (size_t i = 0; i < first.size(); ++i) {
    const size_t k = static_cast<size_t>(std::find(distinct.begin(), distinct.end(), first[i]) - distinct.begin());
    StrategyReport r = ran[k];
    if (first[i] != i) {
      r.result.strategy = e.placements[i].strategy;
      r.result.wall_s = 0;  // not simulated again
      copy_message_log(opt, e.placements[first[i]].strategy, r.result.strategy);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

std::vector<StrategyReport> run_prepared(const PreparedExperiment& e, const ExperimentOptions& opt) {
  std::vector<StrategyReport> out = run_simulation(e, opt);
  for (StrategyReport& r : out) {
    if (!e.spec.accounting.name.empty()) continue;  // an accounting charges time only
    if (!r.energy) r.energy = flow_energy(e.hardware, r.result);
    r.energy->static_pj = static_energy_pj(e.hardware, r.result);
  }
  return out;
}

Experiment run_experiment(const RunSpec& spec, const ExperimentOptions& opt) {
  Experiment x;
  x.prepared = prepare_experiment(spec, opt);
  x.reports = run_prepared(x.prepared, opt);
  return x;
}

}  // namespace nmpsim::apps
