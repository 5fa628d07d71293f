#include "nmpsim/rtl_checks/mesh_lockstep.h"

#include <stdexcept>

#include "nmpsim/noc/flit_word.h"
#include "nmpsim/rtl_checks/pin_compare.h"

namespace nmpsim::rtl {

MeshLockstep::MeshLockstep(sc_core::sc_module_name name, noc::PinMesh& a, std::string a_label, noc::PinMesh& b,
                           std::string b_label)
    : sc_module(name), a_(a), b_(b), a_label_(std::move(a_label)), b_label_(std::move(b_label)) {
  const noc::NocConfig &ca = a.network().config(), &cb = b.network().config();
  if (ca.width != cb.width || ca.height != cb.height || a.period() != b.period())
    throw std::invalid_argument("MeshLockstep: the two meshes differ in size or clock");
  SC_METHOD(on_falling_edge);
  sensitive << a.clock().negedge_event();
  dont_initialize();
}

void MeshLockstep::on_falling_edge() {
  // Falling edge k >= 1 follows the rising edge that evaluated cycle k - 1 (noc/pin_mesh.h).
  const uint64_t k = falling_edges_++;
  if (k < 1 || mismatch()) return;
  const uint64_t cycle = k - 1;
  ++cycles_;
  const noc::MeshGeometry& geo = a_.network().geometry();
  for (int node = 0; node < geo.width * geo.height; ++node) {
    if (!a_.router(node) || !b_.router(node)) continue;
    for (int p = 0; p < noc::kNumPorts; ++p) {
      const PortOutputs a{a_.out_flit_word(node, p), a_.out_credit_word(node, p)};
      const PortOutputs b{b_.out_flit_word(node, p), b_.out_credit_word(node, p)};
      flits_ += noc::flit_word_valid(a.flit);
      if (same_outputs(a, b, packet_mask_)) continue;
      first_mismatch_ = describe_pin_mismatch(cycle, geo.coord(node), p, a, b, a_label_, b_label_, packet_mask_);
      return;
    }
  }
}

}  // namespace nmpsim::rtl
