// The shape of a run's steps from its spec: phase, batch, context, prompt and chunk, checked against
// the model (its context limit) and each other. docs/FORMATS.md "Run spec" lists the keys.
#pragma once

#include "nmpsim/apps/run_spec.h"
#include "nmpsim/mapping/moe_model.h"

namespace nmpsim::apps {

/// The most tokens one step may carry (requests x prompt tokens, or decode tokens plus a chunk).
inline constexpr long long kMaxStepTokens = 1LL << 24;

/// The steps' shape; throws InputError naming the spec key and its option (e.g. "prompt_tokens
/// (--prompt-tokens): 40000 is beyond mixtral-8x7b's context of 32768 tokens") when the phase's keys
/// do not fit together or the model. `attention_tile_tokens` is the hardware's.
mapping::RunShape run_shape(const RunSpec& s, const mapping::ModelSpec& m, int attention_tile_tokens);

/// The most tokens any step of `steps` steps carries.
long long max_step_tokens(const mapping::RunShape& shape, int steps);
/// Tokens of all `steps` steps (energy per token).
double total_tokens(const mapping::RunShape& shape, int steps);

}  // namespace nmpsim::apps
