// A DRAM device as a TLM-2.0 approximately-timed target (4-phase base protocol:
// BEGIN_REQ -> END_REQ -> BEGIN_RESP -> END_RESP). Timing only: data is not stored.
//
// Back-pressure: at most spec.queue_depth requests are in service; a BEGIN_REQ beyond that gets no
// END_REQ until a request completes, so the initiator (which may not send another BEGIN_REQ before
// END_REQ) stalls, as the base protocol's request exclusion rule intends. Responses are sent one at
// a time (response exclusion rule). Timing per request: see DramTarget::service() and docs/MODEL.md.
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/peq_with_cb_and_phase.h>

#include <cstdint>
#include <deque>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "nmpsim/dram/dram_spec.h"

namespace nmpsim::dram {

struct DramStats {
  uint64_t reads = 0, writes = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
  uint64_t row_hits = 0;       ///< first row of a request already open
  uint64_t row_misses = 0;     ///< bank had no open row
  uint64_t row_conflicts = 0;  ///< bank had another row open (precharge + activate)
  uint64_t activations = 0;
  double array_pj = 0, interface_pj = 0, activate_pj = 0;
  double energy_pj() const { return array_pj + interface_pj + activate_pj; }
  uint64_t max_queue = 0;
  uint64_t end_req_withheld = 0;  ///< requests that waited for END_REQ (back-pressure events)
};

class DramTarget : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(DramTarget);
  DramTarget(sc_core::sc_module_name name, const DramSpec& spec);

  /// Several initiators may bind (the node's PE DMA, the network edge's server, a user's module);
  /// each gets its responses on its own backward path.
  tlm_utils::multi_passthrough_target_socket<DramTarget> socket;

  const DramSpec& spec() const { return spec_; }
  const DramStats& stats() const { return stats_; }
  /// Time the data bus is busy with transfers (for utilisation).
  sc_core::sc_time busy_time() const { return busy_; }

 private:
  tlm::tlm_sync_enum nb_transport_fw(int id, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  /// The backward path of the initiator that sent `p`.
  tlm::tlm_sync_enum backward(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void peq_cb(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase);
  void accept(tlm::tlm_generic_payload& p);
  /// Computes when the request's last byte is transferred and updates bank/bus state and stats.
  sc_core::sc_time service(tlm::tlm_generic_payload& p);
  void done_process();
  void send_next_response();

  DramSpec spec_;
  tlm_utils::peq_with_cb_and_phase<DramTarget> peq_;
  double ps_per_byte_;
  sc_core::sc_time t_rcd_, t_rp_, t_cl_;
  // Per bank, the open row (-1 = closed) and when the bank is free again (the start of the request
  // that last used it, plus that request's bytes up to the end of the bank's row) follow from the
  // last request that used the bank: each bank keeps only that request's number, and the request
  // its rows. A long request uses every bank (4096 on the wafer HBM); computing the times of all of
  // them per request took most of a wafer-scale run (docs/PERFORMANCE.md). Same values, read lazily.
  struct Request {
    uint64_t from = 0;  // first global row whose bank it left open
    uint64_t addr = 0, len = 0;
    sc_core::sc_time start = sc_core::SC_ZERO_TIME;
  };
  struct BankUse {
    int64_t row = -1;
    sc_core::sc_time start = sc_core::SC_ZERO_TIME;
    uint64_t row_end = 0;  // bytes of the request up to the end of this bank's row; 0 = never used
  };
  std::vector<uint32_t> bank_request_;  // per bank: index into requests_, 0 = never used
  std::vector<Request> requests_;       // [0] unused; renumbered past 4 * banks + 1024 entries
  BankUse bank_use(size_t bank) const;
  sc_core::sc_time bank_free(const BankUse& u) const;
  void renumber_requests();
  sc_core::sc_time bus_free_;
  sc_core::sc_time busy_;
  int in_service_ = 0;
  std::deque<tlm::tlm_generic_payload*> waiting_;  // BEGIN_REQs whose END_REQ is withheld, in arrival order
  std::unordered_map<tlm::tlm_generic_payload*, int> initiator_;  // payload -> the binding it came from
  std::deque<std::pair<sc_core::sc_time, tlm::tlm_generic_payload*>> completions_;  // ordered by time
  sc_core::sc_event done_event_;
  std::deque<tlm::tlm_generic_payload*> responses_;  // completed, waiting for the response channel
  bool resp_busy_ = false;                           // BEGIN_RESP sent, END_RESP not yet received
  DramStats stats_;
};

}  // namespace nmpsim::dram
