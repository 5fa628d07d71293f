#include "nmpsim/rtl_checks/router_cosim.h"

#include "nmpsim/noc/flit_word.h"
#include "nmpsim/rtl_checks/pin_compare.h"

namespace nmpsim::rtl {

using noc::kNumMeshDirs;
using noc::kNumPorts;

RouterCosim::RouterCosim(sc_core::sc_module_name name, const CosimConfig& cfg, sc_core::sc_clock& clk)
    : sc_module(name),
      cfg_(cfg),
      geo_{cfg.noc.width, cfg.noc.height},
      rng_(cfg.seed),
      in_flit_("in_flit", kNumPorts),
      sc_out_flit_("sc_out_flit", kNumPorts),
      rtl_out_flit_("rtl_out_flit", kNumPorts),
      in_credit_("in_credit", kNumPorts),
      sc_out_credit_("sc_out_credit", kNumPorts),
      rtl_out_credit_("rtl_out_credit", kNumPorts),
      sc_("sc", noc::RouterParams::of(cfg.noc, cfg.node)),
      rtl_("rtl", noc::RouterParams::of(cfg.noc, cfg.node)) {
  cfg_.noc.validate();
  check_rtl_fits(cfg_.noc);
  for (noc::RouterPins* r : {static_cast<noc::RouterPins*>(&sc_), static_cast<noc::RouterPins*>(&rtl_)}) {
    const bool is_sc = r == &sc_;
    r->clk(clk);
    r->rst(rst_);
    for (int p = 0; p < kNumPorts; ++p) {
      r->in_flit[p](in_flit_[p]);
      r->in_credit[p](in_credit_[p]);
      r->out_flit[p](is_sc ? sc_out_flit_[p] : rtl_out_flit_[p]);
      r->out_credit[p](is_sc ? sc_out_credit_[p] : rtl_out_credit_[p]);
    }
  }
  const int V = cfg_.noc.vcs;
  up_credits_.assign(static_cast<size_t>(kNumPorts * V), cfg_.noc.buffer_flits);
  up_packet_.assign(static_cast<size_t>(kNumPorts * V), Packet{});
  down_count_.assign(static_cast<size_t>(kNumMeshDirs * V), 0);
  SC_METHOD(on_falling_edge);
  sensitive << clk.negedge_event();
  dont_initialize();
}

void RouterCosim::fail(const std::string& what) {
  if (rep_.harness_error.empty()) rep_.harness_error = what;
}

void RouterCosim::on_falling_edge() {
  // Falling edge k: k = 0 precedes the reset edge; at k >= 2 the routers have evaluated cycle k - 2.
  const uint64_t k = falling_edges_++;
  if (k == 0 || done_) return;
  if (k >= 2) {
    compare(k - 2);
    consume(k - 2);
  }
  rst_.write(false);
  drive(k - 1);
}

void RouterCosim::compare(uint64_t cycle) {
  ++rep_.cycles_compared;
  for (int p = 0; p < kNumPorts && !rep_.mismatch; ++p) {
    const PortOutputs sc{sc_out_flit_[p].read(), sc_out_credit_[p].read()};
    const PortOutputs rtl{rtl_out_flit_[p].read(), rtl_out_credit_[p].read()};
    if (same_outputs(sc, rtl)) continue;
    rep_.mismatch = true;
    rep_.first_mismatch = describe_pin_mismatch(cycle, geo_.coord(cfg_.node), p, sc, rtl, "sc", "rtl");
  }
}

void RouterCosim::consume(uint64_t cycle) {
  const int V = cfg_.noc.vcs;
  const int x = geo_.x(cfg_.node), y = geo_.y(cfg_.node);
  for (int p = 0; p < kNumPorts; ++p) {
    // Where a violation happened; built only when one is reported (this loop runs every cycle).
    auto at = [&] { return "cycle " + std::to_string(cycle) + " port " + noc::port_name(p) + ": "; };
    const uint32_t cw = sc_out_credit_[p].read();
    if (noc::credit_word_valid(cw)) {
      const int v = noc::credit_word_vc(cw);
      if (v >= V || ++up_credits_[p * V + v] > cfg_.noc.buffer_flits) fail(at() + "returned a credit it never took");
    }
    const uint64_t w = sc_out_flit_[p].read();
    if (!noc::flit_word_valid(w)) continue;
    ++rep_.flits_out[p];
    --in_router_;
    // XY route, written out here rather than taken from the router.
    const int dx = noc::flit_word_x(w), dy = noc::flit_word_y(w);
    const int want = dx > x   ? noc::kEast
                     : dx < x ? noc::kWest
                     : dy > y ? noc::kSouth
                     : dy < y ? noc::kNorth
                              : noc::kLocal;
    if (p != want)
      fail(at() + "flit to (" + std::to_string(dx) + "," + std::to_string(dy) + ") left on the wrong port");
    const auto id = static_cast<uint32_t>(w >> 38);
    const int seq = static_cast<int>((w >> 22) & 0xffff);
    const int vc = noc::flit_word_vc(w);
    OutPacket& op = out_packets_[id];
    if (seq != op.next_seq)
      fail(at() + "packet " + std::to_string(id) + " flit " + std::to_string(seq) + " out of order");
    if (seq == 0) {
      op.port = p;
      op.vc = vc;
    } else if (op.port != p || op.vc != vc) {
      fail(at() + "packet " + std::to_string(id) + " changed output port or VC mid-packet");
    }
    ++op.next_seq;
    if (p != noc::kLocal) {
      if (vc >= V || ++down_count_[p * V + vc] > cfg_.noc.buffer_flits)
        fail(at() + "downstream buffer overflow on VC " + std::to_string(vc) + " (credit protocol broken)");
    }
    if (w & 4u) {  // tail
      ++rep_.packets_out;
      out_packets_.erase(id);
    }
  }
}

void RouterCosim::drive(uint64_t cycle) {
  const int V = cfg_.noc.vcs;
  const bool traffic = cycle < cfg_.cycles;
  if (cfg_.fault_cycle >= 0 && cycle == static_cast<uint64_t>(cfg_.fault_cycle))
    sc_.router().debug_set_credits(noc::kEast, 0, sc_.router().credits(noc::kEast, 0) + 1);

  // Upstream senders.
  bool open_packets = false;
  for (int p = 0; p < kNumPorts; ++p) {
    uint64_t word = 0;
    const int v = static_cast<int>(rng_.below(static_cast<uint64_t>(V)));
    Packet& pk = up_packet_[p * V + v];
    const bool want = rng_.uniform() < (traffic ? cfg_.inject_prob : 1.0);
    if (want && up_credits_[p * V + v] > 0 && (pk.flits > 0 || traffic)) {
      if (pk.flits == 0) {
        pk.id = next_packet_++ & noc::kFlitWordMaxPacket;
        pk.dst = static_cast<int>(rng_.below(static_cast<uint64_t>(geo_.width * geo_.height)));
        pk.flits = 1 + static_cast<int>(rng_.below(static_cast<uint64_t>(cfg_.max_packet_flits)));
        pk.sent = 0;
      }
      noc::Flit f;
      f.packet = pk.id;
      f.dst = static_cast<uint32_t>(pk.dst);
      f.seq = static_cast<uint16_t>(pk.sent);
      f.vc = static_cast<uint8_t>(v);
      f.flags =
          static_cast<uint8_t>((pk.sent == 0 ? noc::kHeadFlit : 0) | (pk.sent + 1 == pk.flits ? noc::kTailFlit : 0));
      word = noc::encode_flit_word(f, geo_);
      --up_credits_[p * V + v];
      ++rep_.flits_in;
      ++in_router_;
      if (++pk.sent == pk.flits) pk.flits = 0;
    }
    in_flit_[p].write(word);
    for (int u = 0; u < V; ++u) open_packets |= up_packet_[p * V + u].flits > 0;
  }

  // Downstream receivers: random back-pressure.
  for (int d = 0; d < kNumMeshDirs; ++d) {
    uint32_t credit = 0;
    if (rng_.uniform() < (traffic ? cfg_.drain_prob[d] : 1.0)) {
      const int start = static_cast<int>(rng_.below(static_cast<uint64_t>(V)));
      for (int i = 0; i < V; ++i) {
        const int v = (start + i) % V;
        if (down_count_[d * V + v] > 0) {
          --down_count_[d * V + v];
          credit = noc::encode_credit_word(v);
          break;
        }
      }
    }
    in_credit_[d].write(credit);
  }

  if (!traffic) {
    const bool empty = in_router_ == 0 && !open_packets;
    if (empty || cycle >= cfg_.cycles + cfg_.max_drain_cycles) {
      rep_.drained = empty;
      done_ = true;
      for (int p = 0; p < kNumPorts; ++p) in_flit_[p].write(0);
      for (int d = 0; d < kNumMeshDirs; ++d) in_credit_[d].write(0);
    }
  }
}

CosimReport RouterCosim::report() const {
  CosimReport r = rep_;
  r.router_error = sc_.error();
  return r;
}

}  // namespace nmpsim::rtl
