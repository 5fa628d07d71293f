// The TLM-2.0 network edge (hw::NetworkPort) on a built 4x4 NMP chip: a user's initiator writes and
// reads any bank across the NoC and gets its data back, the base protocol's error responses, the
// latency against the path's lower bound, and the read bandwidth against the link's.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <functional>
#include <systemc>
#include <vector>

#include "nmpsim/firmware/cycle_executor.h"
#include "nmpsim/hw/system.h"

namespace nmpsim {
namespace {

/// A user's initiator: runs `body` in an SC_THREAD; access() is one b_transport.
struct Generator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Generator> socket;
  std::function<void(Generator&)> body;
  SC_HAS_PROCESS(Generator);
  Generator(sc_core::sc_module_name n, std::function<void(Generator&)> b) : sc_module(n), socket("socket"), body(b) {
    SC_THREAD(run);
  }
  void run() { body(*this); }
  tlm::tlm_response_status access(tlm::tlm_command cmd, uint64_t addr, unsigned char* data, unsigned len,
                                  bool byte_enables = false) {
    tlm::tlm_generic_payload p;
    unsigned char be[4] = {0xff, 0xff, 0xff, 0xff};
    p.set_command(cmd);
    p.set_address(addr);
    p.set_data_ptr(data);
    p.set_data_length(len);
    p.set_streaming_width(len);
    p.set_byte_enable_ptr(byte_enables ? be : nullptr);
    p.set_byte_enable_length(byte_enables ? 4 : 0);
    p.set_dmi_allowed(false);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(p, delay);
    return p.get_response_status();
  }
};

TEST(NetworkPort, WritesAndReadsAnyBankAcrossTheNocAndReportsProtocolErrors) {
  const hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");
  hw::System sys("sys", spec);
  std::vector<unsigned char> out(256), back(256, 0xaa), zeros(64, 0xaa), local(64);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(i * 7 + 1);
  double write_ns = 0;
  uint64_t messages_local = 0;
  tlm::tlm_response_status st[6];
  Generator at0("gen0", [&](Generator& g) {
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    st[0] = g.access(tlm::TLM_WRITE_COMMAND, hw::global_address(15, 4096), out.data(), 256);
    write_ns = (sc_core::sc_time_stamp() - t0).to_seconds() * 1e9;
    st[1] = g.access(tlm::TLM_READ_COMMAND, hw::global_address(15, 1 << 20), zeros.data(), 64);  // never written
    st[2] = g.access(tlm::TLM_READ_COMMAND, hw::global_address(16, 0), local.data(), 64);        // no node 16
    st[3] = g.access(tlm::TLM_READ_COMMAND, hw::global_address(3, spec.memory.capacity_bytes - 8), local.data(), 64);
    st[4] = g.access(tlm::TLM_READ_COMMAND, hw::global_address(3, 0), local.data(), 4, /*byte_enables=*/true);
    const uint64_t before = sys.mesh().network().delivered_messages();
    st[5] = g.access(tlm::TLM_WRITE_COMMAND, hw::global_address(0, 64), out.data(), 64);  // its own bank
    messages_local = sys.mesh().network().delivered_messages() - before;
  });
  at0.socket.bind(sys.port(0).target);
  Generator at5("gen5", [&](Generator& g) {
    sc_core::wait(10, sc_core::SC_US);  // after node 0's write
    EXPECT_EQ(g.access(tlm::TLM_READ_COMMAND, hw::global_address(15, 4096), back.data(), 256), tlm::TLM_OK_RESPONSE);
  });
  at5.socket.bind(sys.port(5).target);
  sc_core::sc_start(20, sc_core::SC_US);
  EXPECT_EQ(st[0], tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(back, out);  // written through port 0, read through port 5
  EXPECT_EQ(st[1], tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(zeros, std::vector<unsigned char>(64, 0));
  EXPECT_EQ(st[2], tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(st[3], tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(st[4], tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  EXPECT_EQ(st[5], tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(messages_local, 0u);  // the local bank needs no NoC message
  // Lower bound of the write: node 0 -> 15 is 6 hops each way (1 ns links, 2-cycle routers at 1 GHz),
  // plus the first DRAM access (tRCD + tCL).
  const double hop_ns = 1.0 + 2.0;
  EXPECT_GT(write_ns, 2 * 6 * hop_ns + spec.memory.t_rcd_ns + spec.memory.t_cl_ns);
  EXPECT_LT(write_ns, 1000.0);
  EXPECT_EQ(sys.port(15).stats().served, 3u);  // the write, the unwritten read, node 5's read
  EXPECT_EQ(sys.port(0).stats().bytes_written, 256u + 64u);
}

TEST(NetworkPort, ReadBandwidthStaysBelowTheLinkBandwidth) {
  const hw::HardwareSpec spec = hw::preset("nmp-4x4-5t50g");  // 50 GB/s links
  hw::System sys("sys", spec);
  constexpr unsigned kLen = 4096, kCount = 64;
  double seconds = 0;
  Generator g("gen", [&](Generator& gen) {
    std::vector<unsigned char> buf(kLen);
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    for (unsigned i = 0; i < kCount; ++i)
      EXPECT_EQ(gen.access(tlm::TLM_READ_COMMAND, hw::global_address(3, i * kLen), buf.data(), kLen),
                tlm::TLM_OK_RESPONSE);
    seconds = (sc_core::sc_time_stamp() - t0).to_seconds();
  });
  g.socket.bind(sys.port(0).target);
  sc_core::sc_start(1, sc_core::SC_MS);
  ASSERT_GT(seconds, 0);
  const double gbytes_per_s = kLen * double(kCount) / seconds / 1e9;
  EXPECT_LT(gbytes_per_s, spec.topology.links[0].gbytes_per_s);  // one transaction at a time, one path
  EXPECT_GT(gbytes_per_s, 0.2 * spec.topology.links[0].gbytes_per_s);
}

/// A user's memory-mapped device: 1 KiB of registers, 100 ns per access; offsets beyond are errors.
struct UserDevice : sc_core::sc_module {
  tlm_utils::simple_target_socket<UserDevice> socket;
  std::vector<unsigned char> mem = std::vector<unsigned char>(1024, 0);
  int accesses = 0;
  explicit UserDevice(sc_core::sc_module_name n) : sc_module(n), socket("socket") {
    socket.register_b_transport(this, &UserDevice::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    ++accesses;
    delay += sc_core::sc_time(100, sc_core::SC_NS);
    if (p.get_address() + p.get_data_length() > mem.size()) {
      p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    unsigned char* at = mem.data() + p.get_address();
    if (p.is_write())
      std::copy(p.get_data_ptr(), p.get_data_ptr() + p.get_data_length(), at);
    else
      std::copy(at, at + p.get_data_length(), p.get_data_ptr());
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

TEST(NetworkPort, AUserTargetBesideAPeAnswersTheRequestsToItsNode) {
  hw::System sys("sys", hw::preset("nmp-4x4-5t50g"));
  UserDevice dev("dev");
  sys.port(9).device.bind(dev.socket);
  std::vector<unsigned char> out = {1, 2, 3, 4, 5, 6, 7, 8}, back(8, 0);
  tlm::tlm_response_status st[3];
  double read_ns = 0;
  Generator g("gen", [&](Generator& gen) {
    st[0] = gen.access(tlm::TLM_WRITE_COMMAND, hw::global_address(9, 16), out.data(), 8);
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    st[1] = gen.access(tlm::TLM_READ_COMMAND, hw::global_address(9, 16), back.data(), 8);
    read_ns = (sc_core::sc_time_stamp() - t0).to_seconds() * 1e9;
    st[2] = gen.access(tlm::TLM_READ_COMMAND, hw::global_address(9, 2048), back.data(), 8);  // beyond its registers
  });
  g.socket.bind(sys.port(0).target);
  sc_core::sc_start(10, sc_core::SC_US);
  EXPECT_EQ(st[0], tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(st[1], tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(st[2], tlm::TLM_ADDRESS_ERROR_RESPONSE);  // the device's own status travels back
  EXPECT_EQ(back, out);
  EXPECT_TRUE(std::equal(out.begin(), out.end(), dev.mem.begin() + 16));  // in the device, not the DRAM
  EXPECT_EQ(dev.accesses, 3);
  EXPECT_EQ(sys.dram(9).stats().reads + sys.dram(9).stats().writes, 0u);
  // Node 0 -> 9 is 2 hops each way (3 ns each) plus the device's 100 ns.
  EXPECT_GT(read_ns, 100.0 + 4 * 3.0);
  EXPECT_LT(read_ns, 300.0);
}

TEST(NetworkPort, TheRuntimeDrivesAMeshThatContainsUserModules) {
  // A user's initiator at node 0 and device at node 9, while the firmware executes a layer schedule.
  hw::System sys("sys", hw::preset("nmp-4x4-5t50g"));
  UserDevice dev("dev");
  sys.port(9).device.bind(dev.socket);
  std::vector<unsigned char> out(64, 0x5a), back(64, 0);
  bool user_done = false;
  Generator g("gen", [&](Generator& gen) {
    for (int i = 0; i < 8; ++i) {
      EXPECT_EQ(gen.access(tlm::TLM_WRITE_COMMAND, hw::global_address(9, 0), out.data(), 64), tlm::TLM_OK_RESPONSE);
      EXPECT_EQ(gen.access(tlm::TLM_READ_COMMAND, hw::global_address(9, 0), back.data(), 64), tlm::TLM_OK_RESPONSE);
    }
    user_done = true;
  });
  g.socket.bind(sys.port(0).target);
  firmware::CycleExecutor ex(sys);
  auto s = std::make_shared<mapping::LayerSchedule>();
  const int ph = s->phase("send", mapping::PhaseFamily::kMoeComm);
  const mapping::OpId t = s->transfer(ph, mapping::PhysicalNode(0), mapping::PhysicalNode(15), 1 << 16);
  const mapping::OpId c = s->compute(ph, mapping::PhysicalNode(9), 1e6, 1 << 20, {t});
  const uint64_t serial = ex.execute(s);
  EXPECT_TRUE(ex.tracker().done(mapping::OpRef{serial, c}));
  sc_core::sc_start(20, sc_core::SC_US);  // let the user's thread finish if the schedule ended first
  EXPECT_TRUE(user_done);
  EXPECT_EQ(back, out);
  EXPECT_EQ(dev.accesses, 16);
}

TEST(NetworkPort, AUserModuleInPlaceOfAPe) {
  // Node 5 is built without a PE; the user's device answers there, the runtime keeps away from it.
  hw::SystemOptions opt;
  opt.without_pe = {5};
  hw::System sys("sys", hw::preset("nmp-4x4-5t50g"), opt);
  EXPECT_FALSE(sys.has_pe(5));
  EXPECT_TRUE(sys.has_pe(4));
  EXPECT_THROW(sys.pe(5), std::logic_error);
  UserDevice dev("dev");
  sys.port(5).device.bind(dev.socket);
  std::vector<unsigned char> out(16, 0x33), back(16, 0);
  Generator g("gen", [&](Generator& gen) {
    EXPECT_EQ(gen.access(tlm::TLM_WRITE_COMMAND, hw::global_address(5, 0), out.data(), 16), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(gen.access(tlm::TLM_READ_COMMAND, hw::global_address(5, 0), back.data(), 16), tlm::TLM_OK_RESPONSE);
  });
  g.socket.bind(sys.port(0).target);
  firmware::CycleExecutor ex(sys);
  auto ok = std::make_shared<mapping::LayerSchedule>();
  const int ph = ok->phase("send", mapping::PhaseFamily::kMoeComm);
  ok->transfer(ph, mapping::PhysicalNode(0), mapping::PhysicalNode(15), 4096);  // XY through node 1-3, 7, 11
  ex.execute(ok);
  auto bad = std::make_shared<mapping::LayerSchedule>();
  bad->compute(bad->phase("experts", mapping::PhaseFamily::kMoeCompute), mapping::PhysicalNode(5), 1e6, 4096);
  EXPECT_THROW(ex.execute(bad), std::invalid_argument);
  sc_core::sc_start(10, sc_core::SC_US);
  EXPECT_EQ(back, out);
  EXPECT_EQ(dev.accesses, 2);
}

}  // namespace
}  // namespace nmpsim
