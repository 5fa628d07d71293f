// An out-of-tree SystemC testbench: builds the 4x4 HD-MoE NMP chip from nmpsim's presets, attaches a
// traffic generator to node 0's TLM-2.0 network edge, writes and reads blocks in every other node's
// bank across the NoC, and prints the latency and bandwidth it saw. Exit code 0 when every
// transaction succeeded and every read returned what was written.
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdio>
#include <systemc>
#include <vector>

#include "nmpsim/hw/system.h"

namespace {

struct TrafficGenerator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<TrafficGenerator> socket;
  int nodes = 0, errors = 0;
  unsigned block = 4096;
  double write_ns = 0, read_ns = 0, bytes = 0;

  SC_HAS_PROCESS(TrafficGenerator);
  TrafficGenerator(sc_core::sc_module_name name, int n) : sc_module(name), socket("socket"), nodes(n) {
    SC_THREAD(run);
  }

  /// One blocking TLM-2.0 transaction; returns the simulated time it took.
  double transact(tlm::tlm_command cmd, uint64_t address, std::vector<unsigned char>& data) {
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(address);
    p.set_data_ptr(data.data());
    p.set_data_length(static_cast<unsigned>(data.size()));
    p.set_streaming_width(static_cast<unsigned>(data.size()));
    p.set_byte_enable_ptr(nullptr);
    p.set_dmi_allowed(false);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    socket->b_transport(p, delay);
    if (p.is_response_error()) ++errors;
    return (sc_core::sc_time_stamp() - start).to_seconds() * 1e9;
  }

  void run() {
    for (int dst = 1; dst < nodes; ++dst) {
      std::vector<unsigned char> out(block), in(block);
      for (unsigned i = 0; i < block; ++i) out[i] = static_cast<unsigned char>(dst * 31 + i);
      write_ns += transact(tlm::TLM_WRITE_COMMAND, nmpsim::hw::global_address(dst, 0), out);
      read_ns += transact(tlm::TLM_READ_COMMAND, nmpsim::hw::global_address(dst, 0), in);
      if (in != out) ++errors;
      bytes += 2.0 * block;
    }
  }
};

}  // namespace

int sc_main(int, char*[]) {
  const nmpsim::hw::HardwareSpec spec = nmpsim::hw::preset("nmp-4x4-5t50g");
  nmpsim::hw::System chip("chip", spec);
  TrafficGenerator gen("gen", chip.nodes());
  gen.socket.bind(chip.port(0).target);
  sc_core::sc_start(10, sc_core::SC_MS);
  const int transfers = chip.nodes() - 1;
  std::printf("nmpsim testbench: %s, %d nodes; node 0 wrote and read %u bytes in each other node's bank\n",
              spec.name.c_str(), chip.nodes(), gen.block);
  std::printf("  mean write latency %.1f ns, mean read latency %.1f ns, bandwidth %.2f GB/s, errors %d\n",
              gen.write_ns / transfers, gen.read_ns / transfers, gen.bytes / (gen.write_ns + gen.read_ns), gen.errors);
  return gen.errors == 0 ? 0 : 1;
}
