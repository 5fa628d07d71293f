// Command-line flags the registered strategies and policies declare (mapping::FlagAlias): short
// spellings of their options, e.g. `--cb-regions 4` for `--strategy-opt cb.regions=4`, and the
// strategies' extra outputs (`nmpsim place --convergence FILE`). The commands name no method: every
// such flag, its help and its checks come from the registry.
#pragma once

#include <boost/program_options.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nmpsim/apps/run_spec.h"
#include "nmpsim/apps/spec_options.h"
#include "nmpsim/mapping/registry.h"

namespace nmpsim::apps {

class MethodFlags {
 public:
  /// Adds the flags of every registered strategy (with `outputs`, their extra outputs too) and, with
  /// `policies`, of every registered policy.
  MethodFlags(const mapping::Registry& r, boost::program_options::options_description& desc, bool outputs,
              bool policies);
  /// Each strategy flag given, as --strategy-opt of the strategies among `names` that declare it; a
  /// flag none of them declares is an error naming the strategies that do. Extra outputs likewise.
  void strategy_options(const boost::program_options::variables_map& vm, const std::vector<std::string>& names,
                        SpecOptions& so) const;
  /// Each policy whose enabling flag is given non-zero joins `spec.policies` with the options its flags
  /// give; a policy's other flags without its enabling flag are errors.
  void policies(const boost::program_options::variables_map& vm, RunSpec& spec) const;
  /// The first strategy or policy flag given ("" if none).
  std::string first_given(const boost::program_options::variables_map& vm) const;
  /// The extra outputs given: (flag, file).
  std::vector<std::pair<std::string, std::string>> given_outputs(const boost::program_options::variables_map& vm) const;

 private:
  struct Flag {
    std::vector<std::string> owners;            ///< strategies or policies declaring it
    std::map<std::string, std::string> option;  ///< owner -> option key
    bool policy = false;
  };
  std::map<std::string, Flag> flags_;
  std::map<std::string, std::vector<std::string>> outputs_;  ///< extra-output flag -> strategies
  std::map<std::string, std::string> enable_;                ///< policy -> its enabling flag
  std::map<std::string, std::string> values_;                ///< flag -> its value on the command line
};

/// The strategies a run will have, by name, as SpecOptions::apply will set them: --strategy's list if
/// given (or with no --spec), else the spec's; "all" is every registered strategy.
std::vector<std::string> strategy_names(const boost::program_options::variables_map& vm, const RunSpec& spec,
                                        const mapping::Registry& r);

}  // namespace nmpsim::apps
