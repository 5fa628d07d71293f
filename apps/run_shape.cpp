#include "nmpsim/apps/run_shape.h"

#include <algorithm>
#include <string>

#include "nmpsim/base/errors.h"

namespace nmpsim::apps {

namespace {

std::string n(long long v) { return std::to_string(v); }

/// A prompt within the model's context.
void check_prompt(const RunSpec& s, const mapping::ModelSpec& m) {
  if (s.prompt_tokens < 1)
    throw base::InputError("prompt_tokens (--prompt-tokens): 0: phase " +
                           std::string(mapping::step_kind_name(s.phase)) + " needs a prompt of at least 1 token");
  if (m.max_context > 0 && s.prompt_tokens > m.max_context)
    throw base::InputError("prompt_tokens (--prompt-tokens): " + n(s.prompt_tokens) + " is beyond " + m.name +
                           "'s context of " + n(m.max_context) + " tokens");
}

void check_decode_context(const RunSpec& s, const mapping::ModelSpec& m) {
  if (m.max_context > 0 && s.context > m.max_context)
    throw base::InputError("context (--context): " + n(s.context) + " is beyond " + m.name + "'s context of " +
                           n(m.max_context) + " tokens");
}

void check_mixed(const RunSpec& s) {
  if (s.prefill_chunk < 1)
    throw base::InputError(
        "prefill_chunk (--prefill-chunk): 0: a mixed step carries a chunk of at least 1 prompt token");
  if (s.prefill_chunk > s.prompt_tokens)
    throw base::InputError("prefill_chunk (--prefill-chunk): " + n(s.prefill_chunk) +
                           " is larger than prompt_tokens (" + "--prompt-tokens) " + n(s.prompt_tokens));
  const long long need = mapping::prompt_chunks(s.prompt_tokens, s.prefill_chunk);
  if (s.steps < need)
    throw base::InputError("steps (--steps): " + n(s.steps) +
                           " ends before the prompt's last chunk: " + n(s.prompt_tokens) +
                           " prompt tokens in chunks of " + n(s.prefill_chunk) + " need " + n(need) + " steps");
}

}  // namespace

mapping::RunShape run_shape(const RunSpec& s, const mapping::ModelSpec& m, int attention_tile_tokens) {
  mapping::RunShape shape;
  shape.batch = s.batch;
  shape.context = s.context;
  shape.kind = s.phase;
  shape.attention_tile_tokens = attention_tile_tokens;
  const char* phase = mapping::step_kind_name(s.phase);
  if (s.micro_batches > s.batch)
    throw base::InputError("micro_batches (--micro-batches): " + n(s.micro_batches) + " is more than the step's " +
                           n(s.batch) + " requests (micro-batches are cut between whole requests; --batch)");
  if (s.micro_batches > 1 && !s.policies.empty())
    throw base::InputError("micro_batches (--micro-batches): " + n(s.micro_batches) + ": runtime policy " +
                           s.policies.front().name + " acts on one chain of phases per layer; run it with one");
  if (s.recompute && s.phase != mapping::StepKind::kTrain)
    throw base::InputError(std::string("recompute (--recompute): applies to phase train, not ") + phase +
                           " (--phase): only a training step keeps activations for a backward");
  shape.recompute = s.recompute;
  if (s.phase == mapping::StepKind::kDecode) {
    for (const auto& [key, v] : {std::pair{"prompt_tokens (--prompt-tokens)", s.prompt_tokens},
                                 {"prefill_chunk (--prefill-chunk)", s.prefill_chunk}})
      if (v != 0)
        throw base::InputError(std::string(key) + ": applies to phase prefill, mixed or train, not decode (--phase)");
    check_decode_context(s, m);
    return shape;
  }
  check_prompt(s, m);
  shape.prompt_tokens = s.prompt_tokens;
  if (s.phase == mapping::StepKind::kPrefill || s.phase == mapping::StepKind::kTrain) {
    if (s.prefill_chunk != 0)
      throw base::InputError("prefill_chunk (--prefill-chunk): applies to phase mixed, not " + std::string(phase) +
                             " (a " + std::string(phase) + " step carries whole sequences)");
    shape.context = 0;
  } else {
    check_decode_context(s, m);
    check_mixed(s);
    shape.prefill_chunk = s.prefill_chunk;
  }
  const long long most = max_step_tokens(shape, s.steps);
  if (most > kMaxStepTokens)
    throw base::InputError(std::string(s.phase != mapping::StepKind::kMixed
                                           ? "batch (--batch) x prompt_tokens (--prompt-tokens)"
                                           : "batch (--batch) + prefill_chunk (--prefill-chunk)") +
                           ": a step of " + n(most) + " tokens is more than " + n(kMaxStepTokens));
  return shape;
}

long long max_step_tokens(const mapping::RunShape& shape, int steps) {
  switch (shape.kind) {
    case mapping::StepKind::kPrefill:
    case mapping::StepKind::kTrain:
      return static_cast<long long>(shape.batch) * shape.prompt_tokens;
    case mapping::StepKind::kMixed:
      return static_cast<long long>(shape.batch) + (steps > 0 ? shape.prefill_chunk : 0);
    case mapping::StepKind::kDecode:
      break;
  }
  return shape.batch;
}

double total_tokens(const mapping::RunShape& shape, int steps) {
  if (shape.kind == mapping::StepKind::kDecode) return double(shape.batch) * steps;
  if (shape.kind == mapping::StepKind::kPrefill || shape.kind == mapping::StepKind::kTrain)
    return double(shape.batch) * shape.prompt_tokens * steps;
  return double(shape.batch) * steps + shape.prompt_tokens;
}

}  // namespace nmpsim::apps
