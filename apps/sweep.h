// Design-space sweeps (`nmpsim sweep`, issue 17): a base run spec plus axes, expanded as a cartesian
// product (and explicit points) into one run spec per point; each point's results live in
// DIR/points/<id>/ and are merged into DIR/results.csv. An axis is any run-spec field (batch, model,
// fidelity, strategies, ...) or any hardware field by its JSON path (compute.peak_tflops,
// links.on_die.gbytes_per_s, mesh.width, ...). docs/FORMATS.md "Sweep spec".
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nmpsim::mapping {
class Registry;
}

namespace nmpsim::apps {

/// The most points a sweep may have (axes' product plus explicit points).
inline constexpr size_t kMaxSweepPoints = 100000;

struct SweepAxis {
  std::string path;
  std::vector<nlohmann::json> values;
};

struct SweepSpec {
  nlohmann::json base = nlohmann::json::object();  ///< a run spec (docs/FORMATS.md), every field optional
  std::vector<SweepAxis> axes;
  std::vector<nlohmann::json> points;  ///< explicit points: {path: value, ...}, run after the product
  std::string baseline = "tp";         ///< speedups in results.csv are over this strategy
  /// A serving sweep's serve options (apps/serve_config.h; docs/FORMATS.md "Serve spec"): every point
  /// serves requests instead of running steps. Null: a run sweep. An axis "serve.KEY" also makes one.
  nlohmann::json serve;
  bool serving() const;
};
/// Reads {"base", "axes": [{"path", "values"}], "points", "baseline", "serve"}; errors name `where` and
/// the field.
SweepSpec sweep_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json sweep_to_json(const SweepSpec& s);
/// "compute.peak_tflops=2.5,5,10": an axis; values parse as JSON numbers/booleans where they can.
SweepAxis parse_axis(const std::string& text);

struct SweepPoint {
  std::string id;                                    ///< "p0000", "p0001", ... in expansion order
  nlohmann::json values = nlohmann::json::object();  ///< path -> value
  nlohmann::json spec;                               ///< the point's full run spec (JSON)
};
/// A point's run spec (its spec without "serve"), and its serve options (null for a run sweep).
struct RunSpec;
RunSpec point_run_spec(const SweepPoint& p);
nlohmann::json point_serve(const SweepPoint& p);

/// Every point, each spec checked (run-spec fields and hardware values) so that a bad axis is an
/// input error before anything runs. Throws InputError naming the point and path.
std::vector<SweepPoint> expand(const SweepSpec& s);
/// Checks every point as `nmpsim run` would before running it (apps/experiment.h check_experiment:
/// hardware, model, trace, memory with `concurrent_runs` points at once, groups, policies,
/// strategies), each distinct point once, plus values an axis lists twice and the baseline; throws
/// InputError naming the first point that fails and its values. With `only`, that point alone is
/// checked (the baseline still against all of them).
void resolve_values(const SweepSpec& s, const std::vector<SweepPoint>& points, const mapping::Registry& registry,
                    int concurrent_runs, const SweepPoint* only = nullptr);
/// The summary.json of a complete result of exactly this point in `dir` (DIR/points/<id>), else null.
nlohmann::json point_summary(const std::string& dir, const SweepPoint& p);
bool point_done(const std::string& dir, const SweepPoint& p);

/// results.csv from every completed point: point, one column per axis, strategy, TBT and phase
/// times, energy per token, speedup over the baseline; failed points as rows with their error, points
/// without a complete result (not run yet, interrupted, or a damaged summary.json) as rows marked missing.
struct SweepTally {
  size_t complete = 0, failed = 0, missing = 0;  ///< complete results; points that left an error; neither
};
std::string results_csv(const SweepSpec& s, const std::vector<SweepPoint>& points, const std::string& out_dir,
                        SweepTally* tally = nullptr);
/// Draws what the axes allow (gnuplot, by argv) into `dir`: speedup heatmaps over the first two
/// axes with several values, TBT along the first, the TBT-vs-energy front. Returns "" or a one-line note.
std::string sweep_plots(const std::string& dir, const SweepSpec& s, const std::string& csv);

}  // namespace nmpsim::apps
