// la_credit_router: the look-ahead router (la_router.sv) inside a credit-based shell with a flit
// format of its own and no look-ahead field. It is the worked example of a credit-protocol router
// description (la_credit_router.json, docs/RTL.md "Bring your own router"); the shell is ours,
// written for that purpose.
//
// Flit word (128 bits): [3:0] reserved (zero) [4] head [5] tail [13:6] dst y [21:14] dst x
// [49:22] reserved [91:50] payload (42 bits, across the boundary between the two 64-bit halves)
// [127:92] reserved. The shell computes the inner router's look-ahead port on entry.
//
// Handshake per port, credits (no virtual channels): the upstream sends a flit only with a credit;
// it starts with cfg_depth credits, the capacity of this shell's input FIFO. out_credit[p] (a
// register) returns one credit when a flit leaves input p's FIFO for the inner router; an arriving
// flit with an empty FIFO goes to the inner router in the same cycle (bypass). in_credit[o] returns
// a credit for output o's downstream buffer; the shell counts them from cfg_depth and stops the
// inner router's output o when none is left (the local output, o = 4, needs none).
module la_credit_router #(
    parameter int MAX_DEPTH = 16  // power of two
) (
    input  logic                      clk,
    input  logic                      rst,        // synchronous, active high
    input  logic [               7:0] cfg_x,
    input  logic [               7:0] cfg_y,
    input  logic [$clog2(MAX_DEPTH):0] cfg_depth,
    input  logic [               4:0] in_valid,
    input  logic [             127:0] in_flit_n,
    input  logic [             127:0] in_flit_e,
    input  logic [             127:0] in_flit_s,
    input  logic [             127:0] in_flit_w,
    input  logic [             127:0] in_flit_l,
    output logic [               4:0] out_credit,
    output logic [               4:0] out_valid,
    output logic [             127:0] out_flit_n,
    output logic [             127:0] out_flit_e,
    output logic [             127:0] out_flit_s,
    output logic [             127:0] out_flit_w,
    output logic [             127:0] out_flit_l,
    input  logic [               4:0] in_credit
);
  localparam int NP = 5;
  localparam int AW = $clog2(MAX_DEPTH);

  // XY port at this router for a destination (la_router's numbering: N E S W L).
  function automatic logic [2:0] xy(input logic [7:0] dx, input logic [7:0] dy);
    if (dx > cfg_x) xy = 3'd1;
    else if (dx < cfg_x) xy = 3'd3;
    else if (dy > cfg_y) xy = 3'd2;
    else if (dy < cfg_y) xy = 3'd0;
    else xy = 3'd4;
  endfunction
  // This shell's format -> la_router's ([0] head [1] tail [9:2] x [17:10] y [20:18] la_port [63:21]
  // payload), with the look-ahead port for this router; and back.
  /* verilator lint_off UNUSEDSIGNAL */  // reserved bits in, la_port and the padding bit out
  function automatic logic [63:0] to_inner(input logic [127:0] w);
    to_inner = {1'b0, w[91:50], xy(w[21:14], w[13:6]), w[13:6], w[21:14], w[5], w[4]};
  endfunction
  function automatic logic [127:0] to_outer(input logic [63:0] w);
    to_outer = {36'b0, w[62:21], 28'b0, w[9:2], w[17:10], w[1], w[0], 4'b0};
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  logic [127:0] in_flit[NP];
  assign in_flit[0] = in_flit_n;
  assign in_flit[1] = in_flit_e;
  assign in_flit[2] = in_flit_s;
  assign in_flit[3] = in_flit_w;
  assign in_flit[4] = in_flit_l;

  logic [4:0] inner_in_valid, inner_in_stop, inner_out_valid, inner_out_stop, credit_q;
  logic [63:0] inner_in[NP];
  logic [63:0] inner_out[NP];
  assign out_credit = credit_q;
  assign out_valid = inner_out_valid;

  la_router #(.MAX_DEPTH(MAX_DEPTH)) inner (
      .clk, .rst, .cfg_x, .cfg_y, .cfg_depth,
      .in_valid(inner_in_valid),
      .in_flit_n(inner_in[0]), .in_flit_e(inner_in[1]), .in_flit_s(inner_in[2]),
      .in_flit_w(inner_in[3]), .in_flit_l(inner_in[4]),
      .out_stop(inner_out_stop),
      .out_valid(inner_out_valid),
      .out_flit_n(inner_out[0]), .out_flit_e(inner_out[1]), .out_flit_s(inner_out[2]),
      .out_flit_w(inner_out[3]), .out_flit_l(inner_out[4]),
      .in_stop(inner_in_stop));
  assign out_flit_n = to_outer(inner_out[0]);
  assign out_flit_e = to_outer(inner_out[1]);
  assign out_flit_s = to_outer(inner_out[2]);
  assign out_flit_w = to_outer(inner_out[3]);
  assign out_flit_l = to_outer(inner_out[4]);

  // Input FIFOs in front of the inner router, with a bypass when empty.
  for (genvar p = 0; p < NP; p++) begin : g_in
    logic [127:0] fifo_q[MAX_DEPTH];
    logic [AW-1:0] head_q;
    logic [AW:0] count_q;
    logic give;
    assign give = (count_q != '0 || in_valid[p]) && !inner_in_stop[p];
    assign inner_in_valid[p] = give;
    assign inner_in[p] = to_inner(count_q != '0 ? fifo_q[head_q] : in_flit[p]);
    always_ff @(posedge clk) begin : step
      logic [AW:0] cnt, tail;
      logic [AW-1:0] hd;
      if (rst) begin
        head_q <= '0;
        count_q <= '0;
        credit_q[p] <= 1'b0;
      end else begin
        cnt = count_q;
        hd = head_q;
        if (give && count_q != '0) begin
          hd = ({1'b0, hd} + 1'b1 == cfg_depth) ? '0 : hd + 1'b1;
          cnt = cnt - 1'b1;
        end
        if (in_valid[p] && !(give && count_q == '0)) begin
          tail = {1'b0, hd} + cnt;
          if (tail >= cfg_depth) tail = tail - cfg_depth;
          fifo_q[tail[AW-1:0]] <= in_flit[p];
          cnt = cnt + 1'b1;
        end
        head_q <= hd;
        count_q <= cnt;
        credit_q[p] <= give;
      end
    end
  end

  // Output credits: what the downstream buffer has free, less the flit just sent (in the inner
  // router's output register).
  for (genvar o = 0; o < NP - 1; o++) begin : g_out
    logic [AW:0] credits_q;
    assign inner_out_stop[o] = credits_q == {{AW{1'b0}}, inner_out_valid[o]};
    always_ff @(posedge clk) begin
      if (rst) credits_q <= cfg_depth;
      else credits_q <= credits_q - {{AW{1'b0}}, inner_out_valid[o]} + {{AW{1'b0}}, in_credit[o]};
    end
  end
  assign inner_out_stop[NP-1] = 1'b0;
  wire unused = in_credit[NP-1];  // the local output needs no credits
endmodule
