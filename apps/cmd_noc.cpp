// `nmpsim noc`: the synthetic-traffic NoC testbench.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/commands.h"
#include "nmpsim/apps/noc_curve.h"
#include "nmpsim/apps/router_choice.h"
#include "nmpsim/base/model_failure.h"
#include "nmpsim/base/output_files.h"
#include "nmpsim/noc/testbench.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

namespace {

/// Validates --router, --rtl-nodes, --vcd and --vcd-node together; fills in the default VCD node.
RouterChoice router_choice(const po::variables_map& vm, const noc::NocConfig& noc, const std::string& router,
                           const std::string& rtl_nodes, int& vcd_node) {
  const RouterChoice rc = parse_router_choice(router, rtl_nodes, vm.count("rtl-nodes") > 0, noc);
  const noc::MeshGeometry geo{noc.width, noc.height};
  if (vm.count("vcd-node") && !vm.count("vcd")) throw UsageError("--vcd-node needs --vcd FILE");
  if (!vm.count("vcd")) return rc;
  if (rc.kind != "rtl" && rc.kind != "mixed") throw UsageError("--vcd dumps an RTL router: use --router rtl or mixed");
  if (!vm.count("vcd-node")) vcd_node = geo.id(noc.width / 2, noc.height / 2);
  if (vcd_node < 0 || vcd_node >= noc.nodes())
    throw UsageError("--vcd-node: node " + std::to_string(vcd_node) + " is outside the " + std::to_string(noc.nodes()) +
                     "-node mesh");
  if (!rc.rtl_at(vcd_node))
    throw UsageError("--vcd-node: node " + std::to_string(vcd_node) +
                     " has a SystemC router, not an RTL one (see --rtl-nodes)");
  return rc;
}

nlohmann::json result_json(const noc::TestbenchConfig& cfg, const noc::TestbenchResult& r, const RouterChoice& rc) {
  const noc::NocStats& s = r.stats;
  nlohmann::json links = nlohmann::json::array();
  noc::MeshGeometry geo{cfg.noc.width, cfg.noc.height};
  for (const auto& l : s.links) {
    links.push_back({{"from", l.from},
                     {"to", l.to},
                     {"from_xy", {geo.x(l.from), geo.y(l.from)}},
                     {"to_xy", {geo.x(l.to), geo.y(l.to)}},
                     {"flits", l.flits},
                     {"utilisation", l.utilisation}});
  }
  nlohmann::json routers = nlohmann::json::array();
  for (const auto& rs : s.routers)
    routers.push_back({{"node", rs.node},
                       {"xy", {geo.x(rs.node), geo.y(rs.node)}},
                       {"avg_buffered_flits", rs.avg_buffered_flits},
                       {"max_buffered_flits", rs.max_buffered_flits}});
  return {
      {"config",
       {{"mesh", std::to_string(cfg.noc.width) + "x" + std::to_string(cfg.noc.height)},
        {"traffic", noc::traffic_pattern_name(cfg.traffic.pattern)},
        {"injection_rate_flits_per_node_cycle", cfg.traffic.injection_rate},
        {"packet_flits", cfg.traffic.packet_flits},
        {"vcs", cfg.noc.vcs},
        {"buffer_flits", cfg.noc.buffer_flits},
        {"ni_queues", cfg.noc.ni_queues},
        {"ni_ports", cfg.noc.ni_ports},
        {"router_delay_cycles", cfg.noc.router_delay_cycles},
        {"link_delay_cycles", cfg.noc.link_delay_cycles},
        {"flit_bytes", cfg.noc.flit_bytes},
        {"warmup_cycles", cfg.warmup_cycles},
        {"measured_cycles", cfg.measure_cycles},
        {"seed", cfg.traffic.seed},
        {"router", rc.kind},
        {"router_kind", noc::router_kind_name(cfg.noc.router_kind)},
        {"rtl_router", rc.rtl_name},
        {"rtl_nodes",
         [&] {
           nlohmann::json a = nlohmann::json::array();
           for (int n = 0; n < cfg.noc.nodes(); ++n)
             if (rc.rtl_at(n)) a.push_back(n);
           return a;
         }()}}},
      {"avg_packet_latency_cycles", s.packet_latency_cycles.avg},
      {"p50_packet_latency_cycles", s.packet_latency_cycles.p50},
      {"p99_packet_latency_cycles", s.packet_latency_cycles.p99},
      {"max_packet_latency_cycles", s.packet_latency_cycles.max},
      {"measured_packets", s.packet_latency_cycles.count},
      {"measured_packets_undelivered", s.measured_packets_undelivered},
      {"accepted_flits_per_node_cycle", s.accepted_flits_per_node_cycle},
      {"offered_flits_per_node_cycle", s.offered_flits_per_node_cycle},
      {"injected_flits", r.injected_flits},
      {"ejected_flits", r.ejected_flits},
      {"simulated_cycles", r.simulated_cycles},
      {"wall_seconds", r.wall_seconds},
      {"simulated_cycles_per_second", r.simulated_cycles_per_second()},
      {"drained", r.drained},
      {"conservation_ok", r.conservation_error.empty()},
      {"stalled", r.stalled},
      {"link_utilisation", links},
      {"router_buffer_occupancy", routers},
  };
}

/// The human-readable summary of one run.
void print_report(std::FILE* rep, const noc::TestbenchConfig& cfg, const noc::TestbenchResult& r,
                  const std::string& traffic, const std::string& router, const std::string& vcd_path, int vcd_node) {
  const noc::NocStats& s = r.stats;
  const std::string label = (cfg.noc.router_kind == noc::RouterKind::kLookahead ? "look-ahead " : "") + router;
  std::fprintf(rep, "nmpsim noc: %dx%d mesh, %s traffic, offered %.4f flits/node/cycle, %d-flit packets, %s routers\n",
               cfg.noc.width, cfg.noc.height, traffic.c_str(), cfg.traffic.injection_rate, cfg.traffic.packet_flits,
               label.c_str());
  std::fprintf(rep, "  packet latency (cycles): avg %.2f  p50 %.0f  p99 %.0f  max %.0f  over %llu packets\n",
               s.packet_latency_cycles.avg, s.packet_latency_cycles.p50, s.packet_latency_cycles.p99,
               s.packet_latency_cycles.max, static_cast<unsigned long long>(s.packet_latency_cycles.count));
  std::fprintf(rep, "  throughput (flits/node/cycle): offered %.4f  accepted %.4f\n", s.offered_flits_per_node_cycle,
               s.accepted_flits_per_node_cycle);
  double max_u = 0.0;
  for (const auto& l : s.links) max_u = std::max(max_u, l.utilisation);
  std::fprintf(rep, "  busiest link utilisation %.3f; flits injected %llu, ejected %llu%s\n", max_u,
               static_cast<unsigned long long>(r.injected_flits), static_cast<unsigned long long>(r.ejected_flits),
               r.drained ? "" : " (not fully drained)");
  std::fprintf(rep, "  simulated %llu cycles in %.3f s = %.0f cycles/s\n",
               static_cast<unsigned long long>(r.simulated_cycles), r.wall_seconds, r.simulated_cycles_per_second());
  if (!vcd_path.empty()) std::fprintf(rep, "  RTL router %d signals written to %s\n", vcd_node, vcd_path.c_str());
  if (s.measured_packets_undelivered && !r.stalled)  // a stall is reported as such
    std::fprintf(rep,
                 "  warning: %llu measured packets were still undelivered after %llu drain cycles "
                 "(offered load beyond saturation); latency covers delivered packets only\n",
                 static_cast<unsigned long long>(s.measured_packets_undelivered),
                 static_cast<unsigned long long>(cfg.max_drain_cycles));
}

/// The command line of `nmpsim noc`: its options and what they set.
struct NocArgs {
  noc::TestbenchConfig cfg;
  std::string mesh = "8x8", traffic = "uniform", json_path, router = "engine", rtl_nodes, vcd_path, router_kind = "vc",
              curve, plot_path;
  int vcd_node = -1;
  long long flit_bytes = cfg.noc.flit_bytes, warmup = 10000, cycles = 100000, drain = 1000000, watchdog = 20000,
            seed = 1;

  void add_to(po::options_description& desc) {
    // clang-format off
    desc.add_options()
      ("help", "show this help")
      ("mesh", po::value(&mesh)->default_value(mesh), "mesh size WxH in routers (1x1 .. 256x256)")
      ("traffic", po::value(&traffic)->default_value(traffic),
       "destination pattern: uniform | transpose (square meshes) | bitcomp | hotspot")
      ("injection-rate", po::value(&cfg.traffic.injection_rate)->default_value(0.1, "0.1"),
       "offered load in flits per node per cycle, in [0, 1]")
      ("packet-flits", po::value(&cfg.traffic.packet_flits)->default_value(4), "flits per packet (head .. tail)")
      ("vcs", po::value(&cfg.noc.vcs)->default_value(cfg.noc.vcs), "virtual channels per input port (1..8)")
      ("buffer-flits", po::value(&cfg.noc.buffer_flits)->default_value(cfg.noc.buffer_flits),
       "buffer depth per virtual channel, in flits")
      ("ni-queues", po::value(&cfg.noc.ni_queues)->default_value(cfg.noc.ni_queues),
       "injection queues per network interface (0 = one per VC; 1 = a single FIFO, head-of-line blocking)")
      ("ni-ports", po::value(&cfg.noc.ni_ports)->default_value(cfg.noc.ni_ports),
       "ports between a router and its network interface, 1..4, each one flit per cycle each way (--router engine or sc)")
      ("router-delay", po::value(&cfg.noc.router_delay_cycles)->default_value(cfg.noc.router_delay_cycles),
       "router pipeline delay in cycles (buffer write to switch traversal)")
      ("link-delay", po::value(&cfg.noc.link_delay_cycles)->default_value(cfg.noc.link_delay_cycles),
       "link latency in cycles")
      ("flit-bytes", po::value(&flit_bytes)->default_value(flit_bytes), "flit width in bytes")
      ("clock-ghz", po::value(&cfg.noc.clock_ghz)->default_value(cfg.noc.clock_ghz, "1.0"), "router clock in GHz")
      ("warmup-cycles", po::value(&warmup)->default_value(warmup),
       "cycles simulated before measuring (cycles)")
      ("cycles", po::value(&cycles)->default_value(cycles), "measured cycles")
      ("max-drain-cycles", po::value(&drain)->default_value(drain),
       "after the measured window, cycles allowed for delivering the packets created in it")
      ("watchdog-cycles", po::value(&watchdog)->default_value(watchdog),
       "report a stall if no flit moves for this many cycles while flits are in flight")
      ("hotspot-node", po::value(&cfg.traffic.hotspot_node)->default_value(-1),
       "hotspot traffic: destination node id (-1 = node nearest the centre)")
      ("hotspot-fraction", po::value(&cfg.traffic.hotspot_fraction)->default_value(0.2, "0.2"),
       "hotspot traffic: share of packets sent to the hotspot node")
      ("seed", po::value(&seed)->default_value(seed), "random seed (same seed, same results)")
      ("router-kind", po::value(&router_kind)->default_value(router_kind),
       "router micro-architecture: vc (input-buffered, virtual channels, credits) | lookahead (no VCs, "
       "look-ahead routing, single-cycle bypass, valid/stop handshakes; no engine model: sc by default)")
      ("router", po::value(&router)->default_value(router),
       "router implementation: engine (built-in C++ routers, fastest, skips idle cycles) | sc (pin-level "
       "SystemC router modules) | rtl[:NAME] (Verilated SystemVerilog routers: nmp for vc, la for lookahead, or "
       "one registered in rtl_checks/routers.cmake: la_vr, la_credit, yours) | mixed[:NAME] (RTL at --rtl-nodes, "
       "SystemC elsewhere). engine, sc, nmp and la give identical results for their router kind.")
      ("rtl-nodes", po::value(&rtl_nodes),
       "--router mixed: comma-separated node ids (id = y * width + x) that get the RTL router "
       "(default: a checkerboard, the nodes with x + y even)")
      ("vcd", po::value(&vcd_path), "--router rtl|mixed: dump every signal of one RTL router to this VCD file")
      ("vcd-node", po::value(&vcd_node),
       "--vcd: the node whose RTL router is dumped (default: the node nearest the mesh centre)")
      ("curve", po::value(&curve),
       "latency/throughput curve: run at each offered load FROM:TO:STEP or R1,R2,... (instead of "
       "--injection-rate), the chosen --router beside its model (engine for vc, sc for lookahead), "
       "one process per run, as many at once as cores")
      ("plot", po::value(&plot_path), "--curve: also draw the curves to this PNG (gnuplot)")
      ("json", po::value(&json_path), "also write the results as JSON to this file")
      ("quiet", "print nothing but errors");
    // clang-format on
  }
  /// Checks the values and fills `cfg` (throws InputError naming the option).
  void apply(const po::variables_map& vm) {
    parse_mesh(mesh, cfg.noc.width, cfg.noc.height);
    cfg.noc.flit_bytes = static_cast<uint32_t>(checked_count(flit_bytes, "flit-bytes", 1, 1 << 20));
    cfg.warmup_cycles = checked_count(warmup, "warmup-cycles", 0);
    cfg.measure_cycles = checked_count(cycles, "cycles", 1);
    cfg.max_drain_cycles = checked_count(drain, "max-drain-cycles", 0);
    cfg.noc.watchdog_cycles = checked_count(watchdog, "watchdog-cycles", 1);
    cfg.traffic.seed = checked_count(seed, "seed", 0, std::numeric_limits<long long>::max());
    cfg.traffic.pattern = noc::parse_traffic_pattern(traffic);
    settle_noc_router(router_kind, !vm["router-kind"].defaulted(), !vm["vcs"].defaulted(), !vm["router"].defaulted(),
                      router, cfg.noc);
    cfg.validate();
  }
};

/// One run of the testbench: the report on `rep`, the VCD and JSON outputs (both or neither), and the
/// exit code of its checks.
int run_single(const NocArgs& a, const RouterChoice& rc, bool quiet, std::FILE* rep) {
  const noc::TestbenchConfig& cfg = a.cfg;
  base::OutputFiles out;  // the VCD and the JSON, both or neither
  // The VCD grows while the simulation runs: it is staged and put in place when the run is complete.
  const std::string vcd_tmp = a.vcd_path.empty() ? "" : out.stage(a.vcd_path, "--vcd");
  const noc::TestbenchResult r = run_noc_testbench(cfg, rc, vcd_tmp, a.vcd_node);
  if (!quiet) {
    print_report(rep, cfg, r, a.traffic, a.router, a.vcd_path, a.vcd_node);
    if (const std::string note = adapter_note(rc, cfg.noc); !note.empty()) std::fprintf(rep, "  %s\n", note.c_str());
  }
  if (!a.json_path.empty()) out.write(a.json_path, result_json(cfg, r, rc).dump(2) + "\n", "--json");
  out.commit();
  // The first cause first, on one line: a router's own error, then a failed check (which the stall
  // report carries when the mesh stalled after it), then the stall.
  std::string failure = r.router_error.empty() ? "" : "router error: " + r.router_error;
  const std::string check = r.stalled                      ? r.stall_report
                            : r.conservation_error.empty() ? ""
                                                           : "noc: check failed: " + r.conservation_error;
  if (!check.empty()) failure += (failure.empty() ? "" : "; ") + check;
  if (failure.empty()) return kExitOk;
  std::fprintf(stderr, "nmpsim noc: model failure: %s\n", base::one_line(failure).c_str());
  return kExitCheckFailed;
}

}  // namespace

int cmd_noc(const std::vector<std::string>& args) {
  NocArgs a;
  po::options_description desc(
      "nmpsim noc: synthetic-traffic testbench of the XY-routed wormhole mesh\n\n"
      "Usage: nmpsim noc [options]\n\nOptions");
  a.add_to(desc);
  const po::variables_map vm = parse_options(args, desc);
  if (vm.count("help")) {
    std::cout << desc << "\nExit codes: 0 ok, 1 stall or conservation failure, 2 bad input.\n";
    return kExitOk;
  }
  a.apply(vm);

  noc::NocConfig checked = a.cfg.noc;  // the synthetic packets must fit a router's length field too
  checked.max_packet_flits = std::max(checked.max_packet_flits, a.cfg.traffic.packet_flits);
  const RouterChoice rc = router_choice(vm, checked, a.router, a.rtl_nodes, a.vcd_node);
  if (vm.count("plot") && !vm.count("curve")) throw UsageError("--plot needs --curve");
  if (a.cfg.traffic.pattern != noc::TrafficPattern::kHotspot)
    for (const char* k : {"hotspot-node", "hotspot-fraction"})
      if (!vm[k].defaulted()) throw UsageError(std::string("--") + k + " needs --traffic hotspot");
  if (!a.json_path.empty()) base::OutputFiles::check_file(a.json_path, "--json");
  if (!a.plot_path.empty()) base::OutputFiles::check_file(a.plot_path, "--plot");
  if (!a.vcd_path.empty()) base::OutputFiles::check_file(a.vcd_path, "--vcd");
  base::OutputFiles::check_distinct({{"--vcd", a.vcd_path}, {"--json", a.json_path}, {"--plot", a.plot_path}});
  // With an output on standard output, the report goes to standard error.
  std::FILE* rep = stdout;
  for (const std::string* p : {&a.json_path, &a.plot_path, &a.vcd_path})
    if (!p->empty() && base::OutputFiles::is_stdout(*p)) rep = stderr;
  if (vm.count("curve")) {
    if (!vm["injection-rate"].defaulted()) throw UsageError("--curve replaces --injection-rate: give one of them");
    if (vm.count("vcd")) throw UsageError("--vcd dumps one run: it does not go with --curve");
    const std::vector<double> rates = parse_curve_rates(a.curve);
    if (!vm.count("quiet"))
      std::fprintf(rep, "nmpsim noc --curve: %dx%d mesh, %s traffic, %d-flit packets, %zu loads\n", a.cfg.noc.width,
                   a.cfg.noc.height, a.traffic.c_str(), a.cfg.traffic.packet_flits, rates.size());
    return run_noc_curve(a.cfg, rc, rates, CurveOutputs{a.json_path, a.plot_path, vm.count("quiet") > 0, rep});
  }

  return run_single(a, rc, vm.count("quiet") > 0, rep);
}

}  // namespace nmpsim::apps
