#include "nmpsim/mapping/schedule.h"

#include <algorithm>
#include <stdexcept>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::mapping {

const char* family_name(PhaseFamily f) {
  switch (f) {
    case PhaseFamily::kAttention:
      return "attention";
    case PhaseFamily::kAllReduce:
      return "allreduce";
    case PhaseFamily::kMoeCompute:
      return "moe_compute";
    case PhaseFamily::kMoeComm:
      return "moe_comm";
    case PhaseFamily::kOther:
      return "other";
  }
  return "other";
}

const char* collective_name(CollectiveKind k) {
  return k == CollectiveKind::kRingAllGather ? "ring all-gather" : "ring reduce-scatter";
}

int LayerSchedule::phase(const std::string& name, PhaseFamily family, int stream, bool node_balance) {
  const int found = find_phase(name);
  if (found >= 0) {
    const Phase& p = phases_[static_cast<size_t>(found)];
    if (p.family != family || p.stream != stream)
      throw std::logic_error("schedule: phase '" + name + "' redeclared with another family or stream");
    return found;
  }
  if (!is_valid_name(name)) throw std::logic_error("schedule: bad phase name '" + name + "'");
  phases_.push_back(Phase{name, family, stream, node_balance});
  return static_cast<int>(phases_.size()) - 1;
}

int LayerSchedule::find_phase(const std::string& name) const {
  for (size_t i = 0; i < phases_.size(); ++i)
    if (phases_[i].name == name) return static_cast<int>(i);
  return -1;
}

OpId LayerSchedule::add(Op op) {
  if (op.phase < 0 || op.phase >= static_cast<int>(phases_.size()))
    throw std::logic_error("schedule: op added to an unknown phase");
  op.stream = phases_[static_cast<size_t>(op.phase)].stream;
  ops_.push_back(std::move(op));
  return static_cast<OpId>(ops_.size()) - 1;
}

void LayerSchedule::set_micro_batch(OpId first, int mb) {
  for (size_t i = static_cast<size_t>(std::max(0, first)); i < ops_.size(); ++i)
    ops_[i].micro_batch = static_cast<uint8_t>(mb);
}

OpId LayerSchedule::compute(int phase, PhysicalNode node, double flops, double dram_bytes, DepList deps,
                            bool own_weights, bool startup) {
  Op o;
  o.kind = OpKind::kCompute;
  o.phase = phase;
  o.node = node;
  o.flops = flops;
  o.bytes = dram_bytes;
  o.own_weights = own_weights;
  o.startup = startup;
  o.deps = std::move(deps);
  return add(std::move(o));
}

OpId LayerSchedule::reduction(int phase, PhysicalNode node, double flops, DepList deps, ReduceMode mode) {
  const bool fused = mode == ReduceMode::kFused;
  const OpId id = compute(phase, node, flops, 0.0, std::move(deps), false, !fused);
  ops_[static_cast<size_t>(id)].reducer = fused;
  return id;
}

OpId LayerSchedule::transfer(int phase, PhysicalNode src, PhysicalNode dst, double bytes, DepList deps) {
  Op o;
  o.kind = OpKind::kTransfer;
  o.phase = phase;
  o.node = src;
  o.peer = dst;
  o.bytes = bytes;
  o.deps = std::move(deps);
  return add(std::move(o));
}

OpId LayerSchedule::stream(int phase, PhysicalNode src, std::vector<PhysicalNode> chain, double bytes,
                           double chunk_bytes, DepList deps) {
  Op o;
  o.kind = OpKind::kStream;
  o.phase = phase;
  o.node = src;
  o.bytes = bytes;
  o.chunk_bytes = chunk_bytes;
  o.chain = static_cast<int>(chains_.size());
  o.deps = std::move(deps);
  chains_.push_back(std::move(chain));
  return add(std::move(o));
}

OpId LayerSchedule::collective(int phase, Collective c, DepList deps) {
  collectives_.push_back(std::move(c));
  const int index = static_cast<int>(collectives_.size()) - 1;
  DepList last = expand_collective(*this, phase, collectives_.back(), deps);
  if (last.empty()) last = std::move(deps);  // a one-member ring: the join just passes its inputs on
  const OpId j = join(phase, std::move(last));
  ops_[static_cast<size_t>(j)].collective = index;
  return j;
}

OpId LayerSchedule::join(int phase, DepList deps) {
  Op o;
  o.kind = OpKind::kJoin;
  o.phase = phase;
  o.deps = std::move(deps);
  return add(std::move(o));
}

OpId LayerSchedule::external(int phase, OpRef ref) {
  Op o;
  o.kind = OpKind::kExternal;
  o.phase = phase;
  o.external = ref;
  return add(std::move(o));
}

void LayerSchedule::add_dep(OpId op, OpId dep) { ops_.at(static_cast<size_t>(op)).deps.push_back(dep); }

std::vector<OpId> LayerSchedule::ops_of(int phase) const {
  std::vector<OpId> out;
  for (size_t i = 0; i < ops_.size(); ++i)
    if (ops_[i].phase == phase) out.push_back(static_cast<OpId>(i));
  return out;
}

void LayerSchedule::validate(int nodes) const {
  auto fail = [](size_t i, const std::string& why) {
    throw std::logic_error("schedule: op " + std::to_string(i) + ": " + why);
  };
  auto in_range = [&](PhysicalNode n) { return n.value() >= 0 && n.value() < nodes; };
  const size_t n_ops = ops_.size();
  // Successors in one flat array (offsets per op), for Kahn's algorithm below.
  std::vector<int> indegree(n_ops, 0), first(n_ops + 1, 0);
  for (size_t i = 0; i < n_ops; ++i) {
    const Op& o = ops_[i];
    if ((o.kind == OpKind::kCompute || o.kind == OpKind::kTransfer || o.kind == OpKind::kStream) && !in_range(o.node))
      fail(i, "node " + std::to_string(o.node.value()) + " outside the mesh");
    if (o.kind == OpKind::kTransfer && !in_range(o.peer)) fail(i, "destination outside the mesh");
    if (o.kind == OpKind::kStream)
      for (PhysicalNode c : chains_[static_cast<size_t>(o.chain)])
        if (!in_range(c)) fail(i, "stream chain leaves the mesh");
    if (o.kind == OpKind::kCompute && o.stream != kForeground && !o.reducer)
      fail(i, "compute on a background stream (background streams carry transfers, weight streams and fused adds)");
    if (!(o.bytes >= 0) || !(o.flops >= 0)) fail(i, "negative or NaN bytes or FLOPs");
    for (OpId d : o.deps) {
      if (d < 0 || static_cast<size_t>(d) >= n_ops)
        fail(i, "depends on op " + std::to_string(d) + ", which does not exist");
      ++first[static_cast<size_t>(d) + 1];
    }
    indegree[i] = static_cast<int>(o.deps.size());
  }
  for (size_t i = 0; i < n_ops; ++i) first[i + 1] += first[i];
  std::vector<int> next(static_cast<size_t>(first[n_ops])), fill(first.begin(), first.end() - 1);
  for (size_t i = 0; i < n_ops; ++i)
    for (OpId d : ops_[i].deps) next[static_cast<size_t>(fill[static_cast<size_t>(d)]++)] = static_cast<int>(i);
  // Kahn's algorithm: every op must be reachable in a topological order.
  std::vector<int> ready;
  for (size_t i = 0; i < n_ops; ++i)
    if (indegree[i] == 0) ready.push_back(static_cast<int>(i));
  size_t seen = 0;
  while (!ready.empty()) {
    const int o = ready.back();
    ready.pop_back();
    ++seen;
    for (int k = first[static_cast<size_t>(o)]; k < first[static_cast<size_t>(o) + 1]; ++k)
      if (--indegree[static_cast<size_t>(next[static_cast<size_t>(k)])] == 0)
        ready.push_back(next[static_cast<size_t>(k)]);
  }
  if (seen != n_ops) throw std::logic_error("schedule: dependency cycle");
}

namespace {

/// One direction of a ring collective: `c` round its ring order, every chunk scaled by `share`.
DepList expand_one_way(LayerSchedule& s, int phase, const Collective& c, const DepList& deps, double share) {
  const size_t g = c.ring.size();
  const bool reduce = c.kind == CollectiveKind::kRingReduceScatter;
  // last[p]: the op member p's next send waits for (the previous step's arrival at p, or its add).
  DepList last(g, -1);
  std::vector<OpId> sent(g, -1);
  for (size_t step = 0; step + 1 < g; ++step) {
    for (size_t p = 0; p < g; ++p) {
      const size_t chunk = (p + 2 * g - step - (reduce ? 1 : 0)) % g;
      DepList d = step == 0 ? deps : DepList{last[p]};
      sent[p] = s.transfer(phase, c.ring[p], c.ring[(p + 1) % g], c.chunk_bytes[chunk] * share, std::move(d));
    }
    for (size_t p = 0; p < g; ++p) {
      const OpId arrival = sent[(p + g - 1) % g];  // what p received in this step
      if (reduce) {
        const double received = c.chunk_bytes[(p + 2 * g - step - 2) % g] * share;
        last[p] = s.reduction(phase, c.ring[p], received / c.element_bytes, {arrival}, c.reduce);
      } else {
        last[p] = arrival;
      }
    }
  }
  return last;
}

}  // namespace

DepList expand_collective(LayerSchedule& s, int phase, const Collective& c, const DepList& deps) {
  const size_t g = c.ring.size();
  if (c.chunk_bytes.size() != g) throw std::logic_error("collective: one chunk size per ring member needed");
  if (g < 2) return {};
  if (!c.bidirectional || g < 3) return expand_one_way(s, phase, c, deps, 1.0);
  // Both ways: half of every chunk round the ring order, the other half round the reverse order.
  DepList last = expand_one_way(s, phase, c, deps, 0.5);
  Collective back = c;
  std::reverse(back.ring.begin(), back.ring.end());
  std::reverse(back.chunk_bytes.begin(), back.chunk_bytes.end());
  const DepList other = expand_one_way(s, phase, back, deps, 0.5);
  last.insert(last.end(), other.begin(), other.end());
  return last;
}

}  // namespace nmpsim::mapping
