// Serving on the simulated chip (`nmpsim serve`, docs/MODEL.md "Serving"): requests arrive, a
// continuous-batching scheduler forms each step, and each step's time comes from the same executors
// as `nmpsim run` (apps/serve_steps.h), reused by shape. This header: the requests, the scheduler's
// knobs, the step shapes it asks about and what it reports. Plain C++, no SystemC.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace nmpsim::apps::serve {

struct Request {
  double arrival_s = 0;
  int prompt_tokens = 0;
  int output_tokens = 0;  ///< tokens generated, the first one by the step that ends its prefill
};

/// Synthetic arrivals: Poisson at `rate_per_s`, prompt and output lengths uniform within
/// +-spread of their means (spread 0: every request the same), seeded.
struct SyntheticArrivals {
  double rate_per_s = 1;
  int requests = 100;
  int prompt_tokens = 512, output_tokens = 128;
  double prompt_spread = 0, output_spread = 0;  ///< fractions of the mean, 0..1
  uint64_t seed = 1;
};
std::vector<Request> synthetic_requests(const SyntheticArrivals& a);

/// A trace CSV `arrival_s,prompt_tokens,output_tokens` (header required; docs/FORMATS.md). Throws
/// mapping::InputError (one line naming the file, the line and the field) on a malformed row,
/// negative or non-finite time, arrivals out of order, zero tokens, or too many rows.
std::vector<Request> read_request_trace(const std::string& path);

/// The continuous-batching scheduler's knobs (vLLM-like; docs/MODEL.md "Serving").
struct SchedulerConfig {
  int token_budget = 2048;      ///< tokens per step: decode tokens plus prefill-chunk tokens
  int max_seqs = 256;           ///< requests running at once
  int64_t kv_tokens = 1 << 20;  ///< KV-cache capacity, tokens (all layers)
  int max_context = 0;          ///< the model's context limit (0: none)
  bool kv_given = false;        ///< kv_tokens came from --kv-tokens (errors name it), not from memory
};

/// Arrival times are at most this many seconds (10^7, about 4 months): beyond, a step's time is
/// below a double's resolution of the clock.
inline constexpr double kMaxArrivalS = 1e7;

/// What one step carries, as the step timer sees it.
struct StepShape {
  int decode_tokens = 0;   ///< one per decoding request
  int prefill_tokens = 0;  ///< prompt tokens of the prefill chunks in the step
  int context_tokens = 0;  ///< mean KV length the decode tokens attend over
  bool operator<(const StepShape& o) const {
    return decode_tokens != o.decode_tokens     ? decode_tokens < o.decode_tokens
           : prefill_tokens != o.prefill_tokens ? prefill_tokens < o.prefill_tokens
                                                : context_tokens < o.context_tokens;
  }
};
struct StepCost {
  double seconds = 0;
  double energy_j = 0;
};
using StepTimer = std::function<StepCost(const StepShape&)>;

/// What happened to one request (times in seconds from the start; -1: never).
struct RequestResult {
  double arrival_s = 0, first_token_s = -1, finish_s = -1;
  int prompt_tokens = 0, output_tokens = 0, preemptions = 0;
  double ttft_s() const { return first_token_s - arrival_s; }
  /// Time per output token after the first (0 for one-token requests).
  double tpot_s() const { return output_tokens > 1 ? (finish_s - first_token_s) / (output_tokens - 1) : 0; }
  double latency_s() const { return finish_s - arrival_s; }
};

struct ServeRun {
  std::vector<RequestResult> requests;
  std::vector<StepShape> steps;  ///< every step, in order
  std::vector<double> step_end_s;
  double energy_j = 0;  ///< of the steps (their dynamic energy and the static power while they run)
  double busy_s = 0;    ///< the steps' time in all (the chip idles the rest of the time)
  int64_t peak_kv_tokens = 0;
  int preemptions = 0;
  /// The integral over time of the requests in the system (arrived, not finished), seconds,
  /// accumulated step by step as the scheduler's clock advances.
  double request_seconds = 0;
};

/// Runs the scheduler over `requests` (sorted by arrival), asking `timer` for each step. Throws
/// mapping::InputError when a request can never run (its prompt and output exceed the KV cache or
/// the model's context).
ServeRun simulate_serving(const std::vector<Request>& requests, const SchedulerConfig& cfg, const StepTimer& timer);

/// Percentiles and rates over a run; goodput counts requests within both SLOs (<= 0: no limit).
struct ServeSummary {
  int requests = 0;
  double duration_s = 0;  ///< first arrival to last finish
  double ttft_p50_s = 0, ttft_p90_s = 0, ttft_p99_s = 0, tpot_p50_s = 0, tpot_p90_s = 0, tpot_p99_s = 0;
  double latency_p50_s = 0, latency_p90_s = 0, latency_p99_s = 0, latency_mean_s = 0;
  double throughput_requests_per_s = 0, throughput_tokens_per_s = 0;
  double goodput_requests_per_s = 0, slo_attained = 0;
  double mean_in_system = 0;  ///< time-averaged requests arrived and not finished (Little's L)
  double energy_per_token_j = 0;
};
ServeSummary summarize(const ServeRun& run, double slo_ttft_s, double slo_tpot_s);

/// Power and area of a serving run on its hardware: the steps' energy plus the static power while the
/// chip idles between them (apps/serve_config.h serve_power).
struct ServePower {
  double area_mm2 = 0, static_w = 0;
  double idle_energy_j = 0, mean_power_w = 0;
  double goodput_requests_per_j = 0;          ///< goodput per watt
  double goodput_requests_per_s_per_mm2 = 0;  ///< goodput per mm^2 of silicon (logic and DRAM)
  double logic_area_mm2 = 0;                  ///< the silicon but the DRAM (compute dies)
  double goodput_requests_per_s_per_logic_mm2 = 0;
};

}  // namespace nmpsim::apps::serve
