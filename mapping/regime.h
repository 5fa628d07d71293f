// The tokens of a step: which requests it carries, how many tokens of each, and how much KV cache each
// attends over. Decode steps carry one new token per request; a prefill step carries whole prompts; a
// mixed step carries decode tokens plus one chunk of a prompt (chunked prefill); a training step carries
// whole sequences, forward and backward. Plain C++. docs/MODEL.md "Steps: decode, prefill, mixed" and
// "Training step".
#pragma once

#include <string>
#include <vector>

namespace nmpsim::mapping {

/// What a run's steps carry.
enum class StepKind { kDecode, kPrefill, kMixed, kTrain };
const char* step_kind_name(StepKind k);
/// "decode", "prefill", "mixed" or "train"; anything else throws InputError naming `where`.
StepKind parse_step_kind(const std::string& text, const std::string& where);

/// `requests` requests each contribute `tokens` consecutive tokens to the step; token j (1-based) of
/// a request attends kv_before + j keys (causal). Prompt tokens (prefill) keep their activations in
/// DRAM between operators; generated tokens (decode) keep them on chip (docs/MODEL.md).
struct Segment {
  int requests = 0;
  int tokens = 1;
  int kv_before = 0;
  bool prompt = false;
  /// Query-key pairs of one request: tokens x kv_before + tokens (tokens + 1) / 2.
  double pairs() const;
  /// KV-cache tokens one request's attention reads when queries are processed in tiles of `tile`
  /// rows and every tile streams all keys it may see (FlashAttention-2 order):
  /// sum over tiles i = 1..ceil(tokens / tile) of min(kv_before + i tile, kv_before + tokens).
  double kv_read_tokens(int tile) const;
};

/// The tokens of one step, in order: segment by segment, request by request, token by token.
struct StepTokens {
  std::vector<Segment> segments;
  int attention_tile_tokens = 128;  ///< query rows per attention tile (kv_read_tokens)
  /// The step's number of this part's first request: a micro-batch's requests keep the groups and
  /// ring positions they have in the whole step (0 for a whole step).
  int first_request = 0;
  int tokens() const;
  int requests() const;
  int prompt_tokens() const;  ///< tokens of prompt segments
};

/// Steps a prompt of `prompt_tokens` takes in chunks of `chunk` tokens: ceil(prompt / chunk) (chunk >= 1).
inline int prompt_chunks(int prompt_tokens, int chunk) {
  return static_cast<int>((static_cast<long long>(prompt_tokens) + chunk - 1) / chunk);
}

/// The step's tokens cut into `k` micro-batches of whole requests, in order, each with about tokens / k
/// tokens (the cut falls after the request that reaches the next multiple of tokens / k, leaving every
/// later micro-batch at least one request). Throws InputError when the step has fewer than k requests.
std::vector<StepTokens> split_micro_batches(const StepTokens& step, int k);

/// The shape of every step of a run. `batch` and `context` come first so that RunShape{B, ctx} is a
/// decode shape.
struct RunShape {
  int batch = 64;      ///< decode and mixed: decode tokens per step; prefill: requests; train: sequences
  int context = 1024;  ///< decode and mixed: the KV-cache length each decode token attends over
  StepKind kind = StepKind::kDecode;
  int prompt_tokens = 0;            ///< prefill and mixed: tokens of each prompt; train: of each sequence
  bool recompute = false;           ///< train: the backward recomputes each layer's forward first
  int prefill_chunk = 0;            ///< mixed: prompt tokens per step (the last chunk may be shorter)
  int attention_tile_tokens = 128;  ///< query rows per attention tile (hardware compute.attention_tile_tokens)
  /// Step s: decode {batch, 1, context - 1}; prefill and train {batch, prompt_tokens, 0} (every step
  /// prefills, or trains on, the next `batch` prompts); mixed the decode segment plus chunk s of one prompt
  /// {1, min(chunk, rest), s chunk} while chunks remain.
  StepTokens step(int s) const;
  int tokens(int s) const { return step(s).tokens(); }
  /// Steps until a prompt's first token: prefill 1, mixed ceil(prompt / chunk), decode and train 0.
  int prompt_steps() const;
};

}  // namespace nmpsim::mapping
