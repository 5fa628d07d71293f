// la_vr_router: the look-ahead router (la_router.sv) inside a valid/ready shell with a flit format
// of its own. It is the worked example of a valid/ready router description (la_vr_router.json,
// docs/RTL.md "Bring your own router"); the shell is ours, written for that purpose.
//
// Flit word (64 bits): [42:0] payload [45:43] la_port [53:46] dst y [61:54] dst x [62] tail
// [63] head. la_router's own order is the reverse, so every field moves on the way in and out.
//
// Handshake per port, valid/ready: a flit moves when valid and ready are both high at a rising
// edge. in_ready is registered (it is the inner router's FIFO-full flag, inverted). On outputs
// the shell holds the flit it presents until out_ready takes it: the inner router is stopped
// while out_ready is low, and a flit it presented then waits in a one-flit skid register per
// output, which has priority. The local output is never held (the interface keeps out_ready[4]
// high). Every output is a register or a multiplexer between registers.
module la_vr_router #(
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
    output logic [               4:0] in_ready,
    output logic [               4:0] out_valid,
    output logic [              63:0] out_flit_n,
    output logic [              63:0] out_flit_e,
    output logic [              63:0] out_flit_s,
    output logic [              63:0] out_flit_w,
    output logic [              63:0] out_flit_l,
    input  logic [               4:0] out_ready
);
  localparam int NP = 5;

  // This shell's format -> la_router's, and back.
  function automatic logic [63:0] to_inner(input logic [63:0] w);
    to_inner = {w[42:0], w[45:43], w[53:46], w[61:54], w[62], w[63]};
  endfunction
  function automatic logic [63:0] to_outer(input logic [63:0] w);
    to_outer = {w[0], w[1], w[9:2], w[17:10], w[20:18], w[63:21]};
  endfunction

  logic [4:0] inner_in_valid, inner_in_stop, inner_out_valid, inner_out_stop;
  logic [63:0] inner_out[NP];
  logic [63:0] skid_q[NP];
  logic [4:0] skid_valid_q;
  logic [63:0] outer[NP];

  assign in_ready = ~inner_in_stop;
  assign inner_in_valid = in_valid & in_ready;
  assign inner_out_stop = ~out_ready;  // a flit presented while not ready goes to the skid register

  la_router #(.MAX_DEPTH(MAX_DEPTH)) inner (
      .clk, .rst, .cfg_x, .cfg_y, .cfg_depth,
      .in_valid(inner_in_valid),
      .in_flit_n(to_inner(in_flit_n)), .in_flit_e(to_inner(in_flit_e)), .in_flit_s(to_inner(in_flit_s)),
      .in_flit_w(to_inner(in_flit_w)), .in_flit_l(to_inner(in_flit_l)),
      .out_stop(inner_out_stop),
      .out_valid(inner_out_valid),
      .out_flit_n(inner_out[0]), .out_flit_e(inner_out[1]), .out_flit_s(inner_out[2]),
      .out_flit_w(inner_out[3]), .out_flit_l(inner_out[4]),
      .in_stop(inner_in_stop));

  for (genvar o = 0; o < NP; o++) begin : g_out
    assign out_valid[o] = skid_valid_q[o] | inner_out_valid[o];
    assign outer[o] = to_outer(skid_valid_q[o] ? skid_q[o] : inner_out[o]);
    always_ff @(posedge clk) begin
      if (rst) begin
        skid_valid_q[o] <= 1'b0;
        skid_q[o] <= '0;
      end else if (skid_valid_q[o]) begin
        if (out_ready[o]) skid_valid_q[o] <= 1'b0;
      end else if (inner_out_valid[o] && !out_ready[o]) begin
        skid_valid_q[o] <= 1'b1;
        skid_q[o] <= inner_out[o];
      end
    end
  end
  assign out_flit_n = outer[0];
  assign out_flit_e = outer[1];
  assign out_flit_s = outer[2];
  assign out_flit_w = outer[3];
  assign out_flit_l = outer[4];
endmodule
