// nmpsim: cycle-approximate SystemC model of MoE inference on NMP and wafer-scale hardware.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <systemc>
#include <vector>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/commands.h"
#include "nmpsim/apps/router_choice.h"
#include "nmpsim/base/cleanup.h"
#include "nmpsim/base/model_failure.h"
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/noc/noc_config.h"

namespace {

const char* kUsage =
    "nmpsim: cycle-approximate SystemC model of Mixture-of-Experts inference on near-memory-processing\n"
    "and wafer-scale hardware.\n\n"
    "Usage: nmpsim <command> [options]      nmpsim <command> --help for a command's options\n\n"
    "Commands:\n"
    "  run     time-between-tokens of an MoE model under placement strategies (TP, EP, hybrid, files)\n"
    "  place   build a placement file (HD-MoE node / node+link balance, TP, EP, CB); fit gamma\n"
    "  noc     synthetic-traffic testbench of the XY-routed wormhole mesh NoC\n"
    "  hw      hardware presets, descriptions (JSON) and a small exercise workload\n"
    "  model   MoE model presets and descriptions (JSON)\n"
    "  sweep   design-space sweeps: axes over hardware and run fields, each point in its own process\n"
    "  serve   requests served on the chip: arrivals, continuous batching, TTFT/TPOT, goodput at an SLO\n\n"
    "Options:\n"
    "  --help      show this help\n"
    "  --version   print the version\n"
    "  --rtl-plugin FILE   (with any command, repeatable) load router RTL built out of tree into a plugin\n"
    "              (docs/RTL.md \"Out of tree\"); also from NMPSIM_RTL_PLUGINS (paths separated by ':')\n\n"
    "Exit codes: 0 ok, 1 a simulation check failed (stall, conservation), 2 bad input.\n";

/// SystemC's messages go to stderr on one line (its default handler writes to stdout); its
/// informational notes (e.g. "I703 tracing timescale unit set") are dropped. Actions other than
/// display keep SystemC's meaning.
void systemc_report(const sc_core::sc_report& rep, const sc_core::sc_actions& actions) {
  using namespace sc_core;
  if ((actions & SC_DISPLAY) && rep.get_severity() >= SC_WARNING) {
    std::string msg = rep.get_msg();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "nmpsim: SystemC %s: %s: %s\n", rep.get_severity() == SC_WARNING ? "warning" : "error",
                 rep.get_msg_type(), msg.c_str());
  }
  if (actions & SC_STOP) sc_stop();
  if (actions & SC_ABORT) std::abort();
  if (actions & SC_THROW) throw rep;
}

/// An error message on one line (the error types already are; Boost's and the library's may not be).
std::string one_line(const char* what) { return nmpsim::mapping::one_line(what); }

/// The command `argv[0]` with the rest of `argv` (which no longer holds --rtl-plugin options).
int dispatch(const std::vector<std::string>& argv) {
  using namespace nmpsim::apps;
  if (argv.empty()) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  if (argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
    std::cout << kUsage;
    return kExitOk;
  }
  if (argv[0] == "--version") {
    std::cout << "nmpsim 0.1.0\n";
    return kExitOk;
  }
  const std::string& cmd = argv[0];
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (cmd == "noc") return cmd_noc(rest);
  if (cmd == "hw") return cmd_hw(rest);
  if (cmd == "run") return cmd_run(rest);
  if (cmd == "place") return cmd_place(rest);
  if (cmd == "model") return cmd_model(rest);
  if (cmd == "sweep") return cmd_sweep(rest);
  if (cmd == "serve") return cmd_serve(rest);
  throw UsageError("unknown command '" + cmd + "' (try nmpsim --help)");
}

int run(std::vector<std::string> argv) {
  using namespace nmpsim::apps;
  std::string who = "nmpsim";  // "nmpsim CMD" in messages once the command is known
  try {
    if (!argv.empty() && argv[0].rfind('-', 0) != 0) who += " " + argv[0];
    // Any command: --rtl-plugin may stand before it. Help and the version need no plugin.
    const bool info =
        !argv.empty() && (argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help" || argv[0] == "--version");
    if (!info) load_rtl_plugins(argv);
    if (who == "nmpsim" && !argv.empty() && argv[0].rfind('-', 0) != 0) who += " " + argv[0];
    return dispatch(argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", who.c_str(), one_line(e.what()).c_str());
  } catch (const nmpsim::noc::ConfigError& e) {
    std::fprintf(stderr, "%s: error: %s\n", who.c_str(), one_line(e.what()).c_str());
  } catch (const nmpsim::mapping::InputError& e) {
    std::fprintf(stderr, "%s: error: %s\n", who.c_str(), one_line(e.what()).c_str());
  } catch (const std::out_of_range& e) {
    std::fprintf(stderr, "%s: error: %s\n", who.c_str(), one_line(e.what()).c_str());
  } catch (const nmpsim::base::ModelFailure& e) {
    std::fprintf(stderr, "%s: model failure: %s\n", who.c_str(), one_line(e.what()).c_str());
    return kExitCheckFailed;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory: the inputs ask for more memory than this machine has\n",
                 who.c_str());
  }
  return kExitUsage;
}

/// Standard output that could not be written (a full disk, a closed pipe) is an error, not a success.
int check_stdout(int code) {
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    std::fprintf(stderr, "nmpsim: error: cannot write to standard output\n");
    return code == nmpsim::apps::kExitOk ? nmpsim::apps::kExitUsage : code;
  }
  return code;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  std::vector<std::string> args(argv + 1, argv + argc);
  sc_core::sc_report_handler::set_handler(systemc_report);
  try {
    return check_stdout(run(args));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nmpsim: internal error: %s\n", one_line(e.what()).c_str());
    return nmpsim::apps::kExitCheckFailed;
  }
}

int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  // A write past the file-size limit fails with EFBIG (and is reported) instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  // A closed pipe on stdout is reported by check_stdout, not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  // SIGINT, SIGTERM and SIGHUP stop the workers and remove staged outputs (base/cleanup.h).
  nmpsim::base::cleanup::install_signal_handlers();
  return sc_core::sc_elab_and_sim(argc, argv);
}
