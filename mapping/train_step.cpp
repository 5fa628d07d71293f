// Training-step quantities and the optimizer's schedule (mapping/train_step.h).
#include "nmpsim/mapping/train_step.h"

namespace nmpsim::mapping {

double forward_flops(const ModelSpec& m, const StepTokens& step) {
  double attention = 0;
  for (const Segment& seg : step.segments) attention += seg.requests * m.attention_flops(seg);
  const double t = step.tokens();
  const double dense = t * 2.0 * double(m.ffn_matrices) * m.hidden * m.dense_intermediate;
  const double moe = t * (2.0 * m.gate_params() + m.top_k * m.expert_flops_per_token() + 2.0 * m.shared_params());
  return m.layers() * attention + m.dense_layers * dense + m.moe_layers * moe;
}

TrainTimes train_times(const StrategyResult& r, int layers) {
  TrainTimes t;
  const size_t want = 2 * static_cast<size_t>(layers) + 1;
  if (r.steps.empty() || layers < 1) return t;
  for (const auto& step : r.steps)
    if (step.size() != want) return TrainTimes{};
  const double steps = static_cast<double>(r.steps.size());
  const int wait = r.find_phase(train_phases::kGradSyncWait), opt = r.find_phase(train_phases::kOptimizer);
  std::vector<int> recompute;
  for (size_t p = 0; p < r.phases.size(); ++p)
    if (r.phases[p].name.rfind(train_phases::kRecomputePrefix, 0) == 0) recompute.push_back(static_cast<int>(p));
  for (const auto& step : r.steps)
    for (size_t i = 0; i < step.size(); ++i) {
      const LayerRecord& rec = step[i];
      if (i < static_cast<size_t>(layers)) {
        t.forward_s += rec.total_s() / steps;
      } else if (i + 1 < want) {
        t.backward_s += rec.total_s() / steps;
        for (int p : recompute) t.recompute_s += rec.phase(static_cast<size_t>(p)) / steps;
      } else {
        // After the wait, the updates and whatever a policy runs after them (e.g. moving weights).
        const double waited = wait >= 0 ? rec.phase(static_cast<size_t>(wait)) : 0.0;
        t.grad_sync_s += waited / steps;
        if (opt >= 0) t.optimizer_s += (rec.total_s() - waited) / steps;
      }
    }
  return t;
}

std::vector<double> node_parameters(const ModelSpec& m, const std::vector<std::vector<std::vector<double>>>& physical,
                                    const Groups& groups) {
  const size_t n = groups.group_of.size();
  std::vector<double> params(n, 0.0);
  const double dense_ffn = double(m.ffn_matrices) * m.hidden * m.dense_intermediate;
  for (size_t v = 0; v < n; ++v) {
    const double g = static_cast<double>(groups.ring[static_cast<size_t>(groups.group_of[v])].size());
    params[v] = m.layers() * m.attention_params() / g + m.dense_layers * dense_ffn / g +
                m.moe_layers * (m.shared_params() / g + m.gate_params());
  }
  for (const auto& layer : physical)
    for (const auto& row : layer)
      for (size_t v = 0; v < n && v < row.size(); ++v) params[v] += row[v] * m.expert_params();
  return params;
}

LayerSchedule build_optimizer_step(const ModelSpec& m, const std::vector<double>& params_per_node,
                                   const std::vector<OpRef>& syncs, std::vector<OpId>* adam) {
  LayerSchedule s;
  const int wait = s.phase(train_phases::kGradSyncWait, PhaseFamily::kAllReduce);
  DepList waits;
  for (const OpRef& r : syncs) waits.push_back(s.external(wait, r));
  const OpId synced = s.join(wait, waits);
  const int ph = s.phase(train_phases::kOptimizer, PhaseFamily::kOther);
  DepList done;
  if (adam) adam->assign(params_per_node.size(), -1);
  for (size_t v = 0; v < params_per_node.size(); ++v)
    if (params_per_node[v] > 0) {
      done.push_back(s.compute(ph, PhysicalNode(static_cast<int>(v)), kAdamFlopsPerParam * params_per_node[v],
                               optimizer_dram_bytes(m) * params_per_node[v], {synced}));
      if (adam) (*adam)[v] = done.back();
    }
  s.join(ph, done.empty() ? DepList{synced} : done);
  return s;
}

}  // namespace nmpsim::mapping
