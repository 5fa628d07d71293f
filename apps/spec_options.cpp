#include "nmpsim/apps/spec_options.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/hw_overrides.h"
#include "nmpsim/base/input_file.h"
#include "nmpsim/base/parse.h"
#include "nmpsim/mapping/data_files.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

std::vector<std::string> split_list(const std::string& text, const std::string& what) {
  return base::split_items(text, what);
}

void parse_named_option(const std::string& text, const std::string& option, nlohmann::json& options) {
  const size_t dot = text.find('.'), eq = text.find('=');
  if (dot == std::string::npos || eq == std::string::npos || dot == 0 || eq < dot + 2)
    throw UsageError("--" + option + ": expected NAME.KEY=VALUE, got '" + text + "'");
  const std::string name = text.substr(0, dot), key = text.substr(dot + 1, eq - dot - 1), value = text.substr(eq + 1);
  if (value.empty() || std::isspace(static_cast<unsigned char>(value.front())) ||
      std::isspace(static_cast<unsigned char>(value.back())))
    throw UsageError("--" + option + " " + name + "." + key + ": the value must be given, without spaces around it");
  nlohmann::json v = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) v = value;  // not JSON: a string such as bo or previous
  if (options.contains(name) && options[name].contains(key))
    throw UsageError("--" + option + " " + name + "." + key + " is given twice");
  options[name][key] = v;
}

bool given(const po::variables_map& vm, const char* key) { return vm.count(key) && !vm[key].defaulted(); }

void SpecOptions::add_workload(po::options_description& desc) {
  std::string models;
  for (const std::string& m : mapping::model_preset_names()) models += (models.empty() ? "" : ", ") + m;
  // clang-format off
  desc.add_options()
    ("hw", po::value(&hw_)->default_value(hw_), "hardware preset or JSON file (nmpsim hw --list-presets)")
    ("set", po::value(&sets_)->composing(),
     "PATH=VALUE: override one hardware field by its JSON path (nmpsim hw --fields), e.g. "
     "compute.peak_tflops=10 or links.on_die.gbytes_per_s=25 (repeatable)")
    ("model", po::value(&model_)->default_value(model_), ("model preset (" + models + ") or model JSON file").c_str())
    ("trace", po::value(&trace_)->default_value(trace_),
     "routing trace: a vendored MT-Bench trace (mtbench-math, mtbench-coding, ...: data/README.md), a JSON file "
     "(.json or .json.gz: layer -> token -> expert ids) or 'synthetic'")
    ("weight-bytes", po::value(&weight_bytes_)->default_value(0, "model's"), "bytes per weight (2 FP16, 1 INT8)")
    ("activation-bytes", po::value(&activation_bytes_)->default_value(0, "model's"), "bytes per activation element")
    ("seed", po::value(&seed_)->default_value(seed_), "seed of the synthetic trace and of randomised searches")
    ("synthetic-tokens", po::value(&synthetic_tokens_)->default_value(synthetic_tokens_), "synthetic trace: tokens per layer")
    ("skew", po::value(&skew_)->default_value(skew_, "0.8"), "synthetic trace: Zipf exponent of expert popularity")
    ("coactivation", po::value(&coactivation_)->default_value(coactivation_, "0.3"),
     "synthetic trace: chance a token's next expert is its previous expert's partner")
    ("layer-correlation", po::value(&layer_correlation_)->default_value(layer_correlation_, "0.4"),
     "synthetic trace: chance a token's first expert follows from its previous layer's")
    ("scenarios", po::value(&scenarios_)->default_value(scenarios_), "synthetic trace: contiguous scenarios")
    ("drift", po::value(&drift_)->default_value(drift_, "0"), "synthetic trace: share of popularity ranks reshuffled per scenario");
  // clang-format on
}

void SpecOptions::add_strategies(po::options_description& desc, const mapping::Registry& r,
                                 const std::string& default_strategy) {
  strategy_ = default_strategy;
  std::string names;
  for (const std::string& n : r.strategy_names()) names += (names.empty() ? "" : " | ") + n;
  auto* strategy_value = po::value(&strategy_);
  if (!default_strategy.empty()) strategy_value->default_value(strategy_);
  // clang-format off
  desc.add_options()
    ("strategy", strategy_value,
     ("placements, comma-separated: " + names + " | a placement JSON file; all = every registered strategy "
      "(--list-strategies describes them and their options)").c_str())
    ("strategy-opt", po::value(&strategy_opts_)->composing(),
     "a strategy option, NAME.KEY=VALUE (e.g. cb.regions=4; --list-strategies lists them); repeatable")
    ("policy", po::value(&policies_)->composing(),
     "runtime policies for every strategy's run, comma-separated (--list-policies); repeatable")
    ("policy-opt", po::value(&policy_opts_)->composing(), "a policy option, NAME.KEY=VALUE; repeatable")
    ("list-strategies", "describe every registered strategy and its options, then exit")
    ("list-policies", "describe every registered runtime policy and its options, then exit");
  // clang-format on
}

void SpecOptions::add_run_shape(po::options_description& desc, long long default_batch, bool simulation) {
  batch_ = default_batch;
  // clang-format off
  desc.add_options()
    ("batch", po::value(&batch_)->default_value(batch_),
     simulation ? "decode tokens per step (--phase prefill: requests per step)"
                : "batch size the placement is optimised for (tokens)")
    ("context", po::value(&context_)->default_value(context_),
     "KV-cache length each decode token attends over, in tokens")
    ("attn-tp", po::value(&attn_tp_)->default_value(attn_tp_), "nodes per attention tensor-parallel group (0 = the hardware's attn_tp_default: all nodes on the NMP presets, 4 dies on the wafers)")
    ("profile-tokens", po::value(&profile_tokens_)->default_value(0, "all"),
     "strategies build their placements from the trace's first N tokens");
  if (!simulation) return;
  desc.add_options()
    ("phase", po::value(&phase_)->default_value(phase_),
     "what every step carries: decode (one new token per request) | prefill (--batch whole prompts of "
     "--prompt-tokens) | mixed (--batch decode tokens plus a --prefill-chunk of one prompt: chunked prefill) | "
     "train (a training step on --batch sequences of --prompt-tokens: forward, backward, gradient "
     "synchronisation, optimizer)")
    ("prompt-tokens", po::value(&prompt_tokens_)->default_value(0, "none"),
     "--phase prefill or mixed: tokens of each prompt; train: of each sequence (at most the model's context)")
    ("recompute", "--phase train: keep only each layer's input from the forward and recompute the layer's "
     "forward before its backward (full activation recomputation)")
    ("prefill-chunk", po::value(&prefill_chunk_)->default_value(0, "none"),
     "--phase mixed: prompt tokens per step (at most --prompt-tokens); --steps defaults to the chunks' count")
    ("micro-batches", po::value(&micro_batches_)->default_value(micro_batches_),
     "each step's requests in K micro-batches whose layers interleave: one micro-batch's dispatch and combine "
     "overlap another's attention and experts (two-batch overlap; 1 to the step's requests)")
    ("moe-chunks", po::value(&moe_chunks_)->default_value(moe_chunks_),
     "each MoE block's dispatch, experts and combine in C token chunks, chunk j's all-to-all overlapping chunk "
     "j - 1's experts (Tutel's pipelining; 1 to 64; a direct exchange only: relayed ones stay whole)")
    ("steps", po::value(&steps_)->default_value(steps_),
     "steps simulated (each takes the next tokens of the trace; --phase mixed: at least the prompt's chunks)")
    ("first-token", po::value(&first_token_)->default_value(first_token_), "trace token the first step starts at")
    ("fidelity", po::value(&fidelity_)->default_value(fidelity_),
     "cycle (SystemC model with the cycle-level NoC) | flow (analytical flow-level model, fast)")
    ("accounting", po::value(&accounting_),
     "charge time by a registered accounting instead of simulating (--list-accountings lists them)")
    ("accounting-opt", po::value(&accounting_opts_)->composing(), "an accounting option, NAME.KEY=VALUE; repeatable")
    ("list-accountings", "describe every registered accounting and its options, then exit");
  // clang-format on
}

namespace {

/// Merges NAME.KEY=VALUE options into the `options` of the item called NAME (a StrategySpec or PolicySpec).
template <class Item>
void merge_options(const std::vector<std::string>& given_options, const std::string& what, std::vector<Item>& items) {
  nlohmann::json parsed = nlohmann::json::object();
  for (const std::string& o : given_options) parse_named_option(o, what + "-opt", parsed);
  for (auto it = parsed.begin(); it != parsed.end(); ++it) {
    bool found = false;
    for (Item& item : items)
      if (item.name == it.key()) {
        item.options.update(it.value());
        found = true;
      }
    if (!found)
      throw UsageError("--" + what + "-opt: no " + what + " '" + it.key() + "' in this run's --" + what + " list");
  }
}

StrategySpec strategy_item(const std::string& item, const mapping::Registry& r) {
  if (r.strategy(item)) return StrategySpec::named(item);
  if (base::names_a_file(item)) return StrategySpec::file(item);
  std::string names;
  for (const std::string& n : r.strategy_names()) names += (names.empty() ? "" : ", ") + n;
  throw UsageError("--strategy: '" + item + "' is neither a strategy (" + names +
                   ", all) nor a readable placement file");
}
}  // namespace

void SpecOptions::apply(const po::variables_map& vm, RunSpec& s, const mapping::Registry& r) const {
  apply_workload(vm, s);
  apply_shape(vm, s);
  if (vm.count("strategy") && (given(vm, "strategy") || !vm.count("spec"))) {
    s.strategies.clear();
    s.all_strategies = false;
    const std::vector<std::string> items = split_list(strategy_, "--strategy");
    for (const std::string& item : items) {
      if (item == "all" && items.size() > 1)
        throw UsageError("--strategy: 'all' is every registered strategy: list no others beside it");
      if (item == "all")
        s.all_strategies = true;
      else
        s.strategies.push_back(strategy_item(item, r));
    }
    if (!s.all_strategies && s.strategies.empty()) throw UsageError("--strategy: no strategy given");
  }
  if (s.all_strategies && !strategy_opts_.empty()) {  // options name strategies: list them
    s.strategies.clear();
    for (const std::string& n : r.strategy_names()) s.strategies.push_back(StrategySpec::named(n));
    s.all_strategies = false;
  }
  merge_options(strategy_opts_, "strategy", s.strategies);
  for (const std::string& list : policies_)
    for (const std::string& name : split_list(list, "--policy")) s.policies.push_back(PolicySpec::named(name));
  merge_options(policy_opts_, "policy", s.policies);
  if (given(vm, "accounting")) s.accounting = PolicySpec::named(accounting_);
  std::vector<PolicySpec> accounting;
  if (!s.accounting.name.empty()) accounting.push_back(s.accounting);
  merge_options(accounting_opts_, "accounting", accounting);
  if (!accounting.empty()) s.accounting = accounting.front();
}

void SpecOptions::apply_workload(const po::variables_map& vm, RunSpec& s) const {
  if (given(vm, "hw")) s.hardware = hw_;
  if (!sets_.empty()) s.hardware = override_hardware(s.hardware, sets_);
  if (given(vm, "model")) s.model = model_;
  if (given(vm, "weight-bytes")) s.weight_bytes = weight_bytes_;
  if (given(vm, "activation-bytes")) s.activation_bytes = activation_bytes_;
  if (given(vm, "seed")) s.seed = s.trace.synthetic.seed = checked_count(seed_, "seed", 0);
  if (given(vm, "trace")) s.trace.file = trace_ == "synthetic" ? "" : trace_;
  if (!s.trace.file.empty())
    for (const char* k : {"synthetic-tokens", "skew", "coactivation", "layer-correlation", "scenarios", "drift"})
      if (given(vm, k)) throw UsageError(std::string("--") + k + ": applies to the synthetic trace, not --trace FILE");
  mapping::SyntheticTraceConfig& syn = s.trace.synthetic;
  if (given(vm, "synthetic-tokens")) syn.tokens = checked_count(synthetic_tokens_, "synthetic-tokens", 1, 1 << 24);
  if (given(vm, "skew")) syn.zipf_s = skew_;
  if (given(vm, "coactivation")) syn.coactivation = coactivation_;
  if (given(vm, "layer-correlation")) syn.layer_correlation = layer_correlation_;
  if (given(vm, "scenarios")) syn.scenarios = static_cast<int>(checked_count(scenarios_, "scenarios", 1, 1 << 16));
  if (given(vm, "drift")) syn.drift = drift_;
}

void SpecOptions::apply_shape(const po::variables_map& vm, RunSpec& s) const {
  if (given(vm, "batch")) s.batch = static_cast<int>(checked_count(batch_, "batch", 1, 1 << 20));
  if (given(vm, "steps")) s.steps = static_cast<int>(checked_count(steps_, "steps", 1, 1 << 20));
  if (given(vm, "context")) s.context = static_cast<int>(checked_count(context_, "context", 0, 1 << 24));
  if (given(vm, "attn-tp")) s.attn_tp = static_cast<int>(checked_count(attn_tp_, "attn-tp", 0, 1 << 16));
  if (given(vm, "first-token")) s.first_token = checked_count(first_token_, "first-token", 0);
  if (given(vm, "profile-tokens")) s.profile_tokens = checked_count(profile_tokens_, "profile-tokens", 0);
  if (given(vm, "fidelity")) s.fidelity = mapping::parse_fidelity(fidelity_, "--fidelity");
  if (given(vm, "phase")) s.phase = mapping::parse_step_kind(phase_, "--phase");
  if (given(vm, "prompt-tokens"))
    s.prompt_tokens = static_cast<int>(checked_count(prompt_tokens_, "prompt-tokens", 0, 1 << 24));
  if (given(vm, "micro-batches"))
    s.micro_batches = static_cast<int>(checked_count(micro_batches_, "micro-batches", 1, 256));
  if (given(vm, "moe-chunks")) s.moe_chunks = static_cast<int>(checked_count(moe_chunks_, "moe-chunks", 1, 64));
  if (vm.count("recompute")) s.recompute = true;
  if (given(vm, "prefill-chunk"))
    s.prefill_chunk = static_cast<int>(checked_count(prefill_chunk_, "prefill-chunk", 0, 1 << 24));
  if ((s.phase == mapping::StepKind::kPrefill || s.phase == mapping::StepKind::kTrain) && given(vm, "context"))
    throw UsageError(std::string("--context: a ") + mapping::step_kind_name(s.phase) +
                     " step attends over its prompt (--prompt-tokens), not a KV cache");
  // A mixed run asked for on the command line without --steps runs until its prompt's last chunk has
  // been carried (a spec's own steps are kept: rerunning it runs the same steps).
  const bool mixed_here = given(vm, "phase") || given(vm, "prompt-tokens") || given(vm, "prefill-chunk");
  if (s.phase == mapping::StepKind::kMixed && mixed_here && !given(vm, "steps") && s.prefill_chunk > 0 &&
      s.prompt_tokens > 0)
    s.steps = std::min(1 << 20, mapping::prompt_chunks(s.prompt_tokens, s.prefill_chunk));
}

}  // namespace nmpsim::apps
