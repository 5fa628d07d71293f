// The network edge of a node as TLM-2.0 (issue 18): a target socket where a user's initiator sends
// reads and writes to any node's bank across the NoC, and a server that answers the requests that
// reach this node from its DRAM. Addresses are global: node << kNodeShift | offset in the bank.
// A request and its response are real NoC messages (16-byte header, plus the data of a write or a
// read's answer); the bank is accessed through the DRAM's TLM-2.0 AT socket with its timing. Data
// is kept functionally at the network edge (the DRAM model is timing-only): what a user writes
// through any port, a later read through any port returns (unwritten bytes read as zero).
// docs/LIBRARY.md.
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "nmpsim/noc/mesh_module.h"
#include "nmpsim/pe/dma.h"

namespace nmpsim::hw {

inline constexpr int kNodeShift = 40;  ///< a node's bank spans up to 1 TiB of the global address space
inline constexpr uint64_t kPortHeaderBytes = 16;
inline uint64_t global_address(int node, uint64_t offset) { return (uint64_t(node) << kNodeShift) | offset; }

/// Requests in flight between the ports of one system, and the functional contents of every bank.
struct PortDirectory {
  struct Request {
    int src = 0, dst = 0;
    tlm::tlm_command cmd = tlm::TLM_READ_COMMAND;
    uint64_t offset = 0, len = 0;
    std::vector<unsigned char> data;  ///< a write's data, then a read's answer
    bool done = false;
    tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
    sc_core::sc_event* answered = nullptr;
  };
  std::unordered_map<uint64_t, Request> requests;
  uint64_t next_id = 1;
  std::unordered_map<uint64_t, std::vector<unsigned char>> pages;  ///< (node << 28 | page) -> 4 KiB
  void write(int node, uint64_t offset, const unsigned char* src, size_t len);
  void read(int node, uint64_t offset, unsigned char* dst, size_t len) const;
};

class NetworkPort : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(NetworkPort);
  NetworkPort(sc_core::sc_module_name name, int node, int nodes, uint64_t capacity_bytes, uint32_t dma_chunk_bytes,
              noc::MeshModule& mesh, PortDirectory& directory);

  /// Bind users' initiators here (any number; none is fine). b_transport (loosely timed; blocking
  /// until the response arrives), no DMI, no byte enables, streaming width = data length.
  tlm_utils::multi_passthrough_target_socket_optional<NetworkPort> target;
  /// The server's initiator into this node's DRAM (the System binds it).
  pe::Dma dma;
  /// Optional: bind a user's target (b_transport) here and the requests that reach this node go to
  /// it instead of the DRAM (a user's memory or accelerator beside the PE; its address is the
  /// offset, its response status and read data go back to the requester).
  tlm_utils::simple_initiator_socket_optional<NetworkPort> device;

  /// A port message (request or response) that the NoC delivered to this node.
  void on_delivery(const noc::Delivery& d);

  struct Stats {
    uint64_t transactions = 0;  ///< through `target`
    uint64_t served = 0;        ///< requests answered from this node's bank
    uint64_t bytes_read = 0, bytes_written = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  void b_transport(int initiator, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  void server_thread();
  /// The bank access of request `id` is done: store or fetch its data and answer.
  void answer(uint64_t id);
  /// Sends request `id`'s answer back (or wakes the local requester).
  void respond(uint64_t id);

  int node_, nodes_;
  uint64_t capacity_;
  noc::MeshModule& mesh_;
  PortDirectory& dir_;
  std::deque<uint64_t> inbox_;  ///< requests to serve here, in arrival order
  sc_core::sc_event inbox_event_;
  Stats stats_;
};

/// Tags of port messages (pe::MessageKind kPortRequest / kPortResponse with the request id).
bool is_port_message(uint64_t tag);

}  // namespace nmpsim::hw
