// Fuzz target: the command-line parser of `nmpsim run` / `nmpsim place` (Boost.Program_options with
// nmpsim's option table, SpecOptions::apply, NAME.KEY=VALUE options). The input is the argument list,
// NUL-separated. A usage error or input error is a correct rejection; an accepted command line must
// give a spec that survives a round trip.
#include <vector>

#include "fuzz_common.h"
#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/run_spec.h"
#include "nmpsim/apps/spec_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nmpsim;
  std::vector<std::string> args;
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  if (!cur.empty()) args.push_back(cur);
  mapping::Registry registry;
  mapping::register_baselines(registry);
  fuzz::expect_clean<apps::UsageError>([&] {
    apps::SpecOptions so;
    boost::program_options::options_description desc("fuzz");
    desc.add_options()("help", "")("spec", boost::program_options::value<std::string>(), "")(
        "out", boost::program_options::value<std::string>(), "");
    so.add_strategies(desc, registry, "all");
    so.add_run_shape(desc, 32, true);
    so.add_workload(desc);
    const auto vm = apps::parse_options(args, desc);
    apps::RunSpec spec;
    so.apply(vm, spec, registry);
    const nlohmann::json j = apps::run_spec_to_json(spec);
    if (apps::run_spec_to_json(apps::run_spec_from_json(j, "round trip")) != j) std::abort();
  });
  return 0;
}
