// A processing element: compute engine, DMA to its own DRAM, a NoC port and a command queue.
//
// Compute: a GEMM/GEMV of F FLOPs streaming B weight bytes from the local DRAM takes
//   startup + max(F / peak_flops, time the DMA needs to stream B bytes through the DRAM model).
// Send is posted (returns when handed to the network interface); WaitSends blocks until every
// posted send has been delivered; Recv blocks until `count` messages with a tag have arrived.
// CopyWeights reads the local DRAM in chunks, sends each chunk over the NoC, the receiving PE
// writes it into its DRAM and acknowledges with a one-flit message; the command ends at the last
// acknowledgement. Reduce is an element-wise add of two operands held on chip.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <systemc>
#include <unordered_map>
#include <vector>

#include "nmpsim/noc/mesh_module.h"
#include "nmpsim/pe/command.h"
#include "nmpsim/pe/dma.h"
#include "nmpsim/pe/pe_spec.h"

namespace nmpsim::pe {

/// Tags carry a message kind in their top 8 bits; user tags must stay below 2^56.
/// kTracked: a message whose delivery someone else watches (the firmware's schedule transfers); the PE ignores it.
enum class MessageKind : uint8_t {
  kData = 0,
  kCopyChunk = 1,
  kCopyAck = 2,
  kBcastChunk = 3,
  kBcastAck = 4,
  kTracked = 5,
  kPortRequest = 6,  ///< hw::NetworkPort's messages: not the PE's
  kPortResponse = 7,
};

/// Broadcasts in flight, shared by the PEs of a system: who forwards each chunk to whom.
struct BroadcastRegistry {
  struct Entry {
    int source = -1;
    std::vector<int> chain;
    bool done = false;
    bool cancelled = false;  ///< send no further chunks (the ones on the way still land)
  };
  std::unordered_map<uint64_t, Entry> entries;  ///< by broadcast tag
};
inline constexpr uint64_t make_tag(MessageKind k, uint64_t low) {
  return (uint64_t{static_cast<uint8_t>(k)} << 56) | low;
}
inline constexpr MessageKind tag_kind(uint64_t tag) { return static_cast<MessageKind>(tag >> 56); }
inline constexpr uint64_t tag_low(uint64_t tag) { return tag & ((uint64_t{1} << 56) - 1); }

class ProcessingElement : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(ProcessingElement);
  ProcessingElement(sc_core::sc_module_name name, int node, const PeSpec& spec, noc::MeshModule& mesh,
                    uint64_t dram_capacity_bytes);

  Dma dma;  ///< bind dma.socket to this PE's DRAM target

  int node() const { return node_; }
  const PeSpec& spec() const { return spec_; }
  void submit(Command c);
  /// A second command queue that runs concurrently with the first (weight pre-broadcasts), sharing
  /// the DMA and the NoC port. Phase barriers wait for the foreground queue only.
  void submit_background(Command c);
  /// The reducer: a unit beside the compute engine that sums what arrives (fused reductions), one
  /// compute command at a time at the PE's FLOP rate, without a start-up or DRAM traffic, concurrently
  /// with the foreground queue (docs/MODEL.md "Reductions and grouped experts"). Its commands are
  /// foreground work: idle() waits for them.
  void submit_reducer(Command c);
  bool idle() const { return queue_.empty() && !running_ && red_queue_.empty() && !red_running_; }
  bool background_idle() const { return bg_queue_.empty() && !bg_running_; }
  void set_broadcast_registry(BroadcastRegistry* r) { registry_ = r; }
  /// Notified whenever the PE runs out of commands.
  const sc_core::sc_event& idle_event() const { return idle_event_; }
  const std::vector<CommandRecord>& log() const { return log_; }
  void clear_log() { log_.clear(); }
  /// Whether finished commands are recorded in log() (on by default).
  void set_logging(bool on) { logging_ = on; }

  /// Called by the system for every delivered NoC message this PE sent or receives.
  void on_delivery(const noc::Delivery& d);

  double flops_done() const { return flops_; }
  sc_core::sc_time compute_busy_time() const { return compute_busy_; }
  double compute_energy_pj() const { return flops_ * spec_.pj_per_flop; }
  /// High while a compute or reduce command runs on the compute engine (for VCD tracing); the reducer's
  /// fused adds (submit_reducer) do not raise it.
  const sc_core::sc_signal<bool>& busy_signal() const { return busy_; }

 private:
  void run();
  void run_background();
  void run_reducer();
  /// One command queue's thread: takes its commands in order and runs `body` on each.
  void serve(std::deque<Command>& queue, bool& running, sc_core::sc_event& more,
             void (ProcessingElement::*body)(const Command&));
  /// A fused reduction on the reducer: its FLOPs at the PE's rate.
  void reduce(const Command& c);
  void execute(const Command& c);
  void do_broadcast(const Command& c);
  /// DRAM address for `bytes` of received weights (a staging area that wraps within capacity).
  uint64_t reserve_staging(uint64_t bytes);
  void do_compute(double flops, uint64_t bytes, uint64_t address, bool startup = true);
  void do_copy(const Command& c);

  int node_;
  PeSpec spec_;
  noc::MeshModule& mesh_;
  uint64_t dram_capacity_;
  std::deque<Command> queue_;
  bool running_ = false;
  std::deque<Command> bg_queue_;
  bool bg_running_ = false;
  sc_core::sc_event bg_command_;
  std::deque<Command> red_queue_;
  bool red_running_ = false;
  sc_core::sc_event red_command_;
  BroadcastRegistry* registry_ = nullptr;
  sc_core::sc_event new_command_, idle_event_, inbox_event_, sent_event_, ack_event_;
  std::unordered_map<uint64_t, int> inbox_;  // tag -> messages received and not yet consumed
  uint64_t sends_outstanding_ = 0;
  uint64_t copy_seq_ = 0;
  std::unordered_map<uint64_t, int> acks_;               // copy id -> acknowledgements received
  std::unordered_map<uint64_t, uint32_t> bcast_unsent_;  // broadcast tag -> chunks not yet at the first node
  sc_core::sc_event bcast_sent_event_;
  uint64_t staging_address_ = 0;  // where received weight chunks are written
  std::vector<CommandRecord> log_;
  bool logging_ = true;
  double flops_ = 0;
  sc_core::sc_time compute_busy_;
  sc_core::sc_signal<bool> busy_;
};

}  // namespace nmpsim::pe
