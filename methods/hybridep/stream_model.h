// HybridEP's stream model (Sec. III, Eq. 3-12): the latency of one MoE layer when a share p of a
// worker's outgoing data chunks goes by all-to-all (tokens) and the rest is replaced by an
// all-gather of experts overlapped with the pre-expert computation; its optimum p* (Case 1, 2.1,
// 2.2) and the realisable domain sizes S (p = (G - S) / (G - 1)). Plain C++. docs/MODEL.md
// "HybridEP: stream model".
#pragma once

#include <vector>

namespace nmpsim::methods::hybridep {

/// One worker's inputs (the paper's symbols), in bytes and seconds.
struct StreamInputs {
  int workers = 2;          ///< G
  double bytes_per_s = 1;   ///< B
  double pre_expert_s = 0;  ///< Lat_comp^PE
  double data_bytes = 0;    ///< D: the worker's token data before the all-to-all
  double expert_bytes = 0;  ///< P_E: the worker's expert parameters
  double alpha_s = 0;       ///< start-up per collective (0 in the paper)
};

double a2a_seconds(const StreamInputs& in, double p);  ///< Eq. 3 with share p: p D (G - 1) / (G B)
double ag_seconds(const StreamInputs& in, double p);   ///< Eq. 4 with share 1 - p: (1 - p) P_E (G - 1) / B
/// Eq. 8 with Eq. 2, 5, 7 (expert computation fully overlapped): max(Lat_PE, Lat_AG) + 2 Lat_A2A.
double final_seconds(const StreamInputs& in, double p);

struct Optimum {
  double p = 1;     ///< p* (continuous)
  int case_id = 1;  ///< 22: 2D - G P_E >= 0 (AG only, p* = 0); 21: both (p* = the knee); 1: 2D < G P_E but the whole AG
                    ///< hides in Lat_PE (p* = 0)
};
/// The paper's closed form (Sec. III-E): Case 2.1 p* = 1 - B Lat_PE / (P_E (G - 1)); Case 2.2 p* = 0.
Optimum optimal_p(const StreamInputs& in);

/// p of domain size S among G workers: (G - S) / (G - 1) (Definition 1; the share of the G - 1
/// chunks sent by all-to-all), and the form of the paper's Table IV: 1 - S / G, and 1 for EP (S = 1),
/// as it lists the candidates 0, 0.5, 0.75, 1 for S = 8, 4, 2, 1.
double p_of_domain(int workers, int sed);
double p_table_form(int workers, int sed);

/// Among the divisors S of G, the one of least max over workers of final_seconds (per-worker
/// inputs; all with the same G); ties to the smaller S (fewer copies).
int best_domain(const std::vector<StreamInputs>& workers);

}  // namespace nmpsim::methods::hybridep
