// nmpsim: cycle-approximate SystemC model of MoE inference on NMP and wafer-scale hardware.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <systemc>
#include <vector>

#include "apps/cli_common.h"
#include "apps/commands.h"
#include "mapping/json_fields.h"
#include "noc/noc_config.h"

namespace {

const char* kUsage =
    "nmpsim: cycle-approximate SystemC model of Mixture-of-Experts inference on near-memory-processing\n"
    "and wafer-scale hardware.\n\n"
    "Usage: nmpsim <command> [options]      nmpsim <command> --help for a command's options\n\n"
    "Commands:\n"
    "  run     time-between-tokens of an MoE model under placement strategies (TP, EP, hybrid, files)\n"
    "  place   build a placement file (HD-MoE node / node+link balance, TP, EP, CB); fit gamma\n"
    "  noc     synthetic-traffic testbench of the XY-routed wormhole mesh NoC\n"
    "  hw      hardware presets, descriptions (JSON) and a small exercise workload\n\n"
    "Options:\n"
    "  --help      show this help\n"
    "  --version   print the version\n\n"
    "Exit codes: 0 ok, 1 a simulation check failed (stall, conservation), 2 bad input.\n";

int run(const std::vector<std::string>& argv) {
  using namespace nmpsim::apps;
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
    std::cout << kUsage;
    return argv.empty() ? kExitUsage : kExitOk;
  }
  if (argv[0] == "--version") {
    std::cout << "nmpsim 0.1.0\n";
    return kExitOk;
  }
  const std::string cmd = argv[0];
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  try {
    if (cmd == "noc") return cmd_noc(rest);
    if (cmd == "hw") return cmd_hw(rest);
    if (cmd == "run") return cmd_run(rest);
    if (cmd == "place") return cmd_place(rest);
    throw UsageError("unknown command '" + cmd + "' (try nmpsim --help)");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "nmpsim %s: error: %s\n", cmd.c_str(), e.what());
  } catch (const nmpsim::noc::ConfigError& e) {
    std::fprintf(stderr, "nmpsim %s: error: %s\n", cmd.c_str(), e.what());
  } catch (const nmpsim::mapping::InputError& e) {
    std::fprintf(stderr, "nmpsim %s: error: %s\n", cmd.c_str(), e.what());
  } catch (const std::out_of_range& e) {
    std::fprintf(stderr, "nmpsim %s: error: %s\n", cmd.c_str(), e.what());
  }
  return kExitUsage;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nmpsim: internal error: %s\n", e.what());
    return nmpsim::apps::kExitCheckFailed;
  }
}

int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
