#include "nmpsim/hw/system.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace nmpsim::hw {

System::System(sc_core::sc_module_name name, const HardwareSpec& spec, const SystemOptions& options)
    : sc_module(name), spec_(spec) {
  spec_.validate(spec_.name);
  mesh_ = std::make_unique<noc::MeshModule>("mesh", spec_.noc_config(), options.pin_routers);
  const int n = nodes();
  drams_.reserve(static_cast<size_t>(n));
  pes_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    drams_.push_back(std::make_unique<dram::DramTarget>(("dram_" + std::to_string(i)).c_str(), spec_.memory));
    const bool skip = std::find(options.without_pe.begin(), options.without_pe.end(), i) != options.without_pe.end();
    if (skip) {
      pes_.push_back(nullptr);
    } else {
      pes_.push_back(std::make_unique<pe::ProcessingElement>(("pe_" + std::to_string(i)).c_str(), i, spec_.compute,
                                                             *mesh_, spec_.memory.capacity_bytes));
      pes_.back()->dma.socket.bind(drams_.back()->socket);
      pes_.back()->set_broadcast_registry(&broadcasts_);
    }
    ports_.push_back(std::make_unique<NetworkPort>(("port_" + std::to_string(i)).c_str(), i, n,
                                                   spec_.memory.capacity_bytes, spec_.compute.dma_chunk_bytes, *mesh_,
                                                   directory_));
    ports_.back()->dma.socket.bind(drams_.back()->socket);
  }
  // Phase barriers: pause the simulation when every foreground queue is idle while background
  // broadcasts still run (otherwise sc_start() simply returns when nothing is left to do).
  SC_METHOD(watch_idle);
  for (auto& p : pes_)
    if (p) sensitive << p->idle_event();
  dont_initialize();
  SC_METHOD(run_firmware);
  sensitive << firmware_event_;
  dont_initialize();
  mesh_->set_delivery_handler([this](const noc::Delivery& d) {
    if (message_log_) message_log_(d);
    if (is_port_message(d.tag)) {
      ports_[static_cast<size_t>(d.dst)]->on_delivery(d);
      if (delivery_observer_) delivery_observer_(d);
      return;
    }
    if (pes_[d.src]) pes_[d.src]->on_delivery(d);
    if (d.dst != d.src && pes_[d.dst]) pes_[d.dst]->on_delivery(d);
    if (delivery_observer_) delivery_observer_(d);
  });
}

System::~System() { finish_vcd(false); }

void System::finish_vcd(bool keep) {
  if (!vcd_) return;
  sc_core::sc_close_vcd_trace_file(vcd_);
  vcd_ = nullptr;
  const std::string written = vcd_partial_ + ".vcd";  // SystemC appends ".vcd"
  if (keep) {
    if (std::rename(written.c_str(), vcd_path_.c_str()) != 0)
      throw SpecError("cannot write VCD file '" + vcd_path_ + "': " + std::strerror(errno));
  } else {
    std::remove(written.c_str());
  }
}

void System::watch_idle() {
  if (pause_when_idle_ && all_idle() && !background_idle()) sc_core::sc_pause();
}

void System::run_firmware() {
  if (firmware_) firmware_();
}

pe::ProcessingElement& System::pe(int node) {
  return const_cast<pe::ProcessingElement&>(std::as_const(*this).pe(node));
}

const pe::ProcessingElement& System::pe(int node) const {
  if (!has_pe(node)) throw std::logic_error("node " + std::to_string(node) + " has no PE (SystemOptions::without_pe)");
  return *pes_[static_cast<size_t>(node)];
}

bool System::background_idle() const {
  for (const auto& p : pes_)
    if (p && !p->background_idle()) return false;
  return true;
}

bool System::all_idle() const {
  for (const auto& p : pes_)
    if (p && !p->idle()) return false;
  return background_idle() ? mesh_->network().idle() : true;
}

void System::enable_vcd(const std::string& path) {
  // SystemC writes "<base>.vcd"; it is written as "<path>.partial.vcd" and renamed by finish_vcd(true).
  vcd_path_ = path;
  vcd_partial_ = path + ".partial";
  const std::string probe = vcd_partial_ + ".vcd";
  std::FILE* f = std::fopen(probe.c_str(), "w");  // SystemC cannot report a file it cannot create
  if (!f) throw SpecError("cannot create VCD file '" + path + "': " + std::strerror(errno));
  std::fclose(f);
  vcd_ = sc_core::sc_create_vcd_trace_file(vcd_partial_.c_str());
  if (!vcd_) throw SpecError("cannot create VCD file '" + path + "'");
  vcd_->set_time_unit(1, sc_core::SC_PS);  // the NoC evaluates cycles at half-period offsets
  const noc::MeshGeometry geo = mesh_->network().geometry();
  for (int i = 0; i < nodes(); ++i)
    if (pes_[i]) sc_core::sc_trace(vcd_, pes_[i]->busy_signal(), "pe" + std::to_string(i) + "_busy");
  link_signals_.resize(static_cast<size_t>(nodes()) * noc::kNumMeshDirs);
  for (int i = 0; i < nodes(); ++i)
    for (int dir = 0; dir < noc::kNumMeshDirs; ++dir) {
      const int to = geo.neighbour(i, dir);
      if (to < 0) continue;
      const std::string nm = "link_" + std::to_string(i) + "_to_" + std::to_string(to) + "_flits";
      auto& sig = link_signals_[static_cast<size_t>(i) * noc::kNumMeshDirs + dir];
      sig = std::make_unique<sc_core::sc_signal<uint32_t>>(nm.c_str());
      sc_core::sc_trace(vcd_, *sig, nm);
    }
  mesh_->network().set_link_observer([this](int from, int dir, const noc::Flit&, uint64_t) {
    auto& sig = *link_signals_[static_cast<size_t>(from) * noc::kNumMeshDirs + dir];
    sig.write(sig.read() + 1);
  });
}

EnergyReport System::energy() const {
  EnergyReport e;
  const noc::Network& net = mesh_->network();
  const noc::MeshGeometry geo = net.geometry();
  const double flit_bits = 8.0 * net.config().flit_bytes;
  for (int i = 0; i < nodes(); ++i) {
    e.dram_pj += drams_[i]->stats().energy_pj();
    e.dram_array_pj += drams_[i]->stats().array_pj;
    e.dram_interface_pj += drams_[i]->stats().interface_pj;
    e.dram_activate_pj += drams_[i]->stats().activate_pj;
    if (pes_[i]) e.compute_pj += pes_[i]->compute_energy_pj();
    for (int dir = 0; dir < noc::kNumMeshDirs; ++dir) {
      const int to = geo.neighbour(i, dir);
      if (to < 0) continue;
      const uint64_t flits = net.router(i).flits_out(dir);
      const int level = spec_.topology.level_of_link(i, to);
      e.noc_flit_hops[level] += flits;
      const double pj =
          static_cast<double>(flits) * flit_bits * spec_.topology.links[static_cast<size_t>(level)].pj_per_bit;
      e.noc_pj += pj;
      e.noc_level_pj[level] += pj;
    }
  }
  return e;
}

}  // namespace nmpsim::hw
