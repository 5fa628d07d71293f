// MoE model shapes: presets with published dimensions, and the FLOP / byte counts the
// performance models need. Plain C++.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nmpsim/mapping/regime.h"

namespace nmpsim::mapping {

/// The most experts a token may be routed to. Deployed MoE models route to 1-8 (Mixtral 2, DeepSeek-V3
/// and Qwen3 8; the presets); 64 leaves room for studies and bounds a token's work in the synthetic
/// trace generator and the dispatch plan (docs/FORMATS.md "Limits").
inline constexpr int kMaxTopK = 64;

struct AttentionSpec {
  std::string kind = "gqa";  ///< "gqa" (multi/grouped-query) or "mla" (DeepSeek multi-head latent)
  int heads = 32;
  int kv_heads = 8;      ///< gqa
  int head_dim = 128;    ///< gqa: per head; mla: nope part of q/k
  int q_lora_rank = 0;   ///< mla: 0 = q projected directly from hidden
  int kv_lora_rank = 0;  ///< mla: compressed kv width
  int rope_dim = 0;      ///< mla: decoupled rope width
  int v_head_dim = 0;    ///< mla: value width per head
};

struct ModelSpec {
  std::string name;
  int experts = 8;  ///< routed experts per MoE layer
  int top_k = 2;
  int moe_layers = 32;
  int dense_layers = 0;  ///< leading dense (non-MoE) layers
  int hidden = 4096;
  int intermediate = 14336;     ///< per routed expert
  int shared_experts = 0;       ///< always-active experts per MoE layer
  int shared_intermediate = 0;  ///< per shared expert
  int dense_intermediate = 0;   ///< FFN width of the dense layers
  int ffn_matrices = 3;         ///< SwiGLU: gate, up, down
  AttentionSpec attention;
  double weight_bytes = 2.0;      ///< bytes per weight (FP16 2, INT8 1)
  double activation_bytes = 2.0;  ///< bytes per activation element on the NoC and in the KV cache
  /// Longest sequence (prompt and generated tokens) the model attends over: its Hugging Face config's
  /// max_position_embeddings (docs/MODEL.md "Models"); 0 = not stated (runs are not checked against it).
  int max_context = 0;

  int layers() const { return dense_layers + moe_layers; }
  /// Weights of one routed expert.
  double expert_params() const { return double(ffn_matrices) * hidden * intermediate; }
  double expert_bytes() const { return expert_params() * weight_bytes; }
  /// FLOPs of one token through one whole routed expert (2 per weight).
  double expert_flops_per_token() const { return 2.0 * expert_params(); }
  double shared_params() const { return double(shared_experts) * ffn_matrices * hidden * shared_intermediate; }
  double attention_params() const;
  /// KV-cache bytes per token of context per layer.
  double kv_bytes_per_token() const;
  /// Attention FLOPs per token over a context of `context` tokens (projections + scores + values).
  double attention_flops_per_token(int context) const;
  /// FLOPs of one query-key pair over all heads: scores and values, 2 heads (d_qk + d_v).
  double attention_pair_flops() const;
  /// Attention FLOPs of one request of segment `s`: 2 attention_params() per token (projections) plus
  /// attention_pair_flops() per query-key pair (docs/MODEL.md "Steps: decode, prefill, mixed").
  double attention_flops(const Segment& s) const;
  double gate_params() const { return double(hidden) * experts; }
  /// Bytes of one token's hidden state on the NoC.
  double token_bytes() const { return hidden * activation_bytes; }
  /// All weights of one MoE layer (routed + shared experts, attention, gate).
  double moe_layer_bytes() const;
  void validate(const std::string& where) const;
};

// Training (docs/MODEL.md "Training step").
/// Optimizer state per parameter: Adam's two FP32 moments, and an FP32 master copy when the weights
/// are narrower than 4 bytes (mixed precision): 12 or 8 bytes.
double optimizer_state_bytes(const ModelSpec& m);
/// DRAM bytes one AdamW update moves per parameter (gradients as wide as the weights): with a master
/// copy, read gradient, master, m, v and write master, m, v, weight (2 wb + 24); without, read weight,
/// gradient, m, v and write weight, m, v (3 wb + 16).
double optimizer_dram_bytes(const ModelSpec& m);
/// Bytes one routed expert's move (a copy to another node) carries: its weights, and in a training step
/// its optimizer state too, so that its new holder can update it (docs/MODEL.md "Training step: policies").
double expert_move_bytes(const ModelSpec& m, bool train);
/// Activation bytes one token keeps per layer for the backward, all of a TP group together: attention
/// and norms 15 h half-precision bytes (Korthikanti et al. 2022, with FlashAttention keeping no scores)
/// scaled to activation_bytes, and per routed expert copy (and per shared expert) h + 3 i elements
/// (input, gate and up projections, activation; a dense layer's FFN once, with its width); `recompute`:
/// the layer's input only (h elements).
double train_activation_bytes_per_token(const ModelSpec& m, bool dense, bool recompute);

/// Every field, for run specs and cache keys (docs/FORMATS.md "Model JSON").
nlohmann::json model_to_json(const ModelSpec& m);
/// A model description (docs/FORMATS.md "Model JSON"): strict, every numeric field range-checked.
ModelSpec model_from_json(const nlohmann::json& j, const std::string& where);
/// A preset name, or else a model JSON file.
ModelSpec load_model(const std::string& preset_or_file);

std::vector<std::string> model_preset_names();
ModelSpec model_preset(const std::string& name);  ///< throws InputError for an unknown name

}  // namespace nmpsim::mapping
