#include "mapping/moe_model.h"

#include <map>

#include "mapping/json_fields.h"

namespace nmpsim::mapping {

double ModelSpec::attention_params() const {
  const AttentionSpec& a = attention;
  const double h = hidden;
  if (a.kind == "mla") {
    const double qk = a.head_dim + a.rope_dim;
    const double q = a.q_lora_rank > 0 ? h * a.q_lora_rank + double(a.q_lora_rank) * a.heads * qk : h * a.heads * qk;
    const double kv_a = h * (a.kv_lora_rank + a.rope_dim);
    const double kv_b = double(a.kv_lora_rank) * a.heads * (a.head_dim + a.v_head_dim);
    const double o = double(a.heads) * a.v_head_dim * h;
    return q + kv_a + kv_b + o;
  }
  return h * a.heads * a.head_dim * 2 + h * a.kv_heads * a.head_dim * 2;  // q, o + k, v
}

double ModelSpec::kv_bytes_per_token() const {
  const AttentionSpec& a = attention;
  if (a.kind == "mla") return double(a.kv_lora_rank + a.rope_dim) * activation_bytes;
  return 2.0 * a.kv_heads * a.head_dim * activation_bytes;
}

double ModelSpec::attention_flops_per_token(int context) const {
  const AttentionSpec& a = attention;
  const double qk = a.kind == "mla" ? a.head_dim + a.rope_dim : a.head_dim;
  const double v = a.kind == "mla" ? a.v_head_dim : a.head_dim;
  return 2.0 * attention_params() + 2.0 * a.heads * (qk + v) * context;
}

double ModelSpec::moe_layer_bytes() const {
  return (experts * expert_params() + shared_params() + attention_params() + gate_params()) * weight_bytes;
}

nlohmann::json model_to_json(const ModelSpec& m) {
  const AttentionSpec& a = m.attention;
  return {{"name", m.name},
          {"experts", m.experts},
          {"top_k", m.top_k},
          {"moe_layers", m.moe_layers},
          {"dense_layers", m.dense_layers},
          {"hidden", m.hidden},
          {"intermediate", m.intermediate},
          {"shared_experts", m.shared_experts},
          {"shared_intermediate", m.shared_intermediate},
          {"dense_intermediate", m.dense_intermediate},
          {"ffn_matrices", m.ffn_matrices},
          {"attention",
           {{"kind", a.kind},
            {"heads", a.heads},
            {"kv_heads", a.kv_heads},
            {"head_dim", a.head_dim},
            {"q_lora_rank", a.q_lora_rank},
            {"kv_lora_rank", a.kv_lora_rank},
            {"rope_dim", a.rope_dim},
            {"v_head_dim", a.v_head_dim}}},
          {"weight_bytes", m.weight_bytes},
          {"activation_bytes", m.activation_bytes}};
}

void ModelSpec::validate(const std::string& where) const {
  auto fail = [&](const std::string& m) { throw InputError(where + ": " + m); };
  if (experts < 1 || experts > 4096) fail("experts must be in [1, 4096]");
  if (top_k < 1 || top_k > experts) fail("top_k must be in [1, experts]");
  if (moe_layers < 1) fail("moe_layers must be at least 1");
  if (dense_layers < 0) fail("dense_layers must be zero or positive");
  if (hidden < 1 || intermediate < 1) fail("hidden and intermediate must be positive");
  if (shared_experts < 0 || (shared_experts > 0 && shared_intermediate < 1)) fail("shared experts need a width");
  if (!(weight_bytes > 0) || !(activation_bytes > 0)) fail("weight_bytes and activation_bytes must be positive");
  if (attention.kind != "gqa" && attention.kind != "mla") fail("attention.kind must be gqa or mla");
  if (attention.heads < 1) fail("attention.heads must be positive");
}

namespace {

ModelSpec gqa(const char* name, int experts, int top_k, int layers, int hidden, int inter, int heads, int kv_heads) {
  ModelSpec m;
  m.name = name;
  m.experts = experts;
  m.top_k = top_k;
  m.moe_layers = layers;
  m.hidden = hidden;
  m.intermediate = inter;
  m.attention.kind = "gqa";
  m.attention.heads = heads;
  m.attention.kv_heads = kv_heads;
  m.attention.head_dim = 128;
  return m;
}

ModelSpec mla(const char* name, int experts, int top_k, int moe_layers, int dense_layers, int hidden, int inter,
              int shared, int dense_inter, int heads, int q_lora) {
  ModelSpec m;
  m.name = name;
  m.experts = experts;
  m.top_k = top_k;
  m.moe_layers = moe_layers;
  m.dense_layers = dense_layers;
  m.hidden = hidden;
  m.intermediate = inter;
  m.shared_experts = shared;
  m.shared_intermediate = inter;
  m.dense_intermediate = dense_inter;
  m.attention.kind = "mla";
  m.attention.heads = heads;
  m.attention.head_dim = 128;
  m.attention.q_lora_rank = q_lora;
  m.attention.kv_lora_rank = 512;
  m.attention.rope_dim = 64;
  m.attention.v_head_dim = 128;
  return m;
}

std::map<std::string, ModelSpec> build() {
  std::map<std::string, ModelSpec> all;
  all["mixtral-8x7b"] = gqa("mixtral-8x7b", 8, 2, 32, 4096, 14336, 32, 8);
  all["mixtral-8x22b"] = gqa("mixtral-8x22b", 8, 2, 56, 6144, 16384, 48, 8);
  all["dbrx"] = gqa("dbrx", 16, 4, 40, 6144, 10752, 48, 8);
  ModelSpec qwen2 = gqa("qwen2-57b-a14b", 64, 8, 28, 3584, 2560, 28, 4);
  qwen2.shared_experts = 1;
  qwen2.shared_intermediate = 20480;
  all[qwen2.name] = qwen2;
  all["qwen3-235b-a22b"] = gqa("qwen3-235b-a22b", 128, 8, 94, 4096, 1536, 64, 4);
  all["deepseek-v2-lite"] = mla("deepseek-v2-lite", 64, 6, 26, 1, 2048, 1408, 2, 10944, 16, 0);
  all["deepseek-v3"] = mla("deepseek-v3", 256, 8, 58, 3, 7168, 2048, 1, 18432, 128, 1536);
  return all;
}

const std::map<std::string, ModelSpec>& presets() {
  static const auto all = build();
  return all;
}

}  // namespace

std::vector<std::string> model_preset_names() {
  std::vector<std::string> n;
  for (const auto& [k, v] : presets()) n.push_back(k);
  return n;
}

ModelSpec model_preset(const std::string& name) {
  auto it = presets().find(name);
  if (it == presets().end()) {
    std::string known;
    for (const auto& n : model_preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw InputError("unknown model preset '" + name + "' (known: " + known + ")");
  }
  return it->second;
}

}  // namespace nmpsim::mapping
