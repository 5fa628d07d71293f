// The continuous-batching scheduler of `nmpsim serve` (apps/serve.h; docs/MODEL.md "Serving"):
// vLLM-like. Every step, each running request whose prefill is done decodes one token; requests
// still in prefill continue with a chunk; waiting requests are admitted first come, first served,
// while the step's token budget, the running limit and the KV cache allow (the whole prompt's KV is
// reserved on admission). When the decodes' KV growth does not fit, the request admitted last is
// preempted: its KV is freed and it waits at the front, to recompute its prompt and the tokens it
// had generated. The step that completes a request's prefill produces its next token.
#include <algorithm>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <string>

#include "nmpsim/apps/serve.h"
#include "nmpsim/base/errors.h"

namespace nmpsim::apps::serve {

namespace {

struct Live {
  int target = 0;     // tokens to prefill: the prompt, or prompt and generated tokens after a preemption
  int prefilled = 0;  // of target
  int decodes = 0;    // decode steps since the prefill (each adds one KV token)
  int generated = 0;  // output tokens so far
  int64_t kv() const { return target + decodes; }  // KV reserved: the whole target from admission
};

class Scheduler {
 public:
  Scheduler(const std::vector<Request>& rq, const SchedulerConfig& cfg, const StepTimer& timer)
      : rq_(rq), cfg_(cfg), timer_(timer), live_(rq.size()) {
    run_.requests.resize(rq.size());
    for (size_t i = 0; i < rq.size(); ++i) {
      RequestResult& r = run_.requests[i];
      r.arrival_s = rq[i].arrival_s;
      r.prompt_tokens = rq[i].prompt_tokens;
      r.output_tokens = rq[i].output_tokens;
      live_[i].target = rq[i].prompt_tokens;
    }
  }

  ServeRun run() {
    while (finished_ < rq_.size()) {
      admit_arrivals();
      if (running_.empty() && waiting_.empty()) {  // idle until the next arrival
        t_ = std::max(t_, rq_[next_].arrival_s);
        continue;
      }
      step();
    }
    return std::move(run_);
  }

 private:
  void admit_arrivals() {
    while (next_ < rq_.size() && rq_[next_].arrival_s <= t_) waiting_.push_back(next_++);
  }
  int64_t kv_used() const {
    int64_t s = 0;
    for (size_t i : running_) s += live_[i].kv();
    return s;
  }
  bool decoding(size_t i) const { return live_[i].prefilled == live_[i].target; }
  /// Frees the KV of the request admitted last and puts it at the front of the queue.
  void preempt_last() {
    const size_t i = running_.back();
    running_.pop_back();
    Live& l = live_[i];
    l.target = rq_[i].prompt_tokens + l.generated;
    l.prefilled = l.decodes = 0;
    waiting_.push_front(i);
    ++run_.requests[i].preemptions;
    ++run_.preemptions;
  }

  void step() {
    // The decodes' KV growth must fit: preempt from the back until it does.
    for (;;) {
      int64_t decoders = 0;
      for (size_t i : running_) decoders += decoding(i);
      if (kv_used() + decoders <= cfg_.kv_tokens || running_.size() <= 1) break;
      preempt_last();
    }
    int budget = cfg_.token_budget;
    StepShape shape;
    std::vector<std::pair<size_t, int>> chunks;  // (request, prefill tokens this step)
    double context = 0;
    for (size_t i : running_) {
      if (decoding(i)) {
        ++shape.decode_tokens;
        context += static_cast<double>(live_[i].kv());
        --budget;
      }
    }
    for (size_t i : running_) {
      if (decoding(i) || budget <= 0) continue;
      const int c = std::min(budget, live_[i].target - live_[i].prefilled);
      chunks.emplace_back(i, c);
      budget -= c;
    }
    int64_t kv = kv_used() + shape.decode_tokens;
    while (!waiting_.empty() && budget > 0 && static_cast<int>(running_.size()) < cfg_.max_seqs &&
           kv + live_[waiting_.front()].target <= cfg_.kv_tokens) {
      const size_t i = waiting_.front();
      waiting_.pop_front();
      running_.push_back(i);
      kv += live_[i].target;
      const int c = std::min(budget, live_[i].target);
      chunks.emplace_back(i, c);
      budget -= c;
    }
    for (const auto& [i, c] : chunks) shape.prefill_tokens += c;
    if (shape.decode_tokens > 0) shape.context_tokens = static_cast<int>(std::lround(context / shape.decode_tokens));
    run_.peak_kv_tokens = std::max(run_.peak_kv_tokens, kv);
    finish_step(shape, chunks);
  }

  void finish_step(const StepShape& shape, const std::vector<std::pair<size_t, int>>& chunks) {
    const StepCost cost = timer_(shape);
    if (!(cost.seconds > 0) || !std::isfinite(cost.seconds))
      throw std::runtime_error("serve: a step of " + std::to_string(shape.decode_tokens) + " decode and " +
                               std::to_string(shape.prefill_tokens) + " prefill tokens was timed at " +
                               std::to_string(cost.seconds) + " s");
    const double end = t_ + cost.seconds;
    // Requests in the system during the step: those there at its start, and those arriving during it.
    run_.request_seconds += static_cast<double>(next_ - finished_) * (end - t_);
    for (size_t k = next_; k < rq_.size() && rq_[k].arrival_s <= end; ++k)
      run_.request_seconds += end - rq_[k].arrival_s;
    run_.energy_j += cost.energy_j;
    run_.busy_s += cost.seconds;
    run_.steps.push_back(shape);
    run_.step_end_s.push_back(end);
    std::vector<size_t> decoders;
    for (size_t i : running_)
      if (decoding(i)) decoders.push_back(i);
    for (size_t i : decoders) {
      ++live_[i].decodes;
      emit(i, end);
    }
    for (const auto& [i, c] : chunks) {
      live_[i].prefilled += c;
      if (decoding(i)) emit(i, end);  // the prefill's last chunk yields the next token
    }
    t_ = end;
    running_.erase(
        std::remove_if(running_.begin(), running_.end(), [&](size_t i) { return run_.requests[i].finish_s >= 0; }),
        running_.end());
  }

  void emit(size_t i, double at) {
    RequestResult& r = run_.requests[i];
    if (r.first_token_s < 0) r.first_token_s = at;
    if (++live_[i].generated == rq_[i].output_tokens) {
      r.finish_s = at;
      ++finished_;
    }
  }

  const std::vector<Request>& rq_;
  const SchedulerConfig& cfg_;
  const StepTimer& timer_;
  std::vector<Live> live_;
  std::deque<size_t> waiting_;
  std::vector<size_t> running_;  // in order of admission
  size_t next_ = 0, finished_ = 0;
  double t_ = 0;
  ServeRun run_;
};

}  // namespace

ServeRun simulate_serving(const std::vector<Request>& requests, const SchedulerConfig& cfg, const StepTimer& timer) {
  for (size_t i = 0; i < requests.size(); ++i) {
    const Request& r = requests[i];
    const int64_t tokens = int64_t{r.prompt_tokens} + r.output_tokens;
    const std::string which = "request " + std::to_string(i + 1) + ": ";
    if (cfg.max_context > 0 && tokens > cfg.max_context)
      throw base::InputError(which + std::to_string(tokens) +
                             " tokens of prompt and output exceed the model's context of " +
                             std::to_string(cfg.max_context));
    if (r.prompt_tokens < 1 || r.output_tokens < 1)
      throw base::InputError(which + "a request needs at least one prompt and one output token");
    if (!(r.arrival_s >= 0 && r.arrival_s <= kMaxArrivalS))
      throw base::InputError(which + "arrival time outside 0.." + std::to_string(static_cast<long>(kMaxArrivalS)) +
                             " s");
    if (tokens > cfg.kv_tokens)
      throw base::InputError(which + std::to_string(tokens) + " tokens of prompt and output exceed the KV cache's " +
                             std::to_string(cfg.kv_tokens) + " tokens (" +
                             (cfg.kv_given ? "--kv-tokens" : "the memory left after the weights") + ")");
    if (i > 0 && r.arrival_s < requests[i - 1].arrival_s)
      throw base::InputError(which + "arrives before the request before it (arrivals must be sorted)");
  }
  if (requests.empty()) return {};
  return Scheduler(requests, cfg, timer).run();
}

}  // namespace nmpsim::apps::serve
