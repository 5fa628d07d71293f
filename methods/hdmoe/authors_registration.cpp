// The authors' accounting as a registry entry: `nmpsim run --accounting hdmoe-authors`.
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/registry.h"
#include "nmpsim/methods/hdmoe/authors_accounting.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

namespace {

nlohmann::json resolve(const nlohmann::json& given, const std::string& where) {
  const JsonFields f(given, where, "");
  const std::string loads = f.string("loads", "expected");
  if (loads != "expected" && loads != "sampled") f.fail("loads", "expected expected or sampled");
  nlohmann::json o = {{"eval_intermediate", f.integer("eval_intermediate", 0, 1 << 24, 0)},
                      {"random_mesh_for", f.string("random_mesh_for", "ep")},
                      {"matrices", f.integer("matrices", 1, 3, 1)},
                      {"tp_bytes", f.number_in("tp_bytes", 0.125, 8, 4.0, "bytes")},
                      {"loads", loads},
                      {"sampled_batches", f.integer("sampled_batches", 1, 1024, 8)},
                      {"shared_experts", f.boolean("shared_experts", false)},
                      {"dram", f.boolean("dram", false)}};
  f.no_unknown_keys();
  return o;
}

/// One step whose layers carry the accounting's three terms as phases.
StrategyResult account(const Placement& p, const AccountingInputs& in, const nlohmann::json& o) {
  AuthorsConfig cfg;
  cfg.batch = in.cfg.shape.batch;
  cfg.context = in.cfg.shape.context;
  cfg.eval_intermediate = o.at("eval_intermediate").get<int>();
  cfg.random_mesh = o.at("random_mesh_for").get<std::string>() == p.strategy;
  cfg.seed = in.seed;
  cfg.toggles.matrices = o.at("matrices").get<int>();
  cfg.toggles.tp_bytes = o.at("tp_bytes").get<double>();
  cfg.toggles.sampled_batches = o.at("loads").get<std::string>() == "sampled" ? o.at("sampled_batches").get<int>() : 0;
  cfg.toggles.shared_experts = o.at("shared_experts").get<bool>();
  cfg.toggles.dram = o.at("dram").get<bool>();
  const AuthorsResult a = authors_account(p, in.model, in.hw, in.trace, cfg);
  StrategyResult r(p.strategy, Fidelity::kFlow, in.hw.topology.nodes());
  const int expert = r.phase_index(Phase{"expert", PhaseFamily::kMoeCompute});
  const int comm = r.phase_index(Phase{"dispatch_combine", PhaseFamily::kMoeComm});
  const int constant = r.phase_index(Phase{"constant", PhaseFamily::kOther});
  std::vector<LayerRecord> layers(static_cast<size_t>(in.model.layers()));
  for (int l = 0; l < in.model.moe_layers; ++l) {
    LayerRecord& rec = layers[static_cast<size_t>(in.model.dense_layers + l)];
    rec.phase_s.assign(r.phases.size(), 0.0);
    rec.phase_s[static_cast<size_t>(expert)] = a.layers[static_cast<size_t>(l)].compute_s;
    rec.phase_s[static_cast<size_t>(comm)] = 2 * a.layers[static_cast<size_t>(l)].comm_s;
    rec.phase_s[static_cast<size_t>(constant)] = a.constant_s;
  }
  r.steps.push_back(std::move(layers));
  return r;
}

}  // namespace

void register_authors_accounting(Registry& r) {
  r.add(AccountingFactory{
      "hdmoe-authors",
      "the HD-MoE authors' released accounting (FLOPs-only compute, TP analytic at 4 B/element, store-and-forward "
      "mesh at 1 B/element with aggregators, constant C per layer; data/reference/hdmoe/ACCOUNTING.md)",
      {{"eval_intermediate", "0", "expert intermediate size when evaluating (0: the model's; their Qwen2 runs: 18944)"},
       {"random_mesh_for", "ep",
        "the strategy of the run whose devices get a new random mesh cell per layer (their EP), or none"},
       // Their assumptions, each switchable to nmpsim's model (docs/MODEL.md "The authors' accounting: toggles").
       {"matrices", "1", "expert matrices in the FLOPs: 1 (theirs) .. 3 (SwiGLU)"},
       {"tp_bytes", "4", "bytes per element of TP's exchange (theirs 4; FP16 2)"},
       {"loads", "expected",
        "expected (the whole trace's loads, theirs) | sampled (the mean over batches of the trace)"},
       {"sampled_batches", "8", "loads=sampled: batches spread evenly over the trace"},
       {"shared_experts", "false", "charge the model's shared experts, split evenly over the nodes (theirs: ignored)"},
       {"dram", "false",
        "per node max(FLOPs, its shares' weights / DRAM bandwidth), expert weights out of C (theirs: FLOPs only)"}},
      resolve,
      account,
      {"random_mesh_for"}});
}

}  // namespace nmpsim::methods::hdmoe
