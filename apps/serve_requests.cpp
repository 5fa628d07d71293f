// Requests for `nmpsim serve`: synthetic Poisson arrivals and trace files (apps/serve.h).
#include <cmath>
#include <sstream>

#include "nmpsim/apps/serve.h"
#include "nmpsim/base/errors.h"
#include "nmpsim/base/input_file.h"

namespace nmpsim::apps::serve {

namespace {
/// Uniform in [mean (1 - spread), mean (1 + spread)], at least 1.
int spread_tokens(std::mt19937_64& rng, int mean, double spread) {
  if (spread <= 0) return mean;
  std::uniform_real_distribution<double> u(1.0 - spread, 1.0 + spread);
  return std::max(1, static_cast<int>(std::lround(mean * u(rng))));
}

/// A non-negative integer token count of at most 2^24, or an error naming the field.
int token_count(const std::string& text, const std::string& where, const char* field) {
  const bool digits = !text.empty() && text.size() <= 9 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) throw base::InputError(where + ": " + field + ": '" + base::shown(text) + "' is not a whole number");
  const long v = std::stol(text);
  if (v < 1) throw base::InputError(where + ": " + field + ": a request needs at least one token");
  if (v > (1 << 24)) throw base::InputError(where + ": " + field + ": " + text + " is more than 2^24 tokens");
  return static_cast<int>(v);
}
}  // namespace

std::vector<Request> synthetic_requests(const SyntheticArrivals& a) {
  std::mt19937_64 rng(a.seed);
  std::exponential_distribution<double> gap(a.rate_per_s);
  std::vector<Request> out;
  out.reserve(static_cast<size_t>(a.requests));
  double t = 0;
  for (int i = 0; i < a.requests; ++i) {
    t += gap(rng);
    Request r;
    r.arrival_s = t;
    r.prompt_tokens = spread_tokens(rng, a.prompt_tokens, a.prompt_spread);
    r.output_tokens = spread_tokens(rng, a.output_tokens, a.output_spread);
    out.push_back(r);
  }
  return out;
}

std::vector<Request> read_request_trace(const std::string& path) {
  const std::string text = base::read_input_file(path);
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte-order mark
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line != "arrival_s,prompt_tokens,output_tokens")
    throw base::InputError(path + ": line 1: expected the header 'arrival_s,prompt_tokens,output_tokens'");
  std::vector<Request> out;
  for (long n = 2; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = path + ": line " + std::to_string(n);
    std::vector<std::string> f(1);  // split at every comma: a trailing one makes a fourth field
    for (char ch : line) {
      if (ch == ',')
        f.emplace_back();
      else
        f.back() += ch;
    }
    if (f.size() != 3) throw base::InputError(where + ": expected 3 fields, got " + std::to_string(f.size()));
    Request r;
    char* end = nullptr;
    r.arrival_s = std::strtod(f[0].c_str(), &end);
    if (f[0].empty() || *end != '\0' || !std::isfinite(r.arrival_s) ||
        f[0].find_first_not_of("0123456789.eE+-") != std::string::npos)
      throw base::InputError(where + ": arrival_s: '" + base::shown(f[0]) + "' is not a number");
    if (r.arrival_s < 0) throw base::InputError(where + ": arrival_s: " + f[0] + " is negative");
    if (r.arrival_s > kMaxArrivalS)
      throw base::InputError(where + ": arrival_s: " + f[0] + " is more than 10^7 s (about four months)");
    if (!out.empty() && r.arrival_s < out.back().arrival_s)
      throw base::InputError(where + ": arrival_s: " + f[0] +
                             " is before the previous request's (arrivals must be sorted)");
    r.prompt_tokens = token_count(f[1], where, "prompt_tokens");
    r.output_tokens = token_count(f[2], where, "output_tokens");
    if (out.size() >= (size_t{1} << 22)) throw base::InputError(where + ": more than 2^22 requests");
    out.push_back(r);
  }
  if (out.empty()) throw base::InputError(path + ": no requests");
  return out;
}

}  // namespace nmpsim::apps::serve
