#include "apps/experiment.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "apps/cli_common.h"
#include "apps/workers.h"
#include "firmware/cycle_executor.h"
#include "hw/system.h"
#include "mapping/flow_executor.h"
#include "mapping/json_fields.h"
#include "mapping/layer_runner.h"
#include "mapping/memory_model.h"

namespace nmpsim::apps {

using mapping::describe_json;
using mapping::InputError;

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void load_hardware_and_model(PreparedExperiment& e) {
  RunSpec& s = e.spec;
  if (s.hardware.is_string()) {
    const std::string name = s.hardware.get<std::string>();
    e.hardware = hw::load_hardware(name);
    const auto presets = hw::preset_names();
    // A file is written into the spec in full, so that the spec alone reproduces the run.
    if (std::find(presets.begin(), presets.end(), name) == presets.end()) s.hardware = hw::to_json(e.hardware);
  } else {
    e.hardware = hw::hardware_from_json(s.hardware, "spec: hardware");
  }
  if (s.model.is_string()) {
    const std::string name = s.model.get<std::string>();
    e.model = mapping::load_model(name);
    const auto presets = mapping::model_preset_names();
    const bool preset = std::find(presets.begin(), presets.end(), name) != presets.end();
    if (s.weight_bytes != 0) e.model.weight_bytes = s.weight_bytes;
    if (s.activation_bytes != 0) e.model.activation_bytes = s.activation_bytes;
    e.model.validate(preset ? "model " + name : name);
    // A file is written into the spec in full, so that the spec alone reproduces the run.
    if (!preset) {
      s.model = mapping::model_to_json(e.model);
      s.weight_bytes = s.activation_bytes = 0;
    }
  } else {
    e.model = mapping::model_from_json(s.model, "spec: model");
  }
}

void load_trace(PreparedExperiment& e) {
  TraceSpec& t = e.spec.trace;
  const mapping::ModelSpec& m = e.model;
  if (t.file.empty()) {
    t.synthetic.layers = m.moe_layers;
    t.synthetic.experts = m.experts;
    t.synthetic.top_k = m.top_k;
    e.trace = mapping::synthetic_trace(t.synthetic);
    return;
  }
  e.trace = mapping::load_trace(t.file, m.experts, m.top_k);
  if (e.trace.layers() < m.moe_layers)
    throw InputError(t.file + ": has " + std::to_string(e.trace.layers()) + " layers, model " + m.name + " has " +
                     std::to_string(m.moe_layers) + " MoE layers");
  const std::string fp = mapping::trace_fingerprint(e.trace);
  if (!t.fingerprint.empty() && t.fingerprint != fp)
    throw InputError(t.file + ": the trace changed since the spec was written (fingerprint " + fp + ", spec has " +
                     t.fingerprint + ")");
  t.fingerprint = fp;
}

mapping::StrategyContext strategy_context(const PreparedExperiment& e, const mapping::AnalyticalHardware& ah,
                                          const ExperimentOptions& opt) {
  mapping::StrategyContext ctx(e.model, ah, e.profile);
  ctx.batch = e.cfg.shape.batch;
  ctx.context = e.cfg.shape.context;
  ctx.attn_tp = e.cfg.attn_tp;
  ctx.memory_capacity_bytes = static_cast<double>(e.hardware.memory.capacity_bytes);
  ctx.seed = e.spec.seed;
  ctx.cache = opt.cache;
  ctx.note = opt.note;
  return ctx;
}

mapping::Placement placement_from_file(StrategySpec& st, const mapping::ModelSpec& m, int nodes) {
  const std::string text = mapping::read_text_file(st.placement_file);
  const std::string fp = mapping::fnv1a_hex(text);
  if (!st.fingerprint.empty() && st.fingerprint != fp)
    throw InputError(st.placement_file + ": the placement changed since the spec was written");
  st.fingerprint = fp;
  mapping::Placement p = mapping::load_placement(st.placement_file);
  if (p.nodes != nodes)
    throw InputError(st.placement_file + ": placement is for " + std::to_string(p.nodes) + " nodes, the hardware has " +
                     std::to_string(nodes));
  p.check_against(m, st.placement_file);
  return p;
}

mapping::Placement build_strategy(StrategySpec& st, const mapping::StrategyContext& base,
                                  const ExperimentOptions& opt) {
  const mapping::PlacementStrategy* s = opt.registry->strategy(st.name);
  if (!s)
    throw InputError("unknown strategy '" + st.name + "' (registered: " + join_names(opt.registry->strategy_names()) +
                     ")");
  mapping::StrategyContext ctx = base;
  ctx.where = "strategy " + st.name + " options";
  st.options = s->resolve_options(st.options, ctx.where, ctx);
  ctx.options = st.options;
  if (!s->expensive()) return s->build(ctx);
  const nlohmann::json key = ctx.cache_key(st.name, st.options);
  if (opt.cache) {
    if (auto hit = opt.cache->find(key)) {
      if (!opt.cache->dir().empty()) ctx.say(st.name + ": placement from the cache (" + opt.cache->path_for(key) + ")");
      return *hit;
    }
  }
  return ctx.cached(key, [&] { return s->build(ctx); });
}

void build_placements(PreparedExperiment& e, const ExperimentOptions& opt) {
  RunSpec& s = e.spec;
  if (s.all_strategies) {
    s.strategies.clear();
    for (const std::string& n : opt.registry->strategy_names()) s.strategies.push_back(StrategySpec::named(n));
    s.all_strategies = false;
  }
  const mapping::AnalyticalHardware ah = firmware::to_analytical(e.hardware);
  const mapping::StrategyContext base = strategy_context(e, ah, opt);
  const int nodes = e.hardware.topology.nodes();
  for (StrategySpec& st : s.strategies) {
    mapping::Placement p = st.name.empty() ? placement_from_file(st, e.model, nodes) : build_strategy(st, base, opt);
    for (const mapping::Placement& q : e.placements)
      if (q.strategy == p.strategy)
        throw InputError("strategy '" + p.strategy + "' is listed twice (results are named by strategy)");
    const int group = e.cfg.attn_tp > 0 ? e.cfg.attn_tp : nodes;
    mapping::check_memory(p, e.model, e.hardware.topology, static_cast<double>(e.hardware.memory.capacity_bytes), group,
                          e.cfg.shape.batch, e.cfg.shape.context);
    e.placements.push_back(std::move(p));
  }
}

void resolve_policies(PreparedExperiment& e, const ExperimentOptions& opt) {
  for (PolicySpec& p : e.spec.policies) {
    const mapping::PolicyFactory* f = opt.registry->policy(p.name);
    if (!f)
      throw InputError("unknown policy '" + p.name + "' (registered: " + join_names(opt.registry->policy_names()) +
                       ")");
    if (f->cycle_only && e.spec.fidelity != mapping::Fidelity::kCycle)
      throw InputError("policy " + p.name +
                       " needs cycle fidelity (its effect depends on contention the flow model does not charge)");
    p.options = f->resolve(p.options, "policy " + p.name + " options");
  }
  PolicySpec& a = e.spec.accounting;
  if (a.name.empty()) return;
  const mapping::AccountingFactory* f = opt.registry->accounting(a.name);
  if (!f)
    throw InputError("unknown accounting '" + a.name +
                     "' (registered: " + join_names(opt.registry->accounting_names()) + ")");
  if (!e.spec.policies.empty()) throw InputError("accounting " + a.name + ": runtime policies need a simulation");
  if (!opt.vcd.empty()) throw InputError("--vcd needs a simulation, not --accounting");
  a.options = f->resolve(a.options, "accounting " + a.name + " options");
}

/// Refuses, before the work, a run whose memory model (mapping/memory_model.h) exceeds the budget.
/// `trace_ids`: the loaded trace's; 0 before loading (a synthetic trace's size is known then).
void check_memory_before(const PreparedExperiment& e, const ExperimentOptions& opt, double trace_ids) {
  mapping::RunSize s;
  s.nodes = e.hardware.topology.nodes();
  const int attn = e.spec.attn_tp > 0 ? e.spec.attn_tp : e.hardware.attn_tp_default;
  s.attn_group = attn > 0 ? attn : s.nodes;
  s.batch = e.spec.batch;
  s.moe_layers = e.model.moe_layers;
  s.experts = e.model.experts;
  s.strategies = e.spec.all_strategies ? static_cast<long long>(opt.registry->strategy_names().size())
                                       : static_cast<long long>(std::max<size_t>(1, e.spec.strategies.size()));
  const mapping::SyntheticTraceConfig& syn = e.spec.trace.synthetic;
  if (e.spec.trace.file.empty())  // its own limit first: the more specific message
    mapping::check_trace_size(e.model.moe_layers, syn.tokens, e.model.top_k, "synthetic trace (--synthetic-tokens)");
  s.trace_ids = trace_ids > 0               ? trace_ids
                : e.spec.trace.file.empty() ? double(e.model.moe_layers) * double(syn.tokens) * e.model.top_k
                                            : 0;
  s.cycle = e.spec.fidelity == mapping::Fidelity::kCycle && e.spec.accounting.name.empty();
  s.workers = opt.jobs > 0 ? opt.jobs : std::min<long long>(available_cores(), s.strategies);
  mapping::check_run_memory(s, "hardware " + e.hardware.name + ", model " + e.model.name);
}

/// An accounting's options that name a strategy name a registered one, one of the run's, or "none".
void check_accounting_strategies(const PreparedExperiment& e, const ExperimentOptions& opt) {
  const PolicySpec& a = e.spec.accounting;
  if (a.name.empty()) return;
  for (const std::string& key : opt.registry->accounting(a.name)->strategy_options) {
    if (!a.options.contains(key)) continue;
    const nlohmann::json& v = a.options[key];
    const bool named =
        v.is_string() && (v.get<std::string>() == "none" || opt.registry->strategy(v.get<std::string>()) ||
                          std::any_of(e.placements.begin(), e.placements.end(),
                                      [&](const auto& p) { return p.strategy == v.get<std::string>(); }));
    if (!named)
      throw InputError("accounting " + a.name + " options: " + key + ": " + describe_json(v) +
                       " names no strategy (registered or of this run) and is not \"none\"");
  }
}

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

}  // namespace

PreparedExperiment prepare_experiment(const RunSpec& spec, const ExperimentOptions& opt) {
  if (!opt.registry) throw std::logic_error("prepare_experiment: no registry");
  PreparedExperiment e;
  e.spec = spec;
  load_hardware_and_model(e);
  if (e.hardware.topology.nodes() > kMaxRunNodes)
    throw InputError("hardware " + e.hardware.name + ": " + std::to_string(e.hardware.topology.nodes()) +
                     " nodes; MoE runs take at most " + std::to_string(kMaxRunNodes) +
                     " (a layer's traffic is planned as node x node matrices; nmpsim noc takes up to 256x256)");
  check_memory_before(e, opt, 0);
  load_trace(e);
  check_memory_before(e, opt, double(e.trace.tokens()) * e.trace.layers() * e.trace.top_k());
  e.profile = e.trace;
  if (spec.profile_tokens > 0) {
    if (spec.profile_tokens > e.trace.tokens())
      throw InputError("profile_tokens: " + std::to_string(spec.profile_tokens) + " is more than the trace's " +
                       std::to_string(e.trace.tokens()) + " tokens");
    e.profile = e.trace.slice(0, static_cast<size_t>(spec.profile_tokens));
  }
  e.cfg.shape = {spec.batch, spec.context};
  e.cfg.steps = spec.steps;
  // attn_tp 0: the hardware's default (all nodes on the NMP presets, 4 dies on the wafers).
  e.cfg.attn_tp = spec.attn_tp > 0 ? spec.attn_tp : e.hardware.attn_tp_default;
  e.cfg.first_token = static_cast<size_t>(spec.first_token);
  mapping::make_groups(e.hardware.topology, e.cfg.attn_tp);  // validates the group size
  const int group = e.cfg.attn_tp > 0 ? e.cfg.attn_tp : e.hardware.topology.nodes();
  if (group > 64 && opt.note)
    opt.note("warning: attention tensor parallelism over " + std::to_string(group) +
             " nodes: every token's attention all-reduce spans them all (set --attn-tp, e.g. 4 or 8)");
  if (!opt.vcd.empty() && spec.fidelity != mapping::Fidelity::kCycle) throw InputError("--vcd needs cycle fidelity");
  resolve_policies(e, opt);
  build_placements(e, opt);
  check_accounting_strategies(e, opt);
  return e;
}

namespace {

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

/// A strategy's name is a file name already (mapping::is_valid_name): distinct names, distinct files.
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
  mapping::StrategyResult r = mapping::run_placement(ex, in, p, policies, progress);
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
  for (int l = 0; l < mapping::kNumLinkLevels; ++l) en.noc_level[l] = after.noc_level_pj[l] - before.noc_level_pj[l];
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
  if (!err.empty()) throw std::runtime_error("NoC conservation violated: " + err);
  // Pin-level routers report what only they can see (e.g. a flit into a full buffer).
  if (noc::PinMesh* pins = sys.mesh().pin_mesh(); pins && !pins->router_error().empty())
    throw std::runtime_error("NoC router error: " + pins->router_error());
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
         a.tp_rings == b.tp_rings && a.token_rings == b.token_rings && a.token_domain == b.token_domain &&
         a.runtime == b.runtime;
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
      mapping::FlowExecutor ex(in.hw);
      mapping::PolicyList policies = make_policies(e, opt, p);
      auto progress = [&](int s, int l) {
        if (opt.on_layer) opt.on_layer(p.strategy, s, l);
      };
      mapping::StrategyResult r = mapping::run_placement(ex, in, p, policies, progress);
      mapping::record_sessions(r, ex);
      out.push_back(StrategyReport{std::move(r), std::nullopt});
    }
    return out;
  }
  return run_cycle_in_workers(e, opt, in, which);
}

std::vector<StrategyReport> run_simulation(const PreparedExperiment& e, const ExperimentOptions& opt) {
  const mapping::AnalyticalHardware ah = firmware::to_analytical(e.hardware);
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

EnergyPj flow_energy(const hw::HardwareSpec& hw, const mapping::StrategyResult& r) {
  EnergyPj e;
  const dram::DramSpec& m = hw.memory;
  for (double b : r.node_dram_bytes) {
    e.dram_array += b * 8 * m.array_pj_per_bit;
    e.dram_interface += b * 8 * m.interface_pj_per_bit;
    e.dram_activate += b / m.row_bytes * m.activate_pj;
  }
  e.dram = e.dram_array + e.dram_interface + e.dram_activate;
  const mapping::Topology& t = hw.topology;
  for (int v = 0; v < t.nodes(); ++v)
    for (int d = 0; d < 4; ++d) {
      const double bytes = r.link_bytes[static_cast<size_t>(v) * 4 + static_cast<size_t>(d)];
      const int to = mapping::neighbour(t, v, d);
      if (bytes <= 0 || to < 0) continue;
      const double pj = bytes * 8 * t.link(v, to).pj_per_bit;
      e.noc += pj;
      e.noc_level[static_cast<int>(t.link_level(v, to))] += pj;
    }
  for (double f : r.node_flops) e.compute += f * hw.compute.pj_per_flop;
  return e;
}

std::vector<std::string> setup_warnings(const PreparedExperiment& e, const std::vector<StrategyReport>& reports) {
  std::vector<std::string> out;
  const double startup_s = e.hardware.compute.startup_ns * 1e-9;
  using F = mapping::PhaseFamily;
  for (const StrategyReport& r : reports)
    for (F f : {F::kAttention, F::kMoeCompute}) {
      const double per_layer = r.result.mean_family_s(f) / e.model.layers();
      if (per_layer > 0 && startup_s > 0.5 * per_layer) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "warning: %s: the compute start-up (%.3g us) is more than half of its %s time per layer (%.3g "
                      "us): fixed costs dominate (compute.startup_ns, or a larger --batch)",
                      r.result.strategy.c_str(), startup_s * 1e6, mapping::family_name(f), per_layer * 1e6);
        out.push_back(line);
        break;
      }
    }
  return out;
}

double static_energy_pj(const hw::HardwareSpec& hw, const mapping::StrategyResult& r) {
  double seconds = 0;
  for (size_t s = 0; s < r.steps.size(); ++s) seconds += r.tbt_s(static_cast<int>(s));
  return (hw.compute.static_w + hw.memory.background_w) * hw.topology.nodes() * seconds * 1e12;
}

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

nlohmann::json summary_json(const PreparedExperiment& e, const std::vector<StrategyReport>& reports) {
  double tp_tbt = 0;
  for (const auto& r : reports)
    if (r.result.strategy == "tp") tp_tbt = r.result.mean_tbt_s();
  const double tokens = double(e.cfg.shape.batch) * e.cfg.steps;
  nlohmann::json strategies = nlohmann::json::object();
  for (const auto& r : reports) strategies[r.result.strategy] = strategy_json(r, tp_tbt, tokens);
  const int group = e.cfg.attn_tp > 0 ? e.cfg.attn_tp : e.hardware.topology.nodes();
  return {{"spec", run_spec_to_json(e.spec)},
          {"config",
           {{"hardware", e.hardware.name},
            {"model", e.model.name},
            {"trace", e.trace.source()},
            {"batch", e.cfg.shape.batch},
            {"steps", e.cfg.steps},
            {"context", e.cfg.shape.context},
            {"attn_tp", group},
            {"fidelity", mapping::fidelity_name(e.spec.fidelity)},
            {"accounting", e.spec.accounting.name.empty() ? "simulation" : e.spec.accounting.name},
            {"weight_bytes", e.model.weight_bytes},
            {"activation_bytes", e.model.activation_bytes}}},
          {"strategies", strategies}};
}

}  // namespace nmpsim::apps
