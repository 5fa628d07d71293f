// One port's outputs of two router implementations, compared: the wording every co-simulation
// check uses for its first mismatch.
#pragma once

#include <cstdint>
#include <string>

#include "nmpsim/noc/flit_word.h"
#include "nmpsim/noc/noc_config.h"

namespace nmpsim::rtl {

/// The two sides of one router port in one cycle.
struct PortOutputs {
  uint64_t flit = 0;
  uint32_t credit = 0;
};

/// Whether the flit words (compared under `flit_mask`) and the credit words agree.
inline bool same_outputs(const PortOutputs& a, const PortOutputs& b, uint64_t flit_mask = ~uint64_t{0}) {
  return (a.flit & flit_mask) == (b.flit & flit_mask) && a.credit == b.credit;
}

/// For outputs that differ: "cycle C router (x,y) port P out_flit: <a_label> <flit> vs <b_label>
/// <flit>" (or out_credit when only the credits differ).
inline std::string describe_pin_mismatch(uint64_t cycle, const std::string& router, int port, const PortOutputs& a,
                                         const PortOutputs& b, const std::string& a_label, const std::string& b_label,
                                         uint64_t flit_mask = ~uint64_t{0}) {
  const std::string what = (a.flit & flit_mask) != (b.flit & flit_mask)
                               ? "out_flit: " + a_label + " " + noc::describe_flit_word(a.flit) + " vs " + b_label +
                                     " " + noc::describe_flit_word(b.flit)
                               : "out_credit: " + a_label + " " + noc::describe_credit_word(a.credit) + " vs " +
                                     b_label + " " + noc::describe_credit_word(b.credit);
  return "cycle " + std::to_string(cycle) + " router " + router + " port " + noc::port_name(port) + " " + what;
}

}  // namespace nmpsim::rtl
