// pkt_fifo: the input FIFO of pkt_router (see pkt_router.sv), a small one-read one-write FIFO in
// the style of BaseJump STL's bsg_fifo_1r1w_small: valid/ready on the input side, valid/yumi on
// the output side. yumi_i ("you may dequeue") is a promise by the consumer that it took data_o in
// this cycle; it may only be raised while v_o is high.
//
// ready_o (not full) and v_o/data_o (the front entry) depend only on the registers below, never on
// v_i or yumi_i of the same cycle, so the FIFO accepts no flit while full, even if one leaves in
// the same cycle. reset_i is synchronous and active high, as in the library.
module pkt_fifo #(
    parameter int WIDTH = 64,
    parameter int ELS = 2  // entries, 1 or more
) (
    input  logic             clk_i,
    input  logic             reset_i,
    input  logic             v_i,
    output logic             ready_o,
    input  logic [WIDTH-1:0] data_i,
    output logic             v_o,
    output logic [WIDTH-1:0] data_o,
    input  logic             yumi_i
);
  localparam int PW = (ELS > 1) ? $clog2(ELS) : 1;  // read/write pointer bits
  localparam int CW = $clog2(ELS + 1);  // count bits, 0..ELS
  localparam logic [PW-1:0] LAST = PW'(ELS - 1);
  localparam logic [CW-1:0] FULL = CW'(ELS);

  logic [WIDTH-1:0] mem_q[ELS];
  logic [PW-1:0] rptr_q, wptr_q;
  logic [CW-1:0] count_q;
  logic enq;

  assign ready_o = count_q != FULL;
  assign v_o = count_q != '0;
  assign data_o = mem_q[rptr_q];
  assign enq = v_i & ready_o;

  always_ff @(posedge clk_i) begin
    if (reset_i) begin
      rptr_q  <= '0;
      wptr_q  <= '0;
      count_q <= '0;
    end else begin
      if (enq) wptr_q <= (wptr_q == LAST) ? '0 : wptr_q + 1'b1;
      if (yumi_i) rptr_q <= (rptr_q == LAST) ? '0 : rptr_q + 1'b1;
      if (enq && !yumi_i) count_q <= count_q + 1'b1;
      else if (!enq && yumi_i) count_q <= count_q - 1'b1;
    end
  end

  // Storage has no reset: an entry is only read after it was written.
  always_ff @(posedge clk_i) begin
    if (enq) mem_q[wptr_q] <= data_i;
  end
endmodule
