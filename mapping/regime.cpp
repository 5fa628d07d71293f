#include "nmpsim/mapping/regime.h"

#include <algorithm>

#include "nmpsim/mapping/base_names.h"

namespace nmpsim::mapping {

const char* step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::kPrefill:
      return "prefill";
    case StepKind::kMixed:
      return "mixed";
    case StepKind::kTrain:
      return "train";
    case StepKind::kDecode:
      break;
  }
  return "decode";
}

StepKind parse_step_kind(const std::string& text, const std::string& where) {
  for (StepKind k : {StepKind::kDecode, StepKind::kPrefill, StepKind::kMixed, StepKind::kTrain})
    if (text == step_kind_name(k)) return k;
  throw InputError(where + ": expected decode, prefill, mixed or train, got '" + text + "'");
}

double Segment::pairs() const {
  const double s = tokens;
  return s * kv_before + s * (s + 1) / 2;
}

double Segment::kv_read_tokens(int tile) const {
  const int t = std::max(1, tile);
  double keys = 0;
  for (int i = 1; (i - 1) * static_cast<long long>(t) < tokens; ++i)
    keys += static_cast<double>(kv_before) + std::min<double>(static_cast<double>(i) * t, tokens);
  return keys;
}

int StepTokens::tokens() const {
  int n = 0;
  for (const Segment& s : segments) n += s.requests * s.tokens;
  return n;
}

int StepTokens::requests() const {
  int n = 0;
  for (const Segment& s : segments) n += s.requests;
  return n;
}

int StepTokens::prompt_tokens() const {
  int n = 0;
  for (const Segment& s : segments)
    if (s.prompt) n += s.requests * s.tokens;
  return n;
}

std::vector<StepTokens> split_micro_batches(const StepTokens& step, int k) {
  const int requests = step.requests();
  if (k < 1 || k > requests)
    throw InputError("micro_batches (--micro-batches): " + std::to_string(k) + " is more than the step's " +
                     std::to_string(requests) + " requests (micro-batches are cut between whole requests)");
  std::vector<StepTokens> out(static_cast<size_t>(k));
  for (StepTokens& mb : out) mb.attention_tile_tokens = step.attention_tile_tokens;
  out[0].first_request = step.first_request;
  const double total = step.tokens();
  long long done_tokens = 0;
  int done_requests = 0, at = 0;
  for (const Segment& seg : step.segments)
    for (int r = 0; r < seg.requests; ++r) {
      StepTokens& mb = out[static_cast<size_t>(at)];
      if (mb.segments.empty() || mb.segments.back().tokens != seg.tokens ||
          mb.segments.back().kv_before != seg.kv_before || mb.segments.back().prompt != seg.prompt)
        mb.segments.push_back(Segment{0, seg.tokens, seg.kv_before, seg.prompt});
      ++mb.segments.back().requests;
      done_tokens += seg.tokens;
      ++done_requests;
      // Move on once this micro-batch reached its share, or when the rest must each get a request.
      const bool share = static_cast<double>(done_tokens) >= total * (at + 1) / k;
      if (at + 1 < k && (share || requests - done_requests == k - at - 1)) {
        ++at;
        out[static_cast<size_t>(at)].first_request = step.first_request + done_requests;
      }
    }
  return out;
}

StepTokens RunShape::step(int s) const {
  StepTokens st;
  st.attention_tile_tokens = attention_tile_tokens;
  if (kind == StepKind::kPrefill || kind == StepKind::kTrain) {
    st.segments.push_back(Segment{batch, prompt_tokens, 0, true});
    return st;
  }
  st.segments.push_back(Segment{batch, 1, context - 1, false});
  if (kind == StepKind::kMixed && s < prompt_steps()) {
    const int done = s * prefill_chunk;
    st.segments.push_back(Segment{1, std::min(prefill_chunk, prompt_tokens - done), done, true});
  }
  return st;
}

int RunShape::prompt_steps() const {
  if (kind == StepKind::kPrefill) return 1;
  if (kind == StepKind::kMixed && prefill_chunk > 0) return prompt_chunks(prompt_tokens, prefill_chunk);
  return 0;
}

}  // namespace nmpsim::mapping
