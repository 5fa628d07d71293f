// A layer schedule: the work of one decode step through one layer as typed operations with explicit
// dependencies, each labelled with a phase and a stream. Both back ends execute the same schedule:
// the SystemC firmware (cycle fidelity, firmware/cycle_executor.h) and the analytical flow model
// (flow fidelity, flow/flow_executor.h). docs/MODEL.md "Layer schedules" states the semantics.
//
// Operations:
//  - compute: a node runs `flops` FLOPs while streaming `bytes` of weights from its own DRAM;
//  - transfer: `bytes` from one node to another over the NoC; done when the destination has them;
//  - stream: `bytes` of weights read from the source's DRAM and pipelined in chunks along a chain of
//    nodes, each storing them in its DRAM (a copy is a chain of one); done when the last chunk is stored;
//  - collective: a ring all-gather or reduce-scatter, expanded into transfers and reductions by exactly
//    one function (expand_collective) when it is added; its join op stands for the whole collective;
//  - join: no work; done when its dependencies are (phase barriers, collectives);
//  - external: stands for an op of an earlier layer's schedule (OpRef); done when that op is.
// Streams: stream 0 is the foreground; a layer ends when its foreground ops are done. Streams >= 1 are
// background: they overlap the foreground, may outlive the layer, and count in no phase time unless a
// foreground op waits for them.
#pragma once

// GCC 12 warns about a memcpy inside Boost's small_vector that cannot overread (a known false positive
// of -Wstringop-overread on inlined library code); the warning is silenced for that header only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
#include <boost/container/small_vector.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include <cstdint>
#include <string>
#include <vector>

#include "nmpsim/mapping/modes.h"
#include "nmpsim/mapping/node_id.h"

namespace nmpsim::mapping {

using OpId = int;
/// An op's dependencies: most ops have one or two, so they live inline (no allocation).
using DepList = boost::container::small_vector<OpId, 2>;
inline constexpr int kForeground = 0;

enum class OpKind : uint8_t { kCompute, kTransfer, kStream, kJoin, kExternal };

/// How a phase's time is reported: TBT = attention + allreduce + moe_compute + moe_comm + other.
enum class PhaseFamily : uint8_t { kAttention, kAllReduce, kMoeCompute, kMoeComm, kOther };
inline constexpr int kNumPhaseFamilies = 5;
const char* family_name(PhaseFamily f);

struct Phase {
  std::string name;  ///< e.g. "dispatch"; reported as "<name>_us"
  PhaseFamily family = PhaseFamily::kOther;
  int stream = kForeground;
  bool node_balance = false;  ///< report per-node busy time and imbalance (the experts phase)
};

/// A reference to an op of any schedule a back end has executed (schedules are numbered from 1).
struct OpRef {
  uint64_t schedule = 0;
  OpId op = -1;
};
/// A hashable key of an OpRef (schedule serial in the high 32 bits, op id in the low 32).
inline uint64_t op_key(OpRef r) { return (r.schedule << 32) | static_cast<uint32_t>(r.op); }

enum class CollectiveKind : uint8_t { kRingAllGather, kRingReduceScatter };
const char* collective_name(CollectiveKind k);

struct Collective {
  CollectiveKind kind = CollectiveKind::kRingAllGather;
  std::vector<PhysicalNode> ring;           ///< members in ring order; member p sends to member p + 1
  std::vector<double> chunk_bytes;          ///< per ring position: the bytes of that member's chunk
  double element_bytes = 2;                 ///< reduce-scatter: one add per element received
  ReduceMode reduce = ReduceMode::kKernel;  ///< reduce-scatter: the adds as commands, or fused (no start-up)
  /// Half of every chunk round the ring order and half round the reverse order, at once (rings of 3 or
  /// more; docs/MODEL.md "Layer schedules").
  bool bidirectional = false;
};

struct Op {
  OpKind kind = OpKind::kJoin;
  int phase = 0;
  int stream = kForeground;
  PhysicalNode node;         ///< compute: where it runs; transfer, stream: the source
  PhysicalNode peer;         ///< transfer: the destination
  double flops = 0;          ///< compute
  double bytes = 0;          ///< compute: DRAM bytes streamed; transfer, stream: payload bytes
  bool own_weights = false;  ///< compute: weights stored at their own DRAM addresses (experts)
  bool startup = true;       ///< compute: pays the node's start-up (false: a fused reduction, a kernel's later piece)
  bool reducer = false;      ///< compute: a fused reduction, on the node's reducer beside its compute engine
  uint8_t micro_batch = 0;   ///< the micro-batch whose chain of phases the op belongs to (reports, timeline)
  int chain = -1;            ///< stream: index into LayerSchedule::chains()
  double chunk_bytes = 0;    ///< stream: chunk size on the NoC
  int collective = -1;       ///< join of a collective: index into LayerSchedule::collectives()
  OpRef external;            ///< external: the op it stands for
  DepList deps;
};

class LayerSchedule {
 public:
  /// The phase called `name` (added on first use; family and stream must then agree).
  int phase(const std::string& name, PhaseFamily family, int stream = kForeground, bool node_balance = false);
  int find_phase(const std::string& name) const;  ///< -1 if absent

  OpId compute(int phase, PhysicalNode node, double flops, double dram_bytes, DepList deps = {},
               bool own_weights = false, bool startup = true);
  /// The sum of what arrived: a compute command with the start-up (ReduceMode::kKernel), or on the
  /// node's reducer, without one, beside its compute (kFused; docs/MODEL.md "Reductions and grouped experts").
  OpId reduction(int phase, PhysicalNode node, double flops, DepList deps, ReduceMode mode);
  OpId transfer(int phase, PhysicalNode src, PhysicalNode dst, double bytes, DepList deps = {});
  OpId stream(int phase, PhysicalNode src, std::vector<PhysicalNode> chain, double bytes, double chunk_bytes,
              DepList deps = {});
  /// Adds the collective, expanded at once (expand_collective); returns its join.
  OpId collective(int phase, Collective c, DepList deps = {});
  OpId join(int phase, DepList deps);
  OpId external(int phase, OpRef ref);
  /// Makes `op` wait for `dep` too (only before execution starts; the executor checks for cycles).
  void add_dep(OpId op, OpId dep);
  /// Marks ops [first, size()) as belonging to micro-batch `mb`.
  void set_micro_batch(OpId first, int mb);

  const std::vector<Op>& ops() const { return ops_; }
  const Op& op(OpId id) const { return ops_[static_cast<size_t>(id)]; }
  int size() const { return static_cast<int>(ops_.size()); }
  const std::vector<Phase>& phases() const { return phases_; }
  const std::vector<std::vector<PhysicalNode>>& chains() const { return chains_; }
  const std::vector<Collective>& collectives() const { return collectives_; }
  /// Ops of `phase` in id order (joins included).
  std::vector<OpId> ops_of(int phase) const;

  /// Throws std::logic_error on a malformed schedule: a node outside [0, nodes), a dependency that does
  /// not exist, a dependency cycle, compute on a background stream (fused adds on the reducer excepted), a
  /// phase on two streams.
  void validate(int nodes) const;

 private:
  OpId add(Op op);
  std::vector<Phase> phases_;
  std::vector<Op> ops_;
  std::vector<std::vector<PhysicalNode>> chains_;
  std::vector<Collective> collectives_;
};

/// The one function that turns a collective into transfers and reductions (docs/MODEL.md "Collectives"):
/// ring all-gather: g - 1 steps; in step s member p forwards chunk (p - s) to p + 1, once it has received
/// it (step s - 1 from p - 1). Ring reduce-scatter: in step s member p sends its partial of chunk
/// (p - s - 1) to p + 1, then adds the partial of chunk (p - s - 2) it receives to its own (a compute of
/// chunk / element_bytes FLOPs); its next send waits for that add. Returns the ops it added (the last
/// step's), which the caller joins. A ring of one member adds nothing.
DepList expand_collective(LayerSchedule& s, int phase, const Collective& c, const DepList& deps);

}  // namespace nmpsim::mapping
