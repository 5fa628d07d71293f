#include "nmpsim/mapping/moe_model.h"

#include <algorithm>
#include <fstream>
#include <map>

#include "nmpsim/base/input_file.h"
#include "nmpsim/mapping/base_names.h"

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

double ModelSpec::attention_pair_flops() const {
  const AttentionSpec& a = attention;
  const double qk = a.kind == "mla" ? a.head_dim + a.rope_dim : a.head_dim;
  const double v = a.kind == "mla" ? a.v_head_dim : a.head_dim;
  return 2.0 * a.heads * (qk + v);
}

double ModelSpec::attention_flops_per_token(int context) const {
  return 2.0 * attention_params() + attention_pair_flops() * context;
}

double ModelSpec::attention_flops(const Segment& s) const {
  return 2.0 * attention_params() * s.tokens + attention_pair_flops() * s.pairs();
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
          {"activation_bytes", m.activation_bytes},
          {"max_context", m.max_context}};
}

void ModelSpec::validate(const std::string& where) const {
  auto fail = [&](const std::string& m) { throw InputError(where + ": " + m); };
  auto in = [&](long long v, long long lo, long long hi, const char* field) {
    if (v < lo || v > hi)
      fail(std::string(field) + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] (got " +
           std::to_string(v) + ")");
  };
  in(experts, 1, 4096, "experts");
  in(top_k, 1, std::min(experts, kMaxTopK), "top_k");
  in(moe_layers, 1, 1024, "moe_layers");
  in(dense_layers, 0, 1024, "dense_layers");
  in(hidden, 1, 1 << 18, "hidden");
  in(intermediate, 1, 1 << 20, "intermediate");
  in(shared_experts, 0, 64, "shared_experts");
  in(shared_intermediate, shared_experts > 0 ? 1 : 0, 1 << 20, "shared_intermediate");
  in(dense_intermediate, dense_layers > 0 ? 1 : 0, 1 << 20, "dense_intermediate");
  in(ffn_matrices, 1, 4, "ffn_matrices");
  for (auto [v, field] : {std::pair{weight_bytes, "weight_bytes"}, std::pair{activation_bytes, "activation_bytes"}})
    if (!(v >= 0.125 && v <= 8)) fail(std::string(field) + " must be in [0.125, 8] bytes (got " + number_text(v) + ")");
  const AttentionSpec& a = attention;
  if (a.kind != "gqa" && a.kind != "mla") fail("attention.kind must be gqa or mla, got '" + a.kind + "'");
  in(a.heads, 1, 4096, "attention.heads");
  in(a.head_dim, 1, 4096, "attention.head_dim");
  if (a.kind == "gqa") in(a.kv_heads, 1, a.heads, "attention.kv_heads");
  if (a.kind == "mla") {
    in(a.q_lora_rank, 0, 1 << 16, "attention.q_lora_rank");
    in(a.kv_lora_rank, 1, 1 << 16, "attention.kv_lora_rank");
    in(a.rope_dim, 0, 4096, "attention.rope_dim");
    in(a.v_head_dim, 1, 4096, "attention.v_head_dim");
  }
}

ModelSpec model_from_json(const nlohmann::json& j, const std::string& where) {
  const JsonFields f(j, where, "");
  ModelSpec m;
  m.name = f.string("name", "custom");
  if (!is_valid_name(m.name))
    f.fail("name", "'" + m.name + "' is not a name (1-64 letters, digits, '.', '_', '+', '-')");
  m.experts = static_cast<int>(f.integer("experts", 1, 4096));
  m.top_k = static_cast<int>(f.integer("top_k", 1, std::min(m.experts, kMaxTopK)));
  m.moe_layers = static_cast<int>(f.integer("moe_layers", 1, 1024));
  m.dense_layers = static_cast<int>(f.integer("dense_layers", 0, 1024, 0));
  m.hidden = static_cast<int>(f.integer("hidden", 1, 1 << 18));
  m.intermediate = static_cast<int>(f.integer("intermediate", 1, 1 << 20));
  m.shared_experts = static_cast<int>(f.integer("shared_experts", 0, 64, 0));
  m.shared_intermediate = static_cast<int>(f.integer("shared_intermediate", 0, 1 << 20, 0));
  m.dense_intermediate = static_cast<int>(f.integer("dense_intermediate", 0, 1 << 20, 0));
  m.ffn_matrices = static_cast<int>(f.integer("ffn_matrices", 1, 4, 3));
  m.weight_bytes = f.number_in("weight_bytes", 0.125, 8, 2.0, "bytes");
  m.activation_bytes = f.number_in("activation_bytes", 0.125, 8, 2.0, "bytes");
  m.max_context = static_cast<int>(f.integer("max_context", 0, 1 << 24, 0));
  if (f.has("attention")) {
    const JsonFields a = f.object("attention");
    AttentionSpec& at = m.attention;
    at.kind = a.string("kind", at.kind);
    at.heads = static_cast<int>(a.integer("heads", 1, 4096, at.heads));
    at.kv_heads = static_cast<int>(a.integer("kv_heads", 1, 4096, at.kind == "mla" ? at.heads : at.kv_heads));
    at.head_dim = static_cast<int>(a.integer("head_dim", 1, 4096, at.head_dim));
    at.q_lora_rank = static_cast<int>(a.integer("q_lora_rank", 0, 1 << 16, 0));
    at.kv_lora_rank = static_cast<int>(a.integer("kv_lora_rank", 0, 1 << 16, 0));
    at.rope_dim = static_cast<int>(a.integer("rope_dim", 0, 4096, 0));
    at.v_head_dim = static_cast<int>(a.integer("v_head_dim", 0, 4096, 0));
    if (at.kind == "gqa")  // what only latent attention has must not be set for grouped-query attention
      for (const auto& [key, v] : {std::pair{"q_lora_rank", at.q_lora_rank},
                                   {"kv_lora_rank", at.kv_lora_rank},
                                   {"rope_dim", at.rope_dim},
                                   {"v_head_dim", at.v_head_dim}})
        if (v != 0) a.fail(key, "applies to mla attention only (attention.kind is gqa)");
    a.no_unknown_keys();
  }
  f.no_unknown_keys();
  m.validate(where);
  return m;
}

ModelSpec load_model(const std::string& preset_or_file) {
  const auto names = model_preset_names();
  if (std::find(names.begin(), names.end(), preset_or_file) != names.end()) return model_preset(preset_or_file);
  const bool looks_like_file = preset_or_file.find('/') != std::string::npos ||
                               preset_or_file.find(".json") != std::string::npos || base::names_a_file(preset_or_file);
  if (!looks_like_file) return model_preset(preset_or_file);  // "unknown model preset ..." with the list
  return model_from_json(read_json_file(preset_or_file), preset_or_file);
}

namespace {

ModelSpec gqa(const char* name, int experts, int top_k, int layers, int hidden, int inter, int heads, int kv_heads,
              int max_context) {
  ModelSpec m;
  m.name = name;
  m.max_context = max_context;
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
  m.max_context = 163840;  // every DeepSeek-V2/V3 config: 4096 x YaRN factor 40
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

/// Training-scale models (docs/MODEL.md "Models" gives each one's source): DeepSeek-V3 at half width
/// with 6 layers, Qwen3-30B-A3B with 32 layers, and four small FP32 models of 32 experts (hidden H,
/// expert P_E = 2 H M parameters, so M = 4 H).
void add_training_models(std::map<std::string, ModelSpec>& all) {
  ModelSpec half = mla("deepseek-v3-half-6l", 256, 8, 6, 0, 3584, 1024, 1, 9216, 128, 1536);
  all[half.name] = half;
  all["qwen3-30b-a3b-32l"] = gqa("qwen3-30b-a3b-32l", 128, 8, 32, 2048, 768, 32, 4, 40960);
  const struct {
    const char* name;
    int hidden, layers;
  } small[] = {{"llama-tiny-e32", 512, 12},
               {"mistral-small-e32", 768, 12},
               {"gpt-medium-e32", 1024, 12},
               {"gpt-large-e32", 1024, 16}};
  for (const auto& x : small) {
    ModelSpec m = gqa(x.name, 32, 2, x.layers, x.hidden, 4 * x.hidden, x.hidden / 64, x.hidden / 64, 0);
    m.ffn_matrices = 2;  // P_E = 2 H M: two matrices per expert
    m.attention.head_dim = 64;
    m.weight_bytes = 4;  // FP32: the experts' sizes the paper measures (8.4 M parameters = 32 MiB)
    m.activation_bytes = 4;
    all[m.name] = m;
  }
}

std::map<std::string, ModelSpec> build() {
  std::map<std::string, ModelSpec> all;
  // The last argument: max_position_embeddings of each model's Hugging Face config (DBRX: max_seq_len).
  all["mixtral-8x7b"] = gqa("mixtral-8x7b", 8, 2, 32, 4096, 14336, 32, 8, 32768);
  all["mixtral-8x22b"] = gqa("mixtral-8x22b", 8, 2, 56, 6144, 16384, 48, 8, 65536);
  all["dbrx"] = gqa("dbrx", 16, 4, 40, 6144, 10752, 48, 8, 32768);
  ModelSpec qwen2 = gqa("qwen2-57b-a14b", 64, 8, 28, 3584, 2560, 28, 4, 32768);
  qwen2.shared_experts = 1;
  qwen2.shared_intermediate = 20480;
  all[qwen2.name] = qwen2;
  all["qwen3-235b-a22b"] = gqa("qwen3-235b-a22b", 128, 8, 94, 4096, 1536, 64, 4, 40960);
  all["deepseek-v2-lite"] = mla("deepseek-v2-lite", 64, 6, 26, 1, 2048, 1408, 2, 10944, 16, 0);
  all["deepseek-v3"] = mla("deepseek-v3", 256, 8, 58, 3, 7168, 2048, 1, 18432, 128, 1536);
  all["deepseek-v2"] = mla("deepseek-v2", 160, 6, 59, 1, 5120, 1536, 2, 12288, 128, 1536);
  add_training_models(all);
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

double optimizer_state_bytes(const ModelSpec& m) { return m.weight_bytes < 4 ? 12.0 : 8.0; }

double expert_move_bytes(const ModelSpec& m, bool train) {
  return train ? m.expert_params() * (m.weight_bytes + optimizer_state_bytes(m)) : m.expert_bytes();
}

double optimizer_dram_bytes(const ModelSpec& m) {
  const double wb = m.weight_bytes;
  return wb < 4 ? 2 * wb + 24 : 3 * wb + 16;
}

double train_activation_bytes_per_token(const ModelSpec& m, bool dense, bool recompute) {
  const double h = m.hidden, a = m.activation_bytes;
  if (recompute) return h * a;
  const double per_width = m.ffn_matrices == 3 ? 3.0 : 2.0;  // gate and up outputs and the activation, or two
  double ffn = 0;
  if (dense) {
    ffn = h + per_width * m.dense_intermediate;
  } else {
    ffn = m.top_k * (h + per_width * m.intermediate);
    if (m.shared_experts > 0) ffn += h + per_width * double(m.shared_experts) * m.shared_intermediate;
  }
  return 7.5 * h * a + ffn * a;
}

}  // namespace nmpsim::mapping
