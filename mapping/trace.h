// Expert-routing traces: per MoE layer, per token, the top-k expert ids. Loaded from the JSON
// format of the Mixtral MT-Bench traces ({"0": [[e, e], ...], "1": ...}) or generated
// synthetically with controllable skew, co-activation, adjacent-layer correlation and drift.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nmpsim::mapping {

class RoutingTrace {
 public:
  RoutingTrace() = default;
  RoutingTrace(int layers, int experts, int top_k, size_t tokens, std::string source);

  int layers() const { return layers_; }
  int experts() const { return experts_; }
  int top_k() const { return top_k_; }
  size_t tokens() const { return tokens_; }
  const std::string& source() const { return source_; }
  void set_source(std::string s) { source_ = std::move(s); }
  /// The top_k experts of token t in layer l.
  const uint16_t* experts_of(int l, size_t t) const { return &ids_[(static_cast<size_t>(l) * tokens_ + t) * top_k_]; }
  uint16_t* mutable_experts_of(int l, size_t t) { return &ids_[(static_cast<size_t>(l) * tokens_ + t) * top_k_]; }
  /// Tokens per expert in layer l over tokens [first, first + count), wrapping around the trace.
  std::vector<int> expert_counts(int l, size_t first, size_t count) const;
  /// Activation frequency of each expert in layer l over the whole trace (sums to top_k).
  std::vector<double> frequencies(int l) const;
  /// A copy with tokens [first, first + count) (wrapping), for profiling on one part of a trace.
  RoutingTrace slice(size_t first, size_t count) const;

 private:
  int layers_ = 0, experts_ = 0, top_k_ = 0;
  size_t tokens_ = 0;
  std::string source_;
  std::vector<uint16_t> ids_;
};

/// Loads a trace file (plain or gzip-compressed JSON), or a vendored trace by name ("mtbench-math",
/// data_files.h). Checks: layers are keys "0".."L-1", every layer has the same number of tokens, every
/// token has exactly `top_k` distinct ids in [0, experts). Errors name file, layer, token.
RoutingTrace load_trace(const std::string& name_or_path, int experts, int top_k);
RoutingTrace trace_from_json(const nlohmann::json& j, const std::string& where, int experts, int top_k);
/// The same from the JSON text, read straight into expert ids (no JSON document is built: a trace
/// costs its text plus 2 bytes per id; mapping/trace_reader.cpp).
RoutingTrace trace_from_text(const std::string& text, const std::string& where, int experts, int top_k);
nlohmann::json trace_to_json(const RoutingTrace& t);

/// Largest trace held in memory: 512 MiB of expert ids (256M ids: 4M Mixtral tokens, 550k DeepSeek-V3
/// tokens; a run holds it twice, ~1 GiB, and generates or parses it in about 10 s).
inline constexpr size_t kMaxTraceBytes = size_t{512} << 20;
/// Throws InputError naming `where` if a trace of this size exceeds kMaxTraceBytes.
void check_trace_size(int layers, size_t tokens, int top_k, const std::string& where);

struct SyntheticTraceConfig {
  int layers = 32;
  int experts = 8;
  int top_k = 2;
  size_t tokens = 4096;
  double zipf_s = 0.8;             ///< popularity skew: expert of rank r is picked with weight 1 / r^s
  double coactivation = 0.3;       ///< chance that a token's next choice is the partner of its previous one
  double layer_correlation = 0.4;  ///< chance that a token's first choice follows from its previous layer's
  int scenarios = 1;               ///< the trace is cut into this many contiguous scenarios
  double drift = 0.0;              ///< share of popularity ranks reshuffled from one scenario to the next
  uint64_t seed = 1;
  void validate() const;
};

RoutingTrace synthetic_trace(const SyntheticTraceConfig& cfg);

}  // namespace nmpsim::mapping
