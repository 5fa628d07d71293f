// The authors' accounting as a registry entry: `nmpsim run --accounting hdmoe-authors`.
#include "nmpsim/mapping/base_names.h"
#include "nmpsim/mapping/registry.h"
#include "nmpsim/methods/hdmoe/authors_accounting.h"

namespace nmpsim::methods::hdmoe {

using namespace nmpsim::mapping;  // the base layer this method builds on

namespace {

nlohmann::json resolve(const nlohmann::json& given, const std::string& where) {
  const JsonFields f(given, where, "");
  nlohmann::json o = {{"eval_intermediate", f.integer("eval_intermediate", 0, 1 << 24, 0)},
                      {"random_mesh_for", f.string("random_mesh_for", "ep")}};
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
        "the strategy of the run whose devices get a new random mesh cell per layer (their EP), or none"}},
      resolve,
      account,
      {"random_mesh_for"}});
}

}  // namespace nmpsim::methods::hdmoe
