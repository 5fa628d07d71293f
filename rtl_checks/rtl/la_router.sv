// la_router: synthesizable look-ahead wormhole router with valid/stop handshakes, the second
// router micro-architecture of nmpsim (the first is nmp_router). Five ports (N=0, E=1, S=2, W=3,
// L=4), no virtual channels, one FIFO per input, look-ahead XY routing, a single-cycle bypass and
// round-robin output arbitration with a wormhole lock. noc/la_router.h is its cycle model and
// documents the behaviour; sc_tests/test_la_router.cpp holds this RTL to it cycle for cycle.
//
// Flit word (64 bits): [0] head [1] tail [9:2] dst x [17:10] dst y [20:18] la_port (the output
// port at the router the flit enters) [63:21] payload, carried unchanged.
//
// Handshake per port, valid/stop (on/off): the sender drives in_valid_* and in_flit_*; this router
// raises in_stop[p] (registered) when input p's FIFO is full, and the sender must not send while it
// is high. On outputs the roles swap: out_stop[o] high means "send nothing on o this cycle"; the
// local output (o = 4) is never stopped. Every output is a register.
//
// Straps (constant after reset): cfg_x, cfg_y this router's coordinates (x grows East, y South);
// cfg_depth FIFO slots per input, 1..MAX_DEPTH.
module la_router #(
    parameter int MAX_DEPTH = 16  // power of two
) (
    input  logic                      clk,
    input  logic                      rst,        // synchronous, active high
    input  logic [               7:0] cfg_x,
    input  logic [               7:0] cfg_y,
    input  logic [$clog2(MAX_DEPTH):0] cfg_depth,
    input  logic [               4:0] in_valid,
    input  logic [              63:0] in_flit_n,
    input  logic [              63:0] in_flit_e,
    input  logic [              63:0] in_flit_s,
    input  logic [              63:0] in_flit_w,
    input  logic [              63:0] in_flit_l,
    input  logic [               4:0] out_stop,
    output logic [               4:0] out_valid,
    output logic [              63:0] out_flit_n,
    output logic [              63:0] out_flit_e,
    output logic [              63:0] out_flit_s,
    output logic [              63:0] out_flit_w,
    output logic [              63:0] out_flit_l,
    output logic [               4:0] in_stop
);
  localparam int NP = 5;
  localparam int AW = $clog2(MAX_DEPTH);
  localparam logic [2:0] LOCAL = 3'd4;

  logic [63:0] in_flit[NP];
  logic [63:0] out_flit_q[NP];
  assign in_flit[0] = in_flit_n;
  assign in_flit[1] = in_flit_e;
  assign in_flit[2] = in_flit_s;
  assign in_flit[3] = in_flit_w;
  assign in_flit[4] = in_flit_l;
  assign out_flit_n = out_flit_q[0];
  assign out_flit_e = out_flit_q[1];
  assign out_flit_s = out_flit_q[2];
  assign out_flit_w = out_flit_q[3];
  assign out_flit_l = out_flit_q[4];

  logic [63:0] fifo_q[NP][MAX_DEPTH];
  logic [AW-1:0] head_q[NP];
  logic [AW:0] count_q[NP];
  logic [NP-1:0] locked_q;  // output o is held by input owner_q[o] until a tail passes
  logic [2:0] owner_q[NP];
  logic [2:0] rr_q[NP];  // next input to favour at output o
  logic [4:0] out_valid_q, in_stop_q;
  assign out_valid = out_valid_q;
  assign in_stop = in_stop_q;

  // XY route at the router (x, y) for destination (dx, dy): X first, then Y, then Local.
  function automatic logic [2:0] xy(input logic [7:0] x, input logic [7:0] y, input logic [7:0] dx,
                                    input logic [7:0] dy);
    if (dx > x) xy = 3'd1;
    else if (dx < x) xy = 3'd3;
    else if (dy > y) xy = 3'd2;
    else if (dy < y) xy = 3'd0;
    else xy = LOCAL;
  endfunction

  // The port a flit leaving on o takes at the next router (look-ahead); 0 on the local output.
  function automatic logic [2:0] next_port(input logic [2:0] o, input logic [7:0] dx, input logic [7:0] dy);
    logic [7:0] nx, ny;
    nx = cfg_x;
    ny = cfg_y;
    case (o)
      3'd0: ny = cfg_y - 8'd1;
      3'd1: nx = cfg_x + 8'd1;
      3'd2: ny = cfg_y + 8'd1;
      3'd3: nx = cfg_x - 8'd1;
      default: ;
    endcase
    next_port = (o == LOCAL) ? 3'd0 : xy(nx, ny, dx, dy);
  endfunction

  // One clocked process: the arbitration below is combinational (blocking temporaries) and
  // feeds the registers through non-blocking assignments, so it is evaluated once per edge.
  always_ff @(posedge clk) begin : step
    logic [63:0] cand[NP];
    logic [NP-1:0] has, from_fifo, taken;
    logic [2:0] want[NP];
    logic [2:0] win, i;
    logic [3:0] sum;
    logic found;
    logic [AW:0] cnt, tail;
    logic [AW-1:0] hd;

    if (rst) begin
      for (int p = 0; p < NP; p++) begin
        head_q[p] <= '0;
        count_q[p] <= '0;
        owner_q[p] <= '0;
        rr_q[p] <= '0;
        out_flit_q[p] <= '0;
      end
      locked_q <= '0;
      out_valid_q <= '0;
      in_stop_q <= '0;
    end else begin
      // Candidates: the FIFO front, or the arriving flit when the FIFO is empty (bypass).
      for (int p = 0; p < NP; p++) begin
        from_fifo[p] = count_q[p] != '0;
        has[p] = from_fifo[p] || in_valid[p];
        cand[p] = from_fifo[p] ? fifo_q[p][head_q[p]] : in_flit[p];
        want[p] = cand[p][20:18];
      end
      // Per output: the lock holder, else round-robin among requesting heads.
      taken = '0;
      for (int o = 0; o < NP; o++) begin
        out_valid_q[o] <= 1'b0;
        out_flit_q[o] <= '0;
        if (o == NP - 1 || !out_stop[o]) begin
          found = 1'b0;
          win = '0;
          if (locked_q[o]) begin
            found = has[owner_q[o]] && want[owner_q[o]] == 3'(o);
            win = owner_q[o];
          end else begin
            for (int k = 0; k < NP; k++) begin
              sum = {1'b0, rr_q[o]} + 4'(k);
              i = (sum >= 4'd5) ? 3'(sum - 4'd5) : 3'(sum);
              if (!found && has[i] && want[i] == 3'(o) && cand[i][0]) begin
                found = 1'b1;
                win = i;
              end
            end
            if (found) rr_q[o] <= (win == 3'd4) ? 3'd0 : win + 3'd1;
          end
          if (found) begin
            taken[win] = 1'b1;
            locked_q[o] <= !cand[win][1];
            owner_q[o] <= win;
            out_valid_q[o] <= 1'b1;
            out_flit_q[o] <= {cand[win][63:21], next_port(3'(o), cand[win][9:2], cand[win][17:10]), cand[win][17:0]};
          end
        end
      end
      // FIFOs: pop what left from a FIFO; push an arrival that did not bypass.
      for (int p = 0; p < NP; p++) begin
        cnt = count_q[p];
        hd = head_q[p];
        if (taken[p] && from_fifo[p]) begin
          hd = ({1'b0, hd} + 1'b1 == cfg_depth) ? '0 : hd + 1'b1;
          cnt = cnt - 1'b1;
        end
        if (in_valid[p] && !(taken[p] && !from_fifo[p]) && cnt < cfg_depth) begin
          tail = {1'b0, hd} + cnt;
          if (tail >= cfg_depth) tail = tail - cfg_depth;
          fifo_q[p][tail[AW-1:0]] <= in_flit[p];
          cnt = cnt + 1'b1;
        end
        head_q[p] <= hd;
        count_q[p] <= cnt;
        in_stop_q[p] <= cnt == cfg_depth;
      end
    end
  end
endmodule
