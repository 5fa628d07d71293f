// `nmpsim run`: MoE inference end to end on the SystemC model (or the flow-level model).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <iostream>

#include "apps/cli_common.h"
#include "apps/commands.h"
#include "apps/run_report.h"
#include "apps/workload_options.h"
#include "mapping/hdmoe_strategy.h"
#include "firmware/runtime.h"
#include "mapping/json_fields.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

namespace {

void make_dir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw UsageError("--out: cannot create directory '" + dir + "': " + std::strerror(errno));
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw UsageError("--out: '" + dir + "' is not a directory");
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  std::string hw_name = "hdmoe-4x8-5t50g", strategy = "all", out_dir = "nmpsim-out", fidelity = "cycle", vcd;
  long long batch = 32, steps = 2, context = 1024, attn_tp = 0, cb_regions = 0, first_token = 0, prebroadcast = 0,
            targets = 4;
  std::string predict = "previous";
  double accuracy = 1.0;
  WorkloadOptions wl;
  po::options_description desc(
      "nmpsim run: time-between-tokens of an MoE model on NMP or wafer-scale hardware\n\n"
      "Usage: nmpsim run [options]     (defaults: HD-MoE 4x8 mesh, Mixtral-8x7B, synthetic trace, all strategies)\n\n"
      "Options");
  // clang-format off
  desc.add_options()
    ("help", "show this help")
    ("hw", po::value(&hw_name)->default_value(hw_name), "hardware preset or JSON file (nmpsim hw --list-presets)")
    ("strategy", po::value(&strategy)->default_value(strategy),
     "placements, comma-separated: tp | ep | cb (hybrid compute-balanced) | hdmoe | hdmoe-node | a placement JSON "
     "file; all = tp,ep,cb")
    ("batch", po::value(&batch)->default_value(batch), "tokens per decode step")
    ("steps", po::value(&steps)->default_value(steps), "decode steps simulated (each takes the next batch of the trace)")
    ("context", po::value(&context)->default_value(context), "KV-cache length each token attends over, in tokens")
    ("attn-tp", po::value(&attn_tp)->default_value(attn_tp), "nodes per attention tensor-parallel group (0 = all nodes)")
    ("fidelity", po::value(&fidelity)->default_value(fidelity),
     "cycle (SystemC model with the cycle-level NoC) | flow (analytical flow-level model, fast)")
    ("first-token", po::value(&first_token)->default_value(first_token), "trace token the first step starts at")
    ("cb-regions", po::value(&cb_regions)->default_value(cb_regions),
     "sub-regions of the hybrid compute-balanced strategy (0 = 2 for <= 8 experts, else 8)")
    ("prebroadcast", po::value(&prebroadcast)->default_value(prebroadcast),
     "HD-MoE dynamic: pre-broadcast at most N experts per layer, with least-loaded dispatch (cycle fidelity)")
    ("prebroadcast-targets", po::value(&targets)->default_value(targets),
     "pre-broadcast: copy each chosen expert to this many least-loaded nodes (0 = every node)")
    ("predict", po::value(&predict)->default_value(predict),
     "pre-broadcast: predict next layer's loads from 'previous' layer's routing or from the 'trace'")
    ("prediction-accuracy", po::value(&accuracy)->default_value(accuracy, "1"),
     "--predict trace: weight of the true frequencies (the rest is the trace-wide average)")
    ("out", po::value(&out_dir)->default_value(out_dir), "output directory (summary.json, layers.csv, links.csv, PNGs)")
    ("vcd", po::value(&vcd), "cycle fidelity: trace PE busy state and per-link flit counters to this VCD file")
    ("no-plots", "do not draw PNG plots")
    ("quiet", "print nothing but errors");
  // clang-format on
  wl.add_to(desc);
  const po::variables_map vm = parse_options(args, desc);
  if (vm.count("help")) {
    std::cout << desc << "\nOutputs and their units: docs/FORMATS.md. Exit codes: 0 ok, 1 simulation failure, 2 bad input.\n";
    return kExitOk;
  }
  const bool quiet = vm.count("quiet") > 0;
  if (fidelity != "cycle" && fidelity != "flow") throw UsageError("--fidelity: expected cycle or flow, got '" + fidelity + "'");
  mapping::RunConfig cfg;
  cfg.shape.batch = static_cast<int>(checked_count(batch, "batch", 1, 1 << 20));
  cfg.steps = static_cast<int>(checked_count(steps, "steps", 1, 1 << 20));
  cfg.shape.context = static_cast<int>(checked_count(context, "context", 0, 1 << 24));
  cfg.attn_tp = static_cast<int>(checked_count(attn_tp, "attn-tp", 0, 1 << 16));
  cfg.first_token = checked_count(first_token, "first-token", 0);
  cfg.prebroadcast_experts = static_cast<int>(checked_count(prebroadcast, "prebroadcast", 0, 1 << 16));
  if (predict != "previous" && predict != "trace") throw UsageError("--predict: expected previous or trace");
  if (!(accuracy >= 0 && accuracy <= 1)) throw UsageError("--prediction-accuracy: must be in [0, 1]");
  cfg.predict = predict;
  cfg.prebroadcast_targets = static_cast<int>(checked_count(targets, "prebroadcast-targets", 0, 1 << 16));
  cfg.prediction_accuracy = accuracy;
  if (cfg.prebroadcast_experts > 0 && fidelity == "flow")
    throw UsageError("--prebroadcast needs --fidelity cycle (broadcasts are simulated traffic)");

  const hw::HardwareSpec hw = hw::load_hardware(hw_name);
  const mapping::ModelSpec model = wl.make_model();
  const mapping::Topology& topo = hw.topology;
  const mapping::RoutingTrace trace = wl.make_trace(model);

  // Placements.
  std::vector<mapping::Placement> placements;
  std::optional<mapping::Placement> hdmoe_cache;
  auto add = [&](const std::string& s) {
    if (s == "tp") {
      placements.push_back(mapping::make_tp(model, topo.nodes()));
    } else if (s == "ep") {
      placements.push_back(mapping::make_ep(model, topo.nodes()));
    } else if (s == "cb") {
      const int r = cb_regions > 0 ? static_cast<int>(cb_regions) : mapping::default_cb_regions(model, topo);
      placements.push_back(mapping::make_cb(model, topo, trace, r));
    } else if (s == "hdmoe" || s == "hdmoe-node") {
      // Node balance is solved once: hdmoe-node is hdmoe's shares with the identity node map.
      if (!hdmoe_cache) {
        mapping::HdmoeOptions opt;
        opt.batch = cfg.shape.batch;
        opt.memory_capacity_bytes = static_cast<double>(hw.memory.capacity_bytes);
        opt.attn_tp = cfg.attn_tp;
        opt.context = cfg.shape.context;
        hdmoe_cache = mapping::make_hdmoe(model, firmware::to_analytical(hw), trace, opt);
      }
      mapping::Placement p = *hdmoe_cache;
      if (s == "hdmoe-node") {
        p.strategy = "hdmoe-node";
        std::iota(p.node_map.begin(), p.node_map.end(), 0);
        p.solver.erase("link_balance");
      }
      placements.push_back(p);
    } else {
      mapping::Placement p = mapping::load_placement(s);
      if (p.nodes != topo.nodes())
        throw mapping::InputError(s + ": placement is for " + std::to_string(p.nodes) + " nodes, the hardware has " +
                                  std::to_string(topo.nodes()));
      p.check_against(model, s);
      placements.push_back(p);
    }
  };
  const std::string list = strategy == "all" ? "tp,ep,cb" : strategy;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) add(list.substr(at, comma - at));
    at = comma + 1;
  }
  if (placements.empty()) throw UsageError("--strategy: no strategy given");
  const int group = cfg.attn_tp > 0 ? cfg.attn_tp : topo.nodes();
  mapping::make_groups(topo, cfg.attn_tp);  // validates the group size early
  for (const auto& p : placements)
    mapping::check_memory(p, model, topo, static_cast<double>(hw.memory.capacity_bytes), group, cfg.shape.batch,
                          cfg.shape.context);
  make_dir(out_dir);

  // Run.
  std::vector<mapping::StrategyResult> results;
  std::vector<hw::EnergyReport> energy;  // per strategy (cycle fidelity)
  if (!vcd.empty() && fidelity == "flow") throw UsageError("--vcd needs --fidelity cycle");
  const bool tty = isatty(STDERR_FILENO);
  if (fidelity == "flow") {
    const mapping::AnalyticalHardware ah = firmware::to_analytical(hw);
    for (const auto& p : placements) results.push_back(mapping::run_flow(ah, model, trace, p, cfg));
  } else {
    hw::System sys("system", hw);
    if (!vcd.empty()) sys.enable_vcd(vcd);
    firmware::Runtime rt(sys, model, trace, cfg);
    std::string current;
    rt.on_layer = [&](int s, int l) {
      if (quiet || (!tty && l + 1 != model.layers())) return;
      std::fprintf(stderr, "%s  %-4s step %d/%d layer %d/%d", tty ? "\r" : "", current.c_str(), s + 1, cfg.steps,
                   l + 1, model.layers());
      if (!tty) std::fprintf(stderr, "\n");
    };
    for (const auto& p : placements) {
      current = p.strategy;
      const hw::EnergyReport before = sys.energy();
      results.push_back(rt.run(p));
      const hw::EnergyReport after = sys.energy();
      hw::EnergyReport e;
      e.dram_pj = after.dram_pj - before.dram_pj;
      e.noc_pj = after.noc_pj - before.noc_pj;
      e.compute_pj = after.compute_pj - before.compute_pj;
      energy.push_back(e);
    }
    if (tty && !quiet) std::fprintf(stderr, "\r%60s\r", "");
    const std::string err = sys.mesh().network().check_conservation();
    if (!err.empty()) throw std::runtime_error("NoC conservation violated: " + err);
  }

  // Report.
  double tp_tbt = 0;
  for (const auto& r : results)
    if (r.strategy == "tp") tp_tbt = r.mean_tbt_s();
  nlohmann::json strategies = nlohmann::json::object();
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    strategies[r.strategy] = strategy_json(r, tp_tbt);
    if (i < energy.size()) {
      const hw::EnergyReport& e = energy[i];
      const double tokens = double(cfg.shape.batch) * cfg.steps;
      strategies[r.strategy]["energy_pj"] = {
          {"dram", e.dram_pj}, {"noc", e.noc_pj}, {"compute", e.compute_pj}, {"total", e.total_pj()}};
      strategies[r.strategy]["energy_per_token_uj"] = e.total_pj() / tokens / 1e6;
    }
  }
  if (cfg.prebroadcast_experts > 0)
    for (const auto& r : results)
      strategies[r.strategy]["prebroadcast"] = {{"experts_issued", r.prebroadcasts},
                                                {"experts_used", r.prebroadcasts_used},
                                                {"bytes", r.prebroadcast_bytes}};
  nlohmann::json summary = {
      {"config",
       {{"hardware", hw.name},
        {"model", model.name},
        {"trace", trace.source()},
        {"batch", cfg.shape.batch},
        {"steps", cfg.steps},
        {"context", cfg.shape.context},
        {"attn_tp", group},
        {"fidelity", fidelity},
        {"weight_bytes", model.weight_bytes},
        {"activation_bytes", model.activation_bytes}}},
      {"strategies", strategies}};
  write_json_atomic(out_dir + "/summary.json", summary);
  write_file_atomic(out_dir + "/summary.csv", summary_csv(results));
  write_file_atomic(out_dir + "/layers.csv", layers_csv(results));
  write_file_atomic(out_dir + "/links.csv", links_csv(results, hw));
  std::string plot_note;
  if (!vm.count("no-plots")) plot_note = write_plots(out_dir, results, hw);

  if (!quiet) {
    std::printf("nmpsim run: %s on %s, batch %d, %d steps, context %d, %s trace, %s fidelity\n", model.name.c_str(),
                hw.name.c_str(), cfg.shape.batch, cfg.steps, cfg.shape.context, trace.source().c_str(), fidelity.c_str());
    std::printf("  %-10s %12s %10s %12s %12s %12s %12s\n", "strategy", "TBT (us)", "vs TP", "attention", "allreduce",
                "moe compute", "moe comm");
    for (const auto& r : results) {
      const auto& j = strategies[r.strategy];
      char speed[32] = "-";
      if (tp_tbt > 0) std::snprintf(speed, sizeof speed, "%.2fx", tp_tbt / r.mean_tbt_s());
      std::printf("  %-10s %12.1f %10s %12.1f %12.1f %12.1f %12.1f\n", r.strategy.c_str(), r.mean_tbt_s() * 1e6, speed,
                  j["attention_us"].get<double>(), j["allreduce_us"].get<double>(), j["moe_compute_us"].get<double>(),
                  j["moe_comm_us"].get<double>());
    }
    std::printf("  (microseconds per decode step, summed over %d layers; outputs in %s/)\n", model.layers(),
                out_dir.c_str());
    if (!plot_note.empty()) std::printf("  %s\n", plot_note.c_str());
  }
  return kExitOk;
}

}  // namespace nmpsim::apps
