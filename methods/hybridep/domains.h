// HybridEP's expert domains on the physical mesh: where each token is served for every domain-size
// choice (the serve table plan_layer takes), the candidates (every combination of divisors of the
// levels' scaling factors), and one layer's per-worker loads under a candidate, from which the
// resident and stream choices are made. Plain C++. docs/MODEL.md "HybridEP: domains".
#pragma once

#include <string>
#include <vector>

#include "nmpsim/mapping/dispatch_planner.h"
#include "nmpsim/mapping/layer_plan.h"
#include "nmpsim/methods/common/hierarchy.h"
#include "nmpsim/methods/hybridep/partition.h"

namespace nmpsim::methods::hybridep {

struct DomainLayout {
  std::vector<int> sed;                  ///< domain size per level
  int box = 1;                           ///< nodes whose experts each node holds (prod sed)
  std::vector<int> serve;                ///< [native node * N + home node] -> serving node (physical)
  std::vector<std::vector<int>> box_of;  ///< per physical node: its domain box (physical nodes, itself first)
};
DomainLayout make_layout(const common::Hierarchy& h, const Levels& lv, const std::vector<int>& sed);

/// Expert copies as a dispatch planner: the piece of expert e native to node v that a token of home h
/// uses is computed at serve[v * N + h], which streams the piece's weights itself (once per piece it
/// serves for at least one token). `serve` must outlive the planner.
class ServedDispatch : public mapping::DispatchPlanner {
 public:
  explicit ServedDispatch(const std::vector<int>& serve) : serve_(&serve) {}
  void plan(const mapping::DispatchInputs& in, mapping::LayerPlan& p) const override;

 private:
  const std::vector<int>* serve_;
};

/// Bytes/s of a ring over `box` in node order: its slowest hop (0 for one member).
double box_ring_bytes_per_s(const mapping::Topology& t, std::vector<int> box);

/// Every sed with sed[l] dividing SF^l, in lexicographic order (1, ..., 1 first: EP).
std::vector<std::vector<int>> all_seds(const Levels& lv);

/// One layer's loads per physical node: bytes it sends in the dispatch (tokens to other nodes),
/// expert FLOPs and expert weight bytes it streams.
struct WorkerLoads {
  std::vector<double> a2a_bytes, expert_flops, expert_bytes;
};
WorkerLoads loads_of(const mapping::LayerPlan& p);

std::string sed_text(const std::vector<int>& sed);  ///< "2,4"
/// Parses "2,4" or a JSON list; throws InputError naming `where` on anything else.
std::vector<int> parse_sed(const std::string& text, const std::string& where);

}  // namespace nmpsim::methods::hybridep
