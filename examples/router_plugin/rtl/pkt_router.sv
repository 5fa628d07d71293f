// pkt_router: an example wormhole mesh router in the style of open-source routers such as BaseJump
// STL's (bsg_mesh_router_buffered, bsg_wormhole_router), written as the "router of your own"
// worked example of nmpsim's docs/RTL.md. It is deliberately not shaped like nmpsim's routers:
//   - packed links: link_i[d] / link_o[d] = {valid, ready_and, data}, one per direction d, with
//     the directions in the library's order P (local) = 0, W = 1, E = 2, N = 3, S = 4;
//   - length-framed packets: the head flit carries the number of flits after it, no head/tail bits;
//   - reset_ni is active low (and synchronous);
//   - valid/ready without hold: a flit presented but not taken may be replaced by another one.
//
// Link d, bit DW+1 = v, bit DW = ready_and, bits DW-1:0 = data. On link_i[d], v and data are the
// flit arriving on input d and ready_and is the downstream's ready for output d; on link_o[d], v
// and data are the flit leaving on output d and ready_and is this router's ready for input d. A
// flit moves when v and ready_and are both high at a rising edge of clk_i.
//
// Head flit: data[XW-1:0] destination x, data[XW+YW-1:XW] destination y,
// data[XW+YW+LENW-1:XW+YW] len = flits after the head (0: a one-flit packet), payload above
// (DW >= XW+YW+LENW). Body flits are payload only. my_cord_i = {y, x} is this router's position
// (a strap); x grows towards E and y towards S.
//
// Micro-architecture: one FIFO_ELS-flit FIFO per input (pkt_fifo); XY routing of the head at each
// FIFO front; per output a round-robin arbiter (pkt_rr_arb) among the inputs whose front is a head
// for it. Once a head with len > 0 leaves on an output, the output is locked to its input until
// len more flits of that input have left on it. While an output is unlocked its arbiter pointer
// moves past the input it presented at every edge, taken or not (no hold on valid).
//
// No input pin reaches an output pin within a cycle: link_o depends only on FIFO contents and
// counts, arbiter pointers, lock state and the my_cord_i strap. The downstream ready_and only
// decides, at the edge, whether the presented flit is dequeued ("yumi" = v & ready_and).
module pkt_router #(
    parameter int XW = 4,  // x coordinate bits
    parameter int YW = 4,  // y coordinate bits
    parameter int LENW = 4,  // length field bits
    parameter int DW = 64,  // flit data bits
    parameter int FIFO_ELS = 2  // flits per input FIFO
) (
    input  logic               clk_i,
    input  logic               reset_ni,  // synchronous, active low
    input  logic [XW+YW-1:0]   my_cord_i,
`ifdef YOSYS
    // Yosys 0.23 cannot parse a multi-dimensional packed declaration ("syntax error, unexpected
    // '['"), so it reads the same 5*(DW+2) bits flat: link d is bits [d*(DW+2) +: DW+2] either way.
    input  logic [5*(DW+2)-1:0] link_i,
    output logic [5*(DW+2)-1:0] link_o
`else
    input  logic [4:0][DW+1:0] link_i,
    output logic [4:0][DW+1:0] link_o
`endif
);
  localparam int NP = 5;  // ports
  localparam int IW = 3;  // port index bits
  localparam logic [IW-1:0] DIR_P = 3'd0, DIR_W = 3'd1, DIR_E = 3'd2, DIR_N = 3'd3, DIR_S = 3'd4;

  // XY dimension order: x first (E/W), then y (S/N), then the local port.
  function automatic logic [IW-1:0] xy_dir(input logic [XW+YW-1:0] dst, input logic [XW+YW-1:0] me);
    if (dst[XW-1:0] > me[XW-1:0]) xy_dir = DIR_E;
    else if (dst[XW-1:0] < me[XW-1:0]) xy_dir = DIR_W;
    else if (dst[XW+YW-1:XW] > me[XW+YW-1:XW]) xy_dir = DIR_S;
    else if (dst[XW+YW-1:XW] < me[XW+YW-1:XW]) xy_dir = DIR_N;
    else xy_dir = DIR_P;
  endfunction

  localparam int LW = DW + 2;  // link bits
  localparam int V = DW + 1, R = DW;  // valid and ready_and bits within a link

  logic reset;  // the library's active-high reset, for the submodules
  assign reset = ~reset_ni;

  // Internal signals are flat vectors: Yosys 0.23 has no multi-dimensional packed arrays and
  // would turn unpacked ones into registers with a warning each. Link d is li/lo[d*LW +: LW].
  logic [NP*LW-1:0] li, lo;
  assign li = link_i;
  assign link_o = lo;

  // Per input i.
  logic [NP-1:0] fifo_v, fifo_ready, fifo_yumi, in_body;
  logic [NP*DW-1:0] fifo_data;  // the front flit, input i's at [i*DW +: DW]
  logic [NP*IW-1:0] dir;  // where the front flit goes if it is a head, input i's at [i*IW +: IW]
  // Per output o.
  logic [NP-1:0] arb_v, locked, out_v, out_yumi;
  logic [NP*IW-1:0] arb_sel, owner, out_sel;  // port indices, output o's at [o*IW +: IW]
  logic [NP*NP-1:0] reqs;  // bit o*NP+i: input i's front is a head for output o
  // Per input i and output o, bit i*NP+o: o dequeues i's front; o is locked to i.
  logic [NP*NP-1:0] yumi_io, body_io;

  for (genvar i = 0; i < NP; i++) begin : g_in
    pkt_fifo #(
        .WIDTH(DW),
        .ELS  (FIFO_ELS)
    ) fifo (
        .clk_i  (clk_i),
        .reset_i(reset),
        .v_i    (li[i*LW+V]),
        .ready_o(fifo_ready[i]),
        .data_i (li[i*LW+:DW]),
        .v_o    (fifo_v[i]),
        .data_o (fifo_data[i*DW+:DW]),
        .yumi_i (fifo_yumi[i])
    );
    assign dir[i*IW+:IW] = xy_dir(fifo_data[i*DW+:XW+YW], my_cord_i);
    for (genvar o = 0; o < NP; o++) begin : g_io
      assign yumi_io[i*NP+o] = out_yumi[o] & (out_sel[o*IW+:IW] == IW'(i));
      assign body_io[i*NP+o] = locked[o] & (owner[o*IW+:IW] == IW'(i));
      assign reqs[o*NP+i] = fifo_v[i] & ~in_body[i] & (dir[i*IW+:IW] == IW'(o));
    end
    // At most one output presents input i's front, so at most one dequeue per cycle.
    assign fifo_yumi[i] = |yumi_io[i*NP+:NP];
    // A locked output owns input i: its front is a body flit, for that output only.
    assign in_body[i] = |body_io[i*NP+:NP];
  end

  for (genvar o = 0; o < NP; o++) begin : g_out
    logic [LENW-1:0] left_q;  // body flits still to send; 0 = unlocked
    logic [IW-1:0] owner_q;  // the input it is locked to

    pkt_rr_arb #(
        .N(NP)
    ) arb (
        .clk_i    (clk_i),
        .reset_i  (reset),
        .reqs_i   (reqs[o*NP+:NP]),
        .advance_i(arb_v[o] & ~locked[o]),
        .v_o      (arb_v[o]),
        .sel_o    (arb_sel[o*IW+:IW])
    );

    assign locked[o] = left_q != '0;
    assign owner[o*IW+:IW] = owner_q;
    assign out_sel[o*IW+:IW] = locked[o] ? owner_q : arb_sel[o*IW+:IW];
    assign out_v[o] = locked[o] ? fifo_v[owner_q] : arb_v[o];
    assign out_yumi[o] = out_v[o] & li[o*LW+R];
    assign lo[o*LW+:LW] = {out_v[o], fifo_ready[o], fifo_data[out_sel[o*IW+:IW]*DW+:DW]};

    always_ff @(posedge clk_i) begin
      if (reset) begin
        left_q  <= '0;
        owner_q <= '0;
      end else if (locked[o]) begin
        if (out_yumi[o]) left_q <= left_q - 1'b1;
      end else if (out_yumi[o]) begin
        left_q  <= fifo_data[arb_sel[o*IW+:IW]*DW+XW+YW+:LENW];
        owner_q <= arb_sel[o*IW+:IW];
      end
    end
  end
endmodule
