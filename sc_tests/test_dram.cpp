// DRAM targets: streaming bandwidth, row-buffer timing, TLM-2.0 AT protocol rules, back-pressure,
// payload recycling, energy. Expectations are hand-derived from the spec's timing parameters.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "nmpsim/dram/dram_target.h"
#include "nmpsim/pe/dma.h"

namespace nmpsim::dram {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

double ns(const sc_time& t) { return t.to_seconds() * 1e9; }

/// Streams through a DMA and records when each job finished.
struct Streamer : sc_core::sc_module {
  SC_HAS_PROCESS(Streamer);
  Streamer(sc_core::sc_module_name n, uint32_t chunk) : sc_module(n), dma("dma", chunk) { SC_THREAD(run); }
  pe::Dma dma;
  std::vector<std::tuple<tlm::tlm_command, uint64_t, uint64_t>> jobs;  // cmd, address, bytes
  std::vector<double> done_ns;
  void run() {
    for (const auto& [cmd, addr, bytes] : jobs) {
      dma.wait_done(dma.start(cmd, addr, bytes));
      done_ns.push_back(ns(sc_core::sc_time_stamp()));
    }
  }
};

TEST(Dram, StreamingReadTakesBytesOverPeakWithinDocumentedEfficiency) {
  DramSpec spec;  // hybrid-bonded bank: 625 GB/s peak, 5% refresh, activation rate not limiting
  DramTarget dram("dram", spec);
  Streamer s("s", 1 << 20);
  s.dma.socket.bind(dram.socket);
  const uint64_t bytes = 64ULL << 20;
  s.jobs.emplace_back(tlm::TLM_READ_COMMAND, 0, bytes);
  sc_core::sc_start();
  ASSERT_EQ(s.done_ns.size(), 1u);
  const double ideal_ns = bytes / spec.peak_gbytes_per_s;  // bytes / (GB/s) = ns
  // Documented: streaming efficiency = 1 - refresh_overhead = 0.95, plus one row miss (tRCD + tCL).
  const double expected_ns = ideal_ns / 0.95 + spec.t_rcd_ns + spec.t_cl_ns;
  EXPECT_GT(s.done_ns[0], ideal_ns);
  EXPECT_NEAR(s.done_ns[0], expected_ns, 1e-4 * expected_ns);
  EXPECT_EQ(dram.stats().bytes_read, bytes);
  EXPECT_EQ(dram.stats().reads, 64u);
  EXPECT_EQ(dram.stats().activations, bytes / spec.row_bytes);
  // Energy: every bit through array and interface, plus one activation per row.
  const double bits = 8.0 * bytes;
  EXPECT_NEAR(dram.stats().energy_pj(), bits * (1.0 + 0.88) + (bytes / spec.row_bytes) * spec.activate_pj, 1.0);
  // No allocation per transaction: 64 transactions reuse at most queue_depth (in service) + 1
  // (waiting for END_REQ) pooled payloads.
  EXPECT_LE(s.dma.pool().allocated(), static_cast<size_t>(spec.queue_depth + 1));
}

TEST(Dram, ActivationRateLimitsStreamingWhenBanksAreFew) {
  DramSpec spec;
  spec.banks = 4;  // 4 x 2 KiB per 45 ns = 182 GB/s < 625 GB/s peak
  spec.refresh_overhead = 0.0;
  EXPECT_NEAR(spec.streaming_bytes_per_s(), 4 * 2048 / 45e-9, 1.0);
  DramTarget dram("dram", spec);
  Streamer s("s", 8 << 20);  // one transaction: no request boundaries (docs/MODEL.md: few banks expose tCL there)
  s.dma.socket.bind(dram.socket);
  const uint64_t bytes = 8ULL << 20;
  s.jobs.emplace_back(tlm::TLM_READ_COMMAND, 0, bytes);
  sc_core::sc_start();
  EXPECT_NEAR(s.done_ns[0], bytes / 182.044444 + 28.0, 0.001 * s.done_ns[0]);
}

TEST(Dram, ManyRequestsKeepTheRowBuffersOfAReferenceModel) {
  // 3000 requests of 1-5 rows at scattered addresses on 8 banks, one after another: the open row of
  // every bank follows the open-page rule (each request leaves the last `banks` of its rows open)
  // as a plain per-bank reference model computes it, also after the target renumbers its table of
  // requests (past 4 x banks + 1024 of them).
  DramSpec spec;
  spec.banks = 8;
  spec.row_bytes = 1024;
  DramTarget dram("dram", spec);
  Streamer s("s", 1 << 20);
  s.dma.socket.bind(dram.socket);
  std::vector<int64_t> open(8, -1);
  uint64_t hits = 0, misses = 0, conflicts = 0, activations = 0, x = 12345;
  for (int i = 0; i < 3000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t addr = (x >> 33) % 2048 * 16, len = 1 + (x >> 20) % (5 * 1024);
    s.jobs.emplace_back(i % 3 ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND, addr, len);
    const uint64_t first = addr / 1024, last = (addr + len - 1) / 1024;
    const int64_t row = static_cast<int64_t>(first / 8);
    const int64_t& o = open[first % 8];
    (o == row ? hits : o < 0 ? misses : conflicts)++;
    activations += (last - first) + (o == row ? 0 : 1);
    for (uint64_t g = last - std::min<uint64_t>(last - first, 7); g <= last; ++g)
      open[g % 8] = static_cast<int64_t>(g / 8);
  }
  sc_core::sc_start();
  ASSERT_EQ(s.done_ns.size(), 3000u);
  EXPECT_EQ(dram.stats().row_hits, hits);
  EXPECT_EQ(dram.stats().row_misses, misses);
  EXPECT_EQ(dram.stats().row_conflicts, conflicts);
  EXPECT_EQ(dram.stats().activations, activations);
  EXPECT_GT(hits, 100u);
  EXPECT_GT(conflicts, 100u);
  for (size_t i = 1; i < s.done_ns.size(); ++i) EXPECT_GT(s.done_ns[i], s.done_ns[i - 1]);
}

TEST(Dram, RowHitsAreFasterThanMissesAndConflicts) {
  DramSpec spec;
  spec.refresh_overhead = 0.0;
  DramTarget dram("dram", spec);
  Streamer s("s", 1 << 20);
  s.dma.socket.bind(dram.socket);
  const uint64_t row_stride_same_bank = uint64_t{spec.row_bytes} * spec.banks;
  s.jobs.emplace_back(tlm::TLM_READ_COMMAND, 0, 64);                     // bank 0 closed: miss
  s.jobs.emplace_back(tlm::TLM_READ_COMMAND, 64, 64);                    // same row: hit
  s.jobs.emplace_back(tlm::TLM_READ_COMMAND, row_stride_same_bank, 64);  // bank 0, other row: conflict
  sc_core::sc_start();
  ASSERT_EQ(s.done_ns.size(), 3u);
  const double xfer = 64 / spec.peak_gbytes_per_s;  // ns
  const double miss = s.done_ns[0];
  const double hit = s.done_ns[1] - s.done_ns[0];
  const double conflict = s.done_ns[2] - s.done_ns[1];
  EXPECT_NEAR(miss, spec.t_rcd_ns + spec.t_cl_ns + xfer, 1e-3);
  EXPECT_NEAR(hit, spec.t_cl_ns + xfer, 1e-3);
  EXPECT_NEAR(conflict, spec.t_rp_ns + spec.t_rcd_ns + spec.t_cl_ns + xfer, 1e-3);
  EXPECT_LT(hit, miss);
  EXPECT_LT(miss, conflict);
  EXPECT_EQ(dram.stats().row_hits, 1u);
  EXPECT_EQ(dram.stats().row_misses, 1u);
  EXPECT_EQ(dram.stats().row_conflicts, 1u);
}

/// An initiator that sends as fast as the base protocol allows and checks every rule it can see:
/// request exclusion, END_REQ before BEGIN_RESP, and response exclusion (it holds each response for
/// a while before END_RESP).
struct CheckingInitiator : sc_core::sc_module {
  SC_HAS_PROCESS(CheckingInitiator);
  CheckingInitiator(sc_core::sc_module_name n, int requests, int depth)
      : sc_module(n), socket("socket"), requests_(requests), depth_(depth) {
    socket.register_nb_transport_bw(this, &CheckingInitiator::bw);
    SC_THREAD(run);
    SC_THREAD(responder);
  }
  tlm_utils::simple_initiator_socket<CheckingInitiator> socket;
  int requests_, depth_;
  PayloadPool pool;
  tlm::tlm_generic_payload* req_open = nullptr;   // BEGIN_REQ sent, END_REQ not seen
  tlm::tlm_generic_payload* resp_open = nullptr;  // BEGIN_RESP seen, END_RESP not sent
  int end_reqs = 0, responses = 0;
  std::vector<std::string> errors;
  sc_core::sc_event end_req_ev, resp_ev;
  sc_time longest_end_req_wait;

  tlm::tlm_sync_enum bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_time&) {
    if (ph == tlm::END_REQ) {
      if (&p != req_open) errors.push_back("END_REQ for a transaction without an open request");
      req_open = nullptr;
      ++end_reqs;
      end_req_ev.notify();
      return tlm::TLM_ACCEPTED;
    }
    if (ph == tlm::BEGIN_RESP) {
      if (&p == req_open) errors.push_back("BEGIN_RESP before END_REQ");
      if (resp_open) errors.push_back("BEGIN_RESP while another response is open (response exclusion)");
      resp_open = &p;
      ++responses;
      resp_ev.notify(sc_time(3, SC_NS));  // hold the response channel for 3 ns
      return tlm::TLM_ACCEPTED;
    }
    errors.push_back("unexpected phase on the backward path");
    return tlm::TLM_COMPLETED;
  }
  void run() {
    for (int i = 0; i < requests_; ++i) {
      // Different banks and rows, so requests overlap in the target.
      tlm::tlm_generic_payload* p = pool.acquire(tlm::TLM_READ_COMMAND, uint64_t(i) * 2048 * 33, 4096);
      tlm::tlm_phase ph = tlm::BEGIN_REQ;
      sc_time d = sc_core::SC_ZERO_TIME;
      if (req_open) errors.push_back("request exclusion violated by the test itself");
      req_open = p;
      const sc_time t0 = sc_core::sc_time_stamp();
      socket->nb_transport_fw(*p, ph, d);
      while (req_open) wait(end_req_ev);
      longest_end_req_wait = std::max(longest_end_req_wait, sc_core::sc_time_stamp() - t0);
      p->release();
    }
  }
  // Ends each open response after the hold time.
  void responder() {
    while (true) {
      wait(resp_ev);
      tlm::tlm_generic_payload* p = resp_open;
      resp_open = nullptr;
      tlm::tlm_phase ph = tlm::END_RESP;
      sc_time d = sc_core::SC_ZERO_TIME;
      socket->nb_transport_fw(*p, ph, d);
    }
  }
};

TEST(Dram, FollowsTheBasePhaseRulesAndBacksPressureThroughEndReq) {
  DramSpec spec;
  spec.queue_depth = 3;
  DramTarget dram("dram", spec);
  CheckingInitiator init("init", 40, spec.queue_depth);
  init.socket.bind(dram.socket);
  sc_core::sc_start();
  EXPECT_TRUE(init.errors.empty()) << init.errors.front();
  EXPECT_EQ(init.end_reqs, 40);
  EXPECT_EQ(init.responses, 40);
  EXPECT_GT(dram.stats().end_req_withheld, 0u);  // the queue filled and END_REQ was withheld
  EXPECT_GT(init.longest_end_req_wait, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(dram.stats().max_queue, static_cast<uint64_t>(spec.queue_depth));
  EXPECT_EQ(init.pool.available(), init.pool.allocated());  // every payload came back to the pool
}

TEST(Dram, HbmStackStreamsAtItsOwnBandwidth) {
  DramSpec spec;
  spec.kind = dram::DramKind::kHbm;
  spec.peak_gbytes_per_s = 8000;
  spec.banks = 4096;
  spec.row_bytes = 1024;
  spec.capacity_bytes = 180'000'000'000ULL;
  DramTarget dram("hbm", spec);
  Streamer s("s", 16 << 20);
  s.dma.socket.bind(dram.socket);
  const uint64_t bytes = 1ULL << 30;
  s.jobs.emplace_back(tlm::TLM_WRITE_COMMAND, 0, bytes);
  sc_core::sc_start();
  EXPECT_NEAR(s.done_ns[0], bytes / 8000.0 / 0.95 + 28.0, 1e-4 * s.done_ns[0]);
  EXPECT_EQ(dram.stats().bytes_written, bytes);
}

/// SystemC errors reported while a test runs, kept instead of thrown: an exception thrown inside a SystemC
/// thread unwinds a QuickThreads coroutine stack that AddressSanitizer cannot see and reports as a
/// stack-buffer-overflow (google/sanitizers#189), so the test reads the report instead.
std::vector<std::string>& reported_errors() {
  static std::vector<std::string> errors;
  return errors;
}
void keep_errors(const sc_core::sc_report& r, const sc_core::sc_actions&) {
  if (r.get_severity() >= sc_core::SC_ERROR) reported_errors().push_back(r.get_msg());
}

TEST(Dram, OutOfRangeAccessIsReported) {
  DramSpec spec;
  spec.capacity_bytes = 1 << 20;
  DramTarget dram("dram", spec);
  Streamer s("s", 4096);
  s.dma.socket.bind(dram.socket);
  s.jobs.emplace_back(tlm::TLM_READ_COMMAND, (1 << 20) - 100, 4096);
  sc_core::sc_report_handler::set_handler(keep_errors);
  sc_core::sc_start();
  sc_core::sc_report_handler::set_handler(sc_core::sc_report_handler::default_handler);
  ASSERT_FALSE(reported_errors().empty());
  EXPECT_NE(reported_errors().front().find("DRAM access failed"), std::string::npos) << reported_errors().front();
  EXPECT_NE(reported_errors().front().find("at address 1048476"), std::string::npos) << reported_errors().front();
}

}  // namespace
}  // namespace nmpsim::dram
