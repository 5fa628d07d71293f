// pkt_rr_arb: the round-robin arbiter of one pkt_router output (see pkt_router.sv), in the style
// of BaseJump STL's bsg_arb_round_robin. The grant is the first requester at or after the pointer
// ptr_q (wrapping at N); sel_o is its index and v_o says whether there was one.
//
// The grant depends only on reqs_i and ptr_q: it is not held while waiting for the consumer. When
// advance_i is high at a clock edge the pointer moves to the input after the one granted, whether
// or not the grant was used, so the next cycle favours the next requester. reset_i is synchronous
// and active high.
module pkt_rr_arb #(
    parameter int N = 5,  // requesters, 2 or more
    parameter int IW = $clog2(N)  // index bits; keep the default
) (
    input  logic          clk_i,
    input  logic          reset_i,
    input  logic [N-1:0]  reqs_i,
    input  logic          advance_i,
    output logic          v_o,
    output logic [IW-1:0] sel_o
);
  localparam logic [IW-1:0] LAST = IW'(N - 1);

  logic [IW-1:0] ptr_q;
  logic [IW-1:0] cand;  // the requester looked at, ptr_q + k modulo N

  always_comb begin
    v_o = 1'b0;
    sel_o = '0;
    cand = ptr_q;
    for (int k = 0; k < N; k++) begin
      if (!v_o && reqs_i[cand]) begin
        v_o = 1'b1;
        sel_o = cand;
      end
      cand = (cand == LAST) ? '0 : cand + 1'b1;
    end
  end

  always_ff @(posedge clk_i) begin
    if (reset_i) ptr_q <= '0;
    else if (advance_i) ptr_q <= (sel_o == LAST) ? '0 : sel_o + 1'b1;
  end
endmodule
