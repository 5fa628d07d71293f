// The runtime policy "hybridep": its options (README.md "HybridEP", nmpsim run --list-policies) and its
// registry entry.
#include <memory>

#include "nmpsim/methods/hybridep/policy.h"

namespace nmpsim::methods::hybridep {

using namespace nmpsim::mapping;

namespace {

std::vector<int> sed_of(const JsonFields& f, const std::string& where) {
  std::vector<int> sed;
  const nlohmann::json& s = f.raw("sed");
  if (s.is_string() && s.get<std::string>() != "auto") sed = parse_sed(s.get<std::string>(), where + ": sed");
  if (s.is_array())
    for (const auto& x : s) {
      if (!x.is_number_integer() || x.get<long long>() < 1 || x.get<long long>() > (1 << 20))
        f.fail("sed", "expected positive integers");
      sed.push_back(x.get<int>());
    }
  if (!s.is_string() && !s.is_array()) f.fail("sed", "expected \"auto\", \"2,4\" or a list of integers");
  return sed;
}

/// One of `names` (index), or the fallback index when absent.
int choice(const JsonFields& f, const char* key, const std::vector<std::string>& names, int fallback) {
  if (!f.has(key)) return fallback;
  const std::string v = f.string(key);
  for (size_t i = 0; i < names.size(); ++i)
    if (v == names[i]) return static_cast<int>(i);
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) list += (i ? (i + 1 == names.size() ? " or " : ", ") : "") + names[i];
  f.fail(key, "expected " + list + ", got '" + v + "'");
}

const std::vector<std::string> kGradReturn = {"full", "sr", "none"}, kPrefetch = {"gate", "layer", "step"},
                               kChoose = {"per_layer", "once"};

}  // namespace

HybridOptions hybrid_options(const nlohmann::json& j, const std::string& where) {
  const JsonFields f(j, where, "");
  HybridOptions o;
  o.stream = choice(f, "mode", {"resident", "stream"}, 0) == 1;
  if (f.has("sed")) o.sed = sed_of(f, where);
  o.virtual_levels = static_cast<int>(f.integer("virtual_levels", 0, 8, o.virtual_levels));
  o.sr_keep = f.number_in("sr_keep", 0, 1, o.sr_keep);
  o.sr_ratio = f.number_in("sr_ratio", 0, 1e6, o.sr_ratio);
  o.paper_model = choice(f, "model", {"inference", "paper"}, 0) == 1;
  o.max_box = static_cast<int>(f.integer("max_box", 0, 1 << 20, o.max_box));
  o.grad_return = static_cast<GradReturn>(choice(f, "grad_return", kGradReturn, 0));
  o.prefetch = static_cast<Prefetch>(choice(f, "prefetch", kPrefetch, 1));
  o.choose_once = choice(f, "choose", kChoose, 0) == 1;
  f.no_unknown_keys();
  if (o.sr_ratio > 0 && o.sr_ratio < 1) f.fail("sr_ratio", "expected 0 (off) or a ratio of at least 1");
  if (o.sr_ratio > 0 && o.sr_keep > 0) f.fail("sr_ratio", "give sr_ratio or sr_keep, not both");
  if (!o.stream) {
    if (o.sr_ratio > 0 || o.sr_keep > 0) f.fail(o.sr_ratio > 0 ? "sr_ratio" : "sr_keep", "SR needs mode stream");
    if (o.grad_return != GradReturn::kFull) f.fail("grad_return", "needs mode stream (resident copies all-reduce)");
    if (o.prefetch != Prefetch::kLayer) f.fail("prefetch", "needs mode stream (resident copies are not gathered)");
    if (o.choose_once) f.fail("choose", "needs mode stream (resident domains are chosen offline)");
  }
  if (o.grad_return == GradReturn::kCompressed && o.sr_ratio <= 0)
    f.fail("grad_return", "sr compresses the gradients at sr_ratio, which is 0 (off)");
  if (o.choose_once && !o.sed.empty()) f.fail("choose", "once chooses the domain sizes, which sed gives");
  if (o.prefetch == Prefetch::kStep && o.sed.empty() && !o.choose_once)
    f.fail("prefetch", "step gathers every layer at the step's start: give sed or choose once");
  return o;
}

nlohmann::json to_json(const HybridOptions& o) {
  return {{"mode", o.stream ? "stream" : "resident"},
          {"sed", o.sed.empty() ? nlohmann::json("auto") : nlohmann::json(o.sed)},
          {"virtual_levels", o.virtual_levels},
          {"sr_keep", o.sr_keep},
          {"sr_ratio", o.sr_ratio},
          {"model", o.paper_model ? "paper" : "inference"},
          {"max_box", o.max_box},
          {"grad_return", kGradReturn[static_cast<size_t>(o.grad_return)]},
          {"prefetch", kPrefetch[static_cast<size_t>(o.prefetch)]},
          {"choose", kChoose[o.choose_once ? 1 : 0]}};
}

std::vector<OptionDoc> policy_option_docs() {
  return {{"mode", "resident", "'resident' (copies made at load) or 'stream' (all-gathered every layer)"},
          {"sed", "auto", "domain size per level, e.g. \"1,4\" (auto: stream mode chooses per layer by the model)"},
          {"virtual_levels", "0", "recursive 2x2 quadrant levels inside the finest real group"},
          {"sr_keep", "0", "stream: SR compression, share of an expert's residual elements sent (0 = off)"},
          {"sr_ratio", "0",
           "stream: SR at this ratio of bytes (the paper's 50), with the shared expert, its all-reduce and the "
           "encode and decode passes (0 = off)"},
          {"model", "inference",
           "stream auto: 'inference' (Eq. 8 plus the expert time of each worker's copies) or 'paper' (Eq. 8 "
           "as written: expert computation hidden)"},
          {"max_box", "0",
           "stream auto: only domain boxes of at most this many nodes (0 = any; the strategy sets the "
           "largest whose copies fit in memory)"},
          {"grad_return", "full",
           "training, stream: the copies' gradients back to the owners 'full', compressed at sr_ratio 'sr', or "
           "not at all 'none' (Eq. 5 as written)"},
          {"prefetch", "layer",
           "stream: the gather from the layer's start 'layer', after the gate 'gate' (no overlap), or every "
           "layer's from the step's start 'step' (the paper's asynchronous communicator)"},
          {"choose", "per_layer",
           "stream auto: the domains per layer and batch 'per_layer', or 'once' at the run's first MoE layer "
           "(the paper: before training)"}};
}

void register_policy(Registry& r) {
  PolicyFactory f;
  f.name = "hybridep";
  f.description =
      "HybridEP expert domains (Sec. IV): same-offset all-to-all to the domain box holding the expert; "
      "copies resident or all-gathered per layer on a background stream";
  f.options = policy_option_docs();
  // The policy itself needs the domain sizes in resident mode (the strategy chooses them).
  auto options = [](const nlohmann::json& j, const std::string& where) {
    const HybridOptions o = hybrid_options(j, where);
    if (!o.stream && o.sed.empty())
      throw InputError(where + ": sed: resident mode needs the domain sizes (the hybridep strategy chooses them)");
    return o;
  };
  f.create = [options](const nlohmann::json& o, const std::string& where) {
    return std::make_unique<HybridPolicy>(options(o, where));
  };
  f.resolve = [options](const nlohmann::json& o, const std::string& where) { return to_json(options(o, where)); };
  r.add(std::move(f));
}

}  // namespace nmpsim::methods::hybridep
