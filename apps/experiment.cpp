#include "nmpsim/apps/experiment.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/run_shape.h"
#include "nmpsim/apps/workers.h"
#include "nmpsim/base/memory_budget.h"
#include "nmpsim/firmware/cycle_executor.h"
#include "nmpsim/flow/flow_executor.h"
#include "nmpsim/hw/system.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/layer_runner.h"
#include "nmpsim/mapping/memory_model.h"

namespace nmpsim::apps {

using base::describe_json;
using mapping::InputError;

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

void load_hardware(PreparedExperiment& e) {
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
  if (e.hardware.topology.nodes() > kMaxRunNodes)
    throw InputError("hardware " + e.hardware.name + ": " + std::to_string(e.hardware.topology.nodes()) +
                     " nodes; MoE runs take at most " + std::to_string(kMaxRunNodes) +
                     " (a layer's traffic is planned as node x node matrices; nmpsim noc takes up to 256x256)");
}

void load_model(PreparedExperiment& e) {
  RunSpec& s = e.spec;
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

mapping::Placement placement_from_file(StrategySpec& st, const mapping::ModelSpec& m, int nodes) {
  const std::string text = base::read_text_file(st.placement_file);
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
  const mapping::AnalyticalHardware ah = hw::to_analytical(e.hardware);
  const mapping::StrategyContext base = strategy_context(e, ah, opt, e.profile);
  const int nodes = e.hardware.topology.nodes();
  for (StrategySpec& st : s.strategies) {
    mapping::Placement p = st.name.empty() ? placement_from_file(st, e.model, nodes) : build_strategy(st, base, opt);
    for (const mapping::Placement& q : e.placements)
      if (q.strategy == p.strategy)
        throw InputError("strategy '" + p.strategy + "' is listed twice (results are named by strategy)");
    if (e.cfg.shape.kind == mapping::StepKind::kTrain)
      for (const auto& r : p.runtime) {
        const std::string name = r.value("name", std::string());
        const mapping::PolicyFactory* f = opt.registry->policy(name);
        if (!f) continue;
        const auto policy = f->create(r.at("options"), "placement " + p.strategy + ": runtime policy " + name);
        if (!policy->trains())
          throw InputError("phase train (--phase): placement '" + p.strategy + "' runs runtime policy " + name +
                           ", which cannot run in a training step: " + policy->why_not_trains());
      }
    if (e.cfg.micro_batches > 1 && !p.runtime.empty())
      throw InputError("micro_batches (--micro-batches): " + std::to_string(e.cfg.micro_batches) + ": placement '" +
                       p.strategy + "' runs its own runtime policy, which acts on one chain of phases per layer");
    const int group = e.cfg.attn_tp > 0 ? e.cfg.attn_tp : nodes;
    mapping::check_memory(p, e.model, e.hardware.topology, static_cast<double>(e.hardware.memory.capacity_bytes), group,
                          e.cfg.shape);
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
    if (e.cfg.shape.kind == mapping::StepKind::kTrain) {
      const auto policy = f->create(p.options, "policy " + p.name);
      if (!policy->trains())
        throw InputError("policies (--policy): " + p.name +
                         " cannot run in a training step (--phase train): " + policy->why_not_trains());
    }
  }
  PolicySpec& a = e.spec.accounting;
  if (a.name.empty()) return;
  const mapping::AccountingFactory* f = opt.registry->accounting(a.name);
  if (e.cfg.micro_batches > 1)
    throw InputError("accounting " + a.name + ": charges whole steps, not micro-batches (--micro-batches " +
                     std::to_string(e.cfg.micro_batches) + ")");
  if (e.cfg.moe_chunks > 1)
    throw InputError("accounting " + a.name + ": charges whole MoE blocks, not chunks (--moe-chunks " +
                     std::to_string(e.cfg.moe_chunks) + ")");
  if (f && f->decode_only && e.cfg.shape.kind != mapping::StepKind::kDecode)
    throw InputError("accounting " + a.name + ": charges decode steps only, not phase " +
                     mapping::step_kind_name(e.cfg.shape.kind) + " (--phase)");
  if (!f)
    throw InputError("unknown accounting '" + a.name +
                     "' (registered: " + join_names(opt.registry->accounting_names()) + ")");
  if (!e.spec.policies.empty()) throw InputError("accounting " + a.name + ": runtime policies need a simulation");
  if (!opt.vcd.empty()) throw InputError("--vcd needs a simulation, not --accounting");
  a.options = f->resolve(a.options, "accounting " + a.name + " options");
}

/// No placement can hold the model when its MoE weights exceed the memory of all nodes together:
/// refused before the trace is generated or read.
void check_model_fits(const PreparedExperiment& e) {
  const double weights = e.model.moe_layer_bytes() * e.model.moe_layers;
  const double total = static_cast<double>(e.hardware.memory.capacity_bytes) * e.hardware.topology.nodes();
  if (weights > total)
    throw InputError("model " + e.model.name + ": " + base::bytes_text(weights) + " of MoE weights do not fit in " +
                     std::to_string(e.hardware.topology.nodes()) + " nodes of " +
                     base::bytes_text(static_cast<double>(e.hardware.memory.capacity_bytes)) + " (hardware " +
                     e.hardware.name + ")");
}

/// profile_tokens and first_token within a trace of `tokens` tokens.
void check_token_range(const RunSpec& spec, size_t tokens) {
  if (spec.profile_tokens > tokens)
    throw InputError("profile_tokens: " + std::to_string(spec.profile_tokens) + " is more than the trace's " +
                     std::to_string(tokens) + " tokens");
  if (spec.first_token >= tokens)
    throw InputError("first_token: " + std::to_string(spec.first_token) + " is beyond the trace's " +
                     std::to_string(tokens) + " tokens (steps start at a token of the trace and wrap around)");
}

/// Refuses, before the work, a run whose memory model (mapping/memory_model.h) exceeds the budget.
/// `trace_ids`: the loaded trace's; 0 before loading (a synthetic trace's size is known then).
void check_memory_before(const PreparedExperiment& e, const ExperimentOptions& opt, double trace_ids) {
  mapping::RunSize s;
  s.nodes = e.hardware.topology.nodes();
  const int attn = e.spec.attn_tp > 0 ? e.spec.attn_tp : e.hardware.attn_tp_default;
  s.attn_group = attn > 0 ? attn : s.nodes;
  s.batch = max_step_tokens(e.cfg.shape, e.spec.steps);
  s.moe_layers = e.model.moe_layers;
  if (e.cfg.shape.kind == mapping::StepKind::kTrain) s.kept_layers = e.model.layers();
  s.train = e.cfg.shape.kind == mapping::StepKind::kTrain;
  s.recompute = e.spec.recompute;
  s.top_k = e.model.top_k;
  s.micro_batches = std::max(1, e.spec.micro_batches);
  s.moe_chunks = std::max(1, e.spec.moe_chunks);
  // Plain EP spreads an expert over ceil(N / E) nodes; any other strategy (TP slices every expert over
  // every node) or a placement file is taken at its worst, every node.
  const bool only_ep = !e.spec.all_strategies && !e.spec.strategies.empty() &&
                       std::all_of(e.spec.strategies.begin(), e.spec.strategies.end(),
                                   [](const StrategySpec& x) { return x.placement_file.empty() && x.name == "ep"; });
  if (only_ep) s.expert_span = e.model.experts >= s.nodes ? 1 : (s.nodes + e.model.experts - 1) / e.model.experts;
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
  s.concurrent_runs = std::max(1, opt.concurrent_runs);
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

/// Every strategy of the spec named in the registry with options it accepts, or a placement file that
/// fits the model and the hardware; e.placements gets an empty placement per strategy (its name).
void check_strategies(PreparedExperiment& e, const ExperimentOptions& opt, InputMemo& memo) {
  RunSpec& s = e.spec;
  if (s.all_strategies) return;
  const mapping::AnalyticalHardware& ah = memo.hardware.at(s.hardware.dump()).second;
  const mapping::RoutingTrace no_profile;  // option resolution reads the model and hardware only
  const mapping::StrategyContext base = strategy_context(e, ah, opt, no_profile);
  for (StrategySpec& st : s.strategies) {
    mapping::Placement named;
    if (st.name.empty()) {
      if (!memo.placements.count(st.placement_file))
        memo.placements.emplace(st.placement_file, mapping::load_placement(st.placement_file));
      named = memo.placements.at(st.placement_file);
      if (named.nodes != e.hardware.topology.nodes())
        throw InputError(st.placement_file + ": placement is for " + std::to_string(named.nodes) +
                         " nodes, the hardware has " + std::to_string(e.hardware.topology.nodes()));
      named.check_against(e.model, st.placement_file);
      // Its attention layout fits the run's groups and its dispatch planner (if any) its options.
      (void)opt.registry->make_planner(named, e.hardware.topology,
                                       mapping::groups_for(named, e.hardware.topology, e.cfg.attn_tp));
    } else {
      const mapping::PlacementStrategy* ps = opt.registry->strategy(st.name);
      if (!ps)
        throw InputError("unknown strategy '" + st.name +
                         "' (registered: " + join_names(opt.registry->strategy_names()) + ")");
      (void)ps->resolve_options(st.options, "strategy " + st.name + " options", base);
      named.strategy = st.name;
    }
    e.placements.push_back(std::move(named));
  }
}

}  // namespace

mapping::StrategyContext strategy_context(const PreparedExperiment& e, const mapping::AnalyticalHardware& ah,
                                          const ExperimentOptions& opt, const mapping::RoutingTrace& profile) {
  mapping::StrategyContext ctx(e.model, ah, profile);
  ctx.batch = static_cast<int>(max_step_tokens(e.cfg.shape, e.cfg.steps));  // placements see a step's tokens
  ctx.context = e.cfg.shape.context;
  ctx.shape = e.cfg.shape;
  ctx.attn_tp = e.cfg.attn_tp;
  ctx.memory_capacity_bytes = static_cast<double>(e.hardware.memory.capacity_bytes);
  ctx.seed = e.spec.seed;
  ctx.cache = opt.cache;
  ctx.note = opt.note;
  return ctx;
}

PreparedExperiment prepare_experiment(const RunSpec& spec, const ExperimentOptions& opt) {
  if (!opt.registry) throw std::logic_error("prepare_experiment: no registry");
  PreparedExperiment e;
  e.spec = spec;
  load_hardware(e);
  load_model(e);
  check_model_fits(e);
  e.cfg.shape = run_shape(spec, e.model, static_cast<int>(e.hardware.compute.attention_tile_tokens));
  check_memory_before(e, opt, 0);
  load_trace(e);
  check_memory_before(e, opt, double(e.trace.tokens()) * e.trace.layers() * e.trace.top_k());
  e.profile = e.trace;
  if (spec.profile_tokens > 0) {
    check_token_range(spec, e.trace.tokens());
    e.profile = e.trace.slice(0, static_cast<size_t>(spec.profile_tokens));
  }
  e.cfg.steps = spec.steps;
  e.cfg.micro_batches = spec.micro_batches;
  e.cfg.moe_chunks = spec.moe_chunks;
  // attn_tp 0: the hardware's default (all nodes on the NMP presets, 4 dies on the wafers).
  e.cfg.attn_tp = spec.attn_tp > 0 ? spec.attn_tp : e.hardware.attn_tp_default;
  check_token_range(spec, e.trace.tokens());
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

void check_experiment(const RunSpec& spec, const ExperimentOptions& opt, InputMemo& memo) {
  if (!opt.registry) throw std::logic_error("check_experiment: no registry");
  PreparedExperiment e;
  e.spec = spec;
  const std::string hw_key = spec.hardware.dump();
  if (!memo.hardware.count(hw_key)) {
    load_hardware(e);
    memo.hardware.emplace(hw_key, std::make_pair(e.hardware, hw::to_analytical(e.hardware)));
  }
  e.hardware = memo.hardware.at(hw_key).first;
  const std::string model_key = nlohmann::json{spec.model, spec.weight_bytes, spec.activation_bytes}.dump();
  if (!memo.models.count(model_key)) {
    load_model(e);
    memo.models.emplace(model_key, e.model);
  }
  e.model = memo.models.at(model_key);
  check_model_fits(e);
  e.cfg.shape = run_shape(spec, e.model, static_cast<int>(e.hardware.compute.attention_tile_tokens));
  check_memory_before(e, opt, 0);
  // The trace: a file is read once (its token count kept); a synthetic one is checked, not generated.
  const TraceSpec& t = spec.trace;
  const std::string trace_key =
      nlohmann::json{t.file, t.fingerprint, e.model.experts, e.model.top_k, e.model.moe_layers}.dump();
  size_t tokens = t.synthetic.tokens;
  if (!t.file.empty()) {
    if (!memo.trace_tokens.count(trace_key)) {
      load_trace(e);
      memo.trace_tokens.emplace(trace_key, e.trace.tokens());
      check_memory_before(e, opt, double(e.trace.tokens()) * e.trace.layers() * e.trace.top_k());
    }
    tokens = memo.trace_tokens.at(trace_key);
  } else {
    mapping::SyntheticTraceConfig c = t.synthetic;
    c.layers = e.model.moe_layers;
    c.experts = e.model.experts;
    c.top_k = e.model.top_k;
    c.validate();
  }
  check_token_range(spec, tokens);
  const int attn_tp = spec.attn_tp > 0 ? spec.attn_tp : e.hardware.attn_tp_default;
  const std::string groups_key = hw_key + "/" + std::to_string(attn_tp);
  if (memo.groups.insert(groups_key).second) mapping::make_groups(e.hardware.topology, attn_tp);
  e.cfg.attn_tp = attn_tp;
  e.cfg.micro_batches = spec.micro_batches;
  e.cfg.moe_chunks = spec.moe_chunks;
  resolve_policies(e, opt);
  check_strategies(e, opt, memo);
  check_accounting_strategies(e, opt);
}

}  // namespace nmpsim::apps
