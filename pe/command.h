// Commands a processing element executes in order, and the record each one leaves.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <vector>

namespace nmpsim::pe {

enum class CommandKind { kCompute, kSend, kRecv, kWaitSends, kReduce, kCopyWeights, kDelay, kBroadcast };
const char* command_kind_name(CommandKind k);

struct Command {
  CommandKind kind = CommandKind::kCompute;
  std::string label;        ///< free text for statistics (e.g. "L3.expert5")
  double flops = 0;         ///< kCompute: floating-point operations
  uint64_t dram_bytes = 0;  ///< kCompute: bytes streamed from the local DRAM (weights);
                            ///< kReduce: bytes of each operand
  uint64_t dram_address = 0;
  bool startup = true;             ///< kCompute: pays the start-up (false: an add fused into a receive)
  int peer = -1;                   ///< kSend / kCopyWeights: destination node
  uint64_t bytes = 0;              ///< kSend / kCopyWeights: payload bytes
  uint64_t tag = 0;                ///< kSend / kRecv: message tag (< 2^56)
  int count = 0;                   ///< kRecv: messages to wait for
  sc_core::sc_time delay;          ///< kDelay
  std::vector<int> chain;          ///< kBroadcast: the nodes the weights flow through, in order
  uint64_t chunk_bytes = 0;        ///< kBroadcast: chunk size (0: the PE's copy_chunk_bytes)
  std::function<void()> on_done;   ///< called by the PE's process when the command has finished
  std::function<void()> on_start;  ///< called by the PE's process when it takes the command up

  static Command compute(double flops, uint64_t dram_bytes, std::string label = {}, uint64_t address = 0);
  static Command send(int dst, uint64_t bytes, uint64_t tag, std::string label = {});
  static Command recv(uint64_t tag, int count, std::string label = {});
  static Command wait_sends(std::string label = {});
  static Command reduce(uint64_t bytes, std::string label = {});
  static Command copy_weights(int dst, uint64_t bytes, std::string label = {}, uint64_t address = 0);
  static Command wait_for(const sc_core::sc_time& t, std::string label = {});
  /// Streams `bytes` of local weights along `chain` (chunked, every node forwards and stores);
  /// ends when the last node has stored the last chunk. `tag` identifies the broadcast.
  static Command broadcast(std::vector<int> chain, uint64_t bytes, uint64_t tag, std::string label = {});
};

struct CommandRecord {
  CommandKind kind;
  std::string label;
  sc_core::sc_time start, end;
};

}  // namespace nmpsim::pe
