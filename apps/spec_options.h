// Command-line options that fill a RunSpec, shared by `nmpsim run` and `nmpsim place`. Only options
// given on the command line change the spec, so they can override a --spec file field by field.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "nmpsim/apps/run_spec.h"
#include "nmpsim/mapping/registry.h"

namespace nmpsim::apps {

class SpecOptions {
 public:
  /// --hw, --set, --model, --trace, --weight-bytes, --activation-bytes, --seed and the synthetic-trace options.
  void add_workload(boost::program_options::options_description& desc);
  /// --strategy (help from the registry), --strategy-opt, --policy, --policy-opt.
  void add_strategies(boost::program_options::options_description& desc, const mapping::Registry& r,
                      const std::string& default_strategy);
  /// --batch, --context, --attn-tp, --profile-tokens and, with `simulation`, --steps, --first-token, --fidelity.
  void add_run_shape(boost::program_options::options_description& desc, long long default_batch, bool simulation);
  /// One more --strategy-opt NAME.KEY=VALUE (for aliases such as --cb-regions).
  void add_strategy_option(const std::string& text) { strategy_opts_.push_back(text); }
  /// Applies every option given on the command line to `s`.
  void apply(const boost::program_options::variables_map& vm, RunSpec& s, const mapping::Registry& r) const;

 private:
  void apply_workload(const boost::program_options::variables_map& vm, RunSpec& s) const;
  void apply_shape(const boost::program_options::variables_map& vm, RunSpec& s) const;
  std::string hw_ = "nmp-4x8-5t50g", model_ = "mixtral-8x7b", trace_ = "synthetic", strategy_, fidelity_ = "cycle";
  double weight_bytes_ = 0, activation_bytes_ = 0;
  long long seed_ = 1, synthetic_tokens_ = 4096, scenarios_ = 1;
  double skew_ = 0.8, coactivation_ = 0.3, layer_correlation_ = 0.4, drift_ = 0.0;
  long long batch_ = 32, steps_ = 2, context_ = 1024, attn_tp_ = 0, first_token_ = 0, profile_tokens_ = 0;
  long long prompt_tokens_ = 0, prefill_chunk_ = 0, micro_batches_ = 1, moe_chunks_ = 1;
  std::string phase_ = "decode";
  std::vector<std::string> strategy_opts_, policies_, policy_opts_, accounting_opts_, sets_;
  std::string accounting_;
};

/// Whether `key` was given on the command line (not just defaulted).
bool given(const boost::program_options::variables_map& vm, const char* key);
/// Splits "a,b,c" into its non-empty items.
/// "a,b" split at commas; an empty item is an error naming `what`.
std::vector<std::string> split_list(const std::string& text, const std::string& what);
/// Parses NAME.KEY=VALUE (VALUE as JSON when it parses, else as a string) into `options[NAME][KEY]`.
void parse_named_option(const std::string& text, const std::string& option, nlohmann::json& options);

}  // namespace nmpsim::apps
