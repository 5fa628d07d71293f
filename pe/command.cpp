#include "nmpsim/pe/command.h"

#include <utility>

namespace nmpsim::pe {

const char* command_kind_name(CommandKind k) {
  switch (k) {
    case CommandKind::kCompute:
      return "compute";
    case CommandKind::kSend:
      return "send";
    case CommandKind::kRecv:
      return "recv";
    case CommandKind::kWaitSends:
      return "wait_sends";
    case CommandKind::kReduce:
      return "reduce";
    case CommandKind::kCopyWeights:
      return "copy_weights";
    case CommandKind::kDelay:
      return "delay";
    case CommandKind::kBroadcast:
      return "broadcast";
  }
  return "?";
}

Command Command::compute(double flops, uint64_t dram_bytes, std::string label, uint64_t address) {
  Command c;
  c.kind = CommandKind::kCompute;
  c.flops = flops;
  c.dram_bytes = dram_bytes;
  c.dram_address = address;
  c.label = std::move(label);
  return c;
}

Command Command::send(int dst, uint64_t bytes, uint64_t tag, std::string label) {
  Command c;
  c.kind = CommandKind::kSend;
  c.peer = dst;
  c.bytes = bytes;
  c.tag = tag;
  c.label = std::move(label);
  return c;
}

Command Command::recv(uint64_t tag, int count, std::string label) {
  Command c;
  c.kind = CommandKind::kRecv;
  c.tag = tag;
  c.count = count;
  c.label = std::move(label);
  return c;
}

Command Command::wait_sends(std::string label) {
  Command c;
  c.kind = CommandKind::kWaitSends;
  c.label = std::move(label);
  return c;
}

Command Command::reduce(uint64_t bytes, std::string label) {
  Command c;
  c.kind = CommandKind::kReduce;
  c.dram_bytes = bytes;
  c.label = std::move(label);
  return c;
}

Command Command::copy_weights(int dst, uint64_t bytes, std::string label, uint64_t address) {
  Command c;
  c.kind = CommandKind::kCopyWeights;
  c.peer = dst;
  c.bytes = bytes;
  c.dram_address = address;
  c.label = std::move(label);
  return c;
}

Command Command::wait_for(const sc_core::sc_time& t, std::string label) {
  Command c;
  c.kind = CommandKind::kDelay;
  c.delay = t;
  c.label = std::move(label);
  return c;
}

}  // namespace nmpsim::pe

namespace nmpsim::pe {

Command Command::broadcast(std::vector<int> chain, uint64_t bytes, uint64_t tag, std::string label) {
  Command c;
  c.kind = CommandKind::kBroadcast;
  c.chain = std::move(chain);
  c.bytes = bytes;
  c.tag = tag;
  c.label = std::move(label);
  return c;
}

}  // namespace nmpsim::pe
