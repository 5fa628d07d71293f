// `nmpsim model`: list, describe and print MoE model descriptions (presets or JSON files).
#include <cstdio>
#include <iostream>

#include "nmpsim/apps/cli_common.h"
#include "nmpsim/apps/commands.h"
#include "nmpsim/mapping/moe_model.h"

namespace po = boost::program_options;

namespace nmpsim::apps {

namespace {

void describe(const mapping::ModelSpec& m) {
  const double gib = double(1ULL << 30);
  std::printf("%s: %d routed experts (top-%d)", m.name.c_str(), m.experts, m.top_k);
  if (m.shared_experts) std::printf(" + %d shared", m.shared_experts);
  std::printf(", %d MoE layers", m.moe_layers);
  if (m.dense_layers) std::printf(" + %d dense", m.dense_layers);
  std::printf(", hidden %d, expert intermediate %d, %s attention with %d heads\n", m.hidden, m.intermediate,
              m.attention.kind.c_str(), m.attention.heads);
  std::printf("  one expert: %.4g M parameters, %.4g MiB at %g bytes per weight; %.4g GFLOP per token\n",
              m.expert_params() / 1e6, m.expert_bytes() / double(1 << 20), m.weight_bytes,
              m.expert_flops_per_token() / 1e9);
  std::printf("  one MoE layer: %.4g GiB of weights; KV cache %.4g KiB per token per layer\n",
              m.moe_layer_bytes() / gib, m.kv_bytes_per_token() / 1024);
}

}  // namespace

int cmd_model(const std::vector<std::string>& args) {
  std::string name = "mixtral-8x7b";
  double weight_bytes = 0;
  po::options_description desc(
      "nmpsim model: MoE model presets and descriptions\n\n"
      "Usage: nmpsim model [--list-presets] [--model NAME|FILE] [--describe] [--print-json]\n\nOptions",
      120, 60);
  // clang-format off
  desc.add_options()
    ("help", "show this help")
    ("list-presets", "print the model presets, one per line")
    ("model", po::value(&name)->default_value(name), "a model preset or model JSON file")
    ("weight-bytes", po::value(&weight_bytes)->default_value(0, "model's"), "bytes per weight (2 FP16, 1 INT8)")
    ("describe", "sizes of an expert and a layer (the default)")
    ("print-json", "the full description as JSON (docs/FORMATS.md, Model JSON): a starting point for your own");
  // clang-format on
  const po::variables_map vm = parse_options(args, desc);
  if (vm.count("help")) {
    std::cout << desc;
    return kExitOk;
  }
  if (vm.count("list-presets"))
    for (const char* k : {"model", "weight-bytes", "describe", "print-json"})
      if (vm.count(k) && !vm[k].defaulted())
        throw UsageError(std::string("--list-presets lists every preset: --") + k + " goes without it");
  if (vm.count("list-presets")) {
    for (const std::string& n : mapping::model_preset_names()) std::printf("%s\n", n.c_str());
    return kExitOk;
  }
  mapping::ModelSpec m = mapping::load_model(name);
  if (weight_bytes != 0) m.weight_bytes = weight_bytes;
  m.validate(name);
  if (vm.count("print-json")) std::cout << mapping::model_to_json(m).dump(2) << "\n";
  if (vm.count("describe") || !vm.count("print-json")) describe(m);
  return kExitOk;
}

}  // namespace nmpsim::apps
