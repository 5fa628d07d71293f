// nmp_router: synthesizable input-buffered wormhole router, the RTL twin of noc::Router
// (noc/router.h). Five ports (N=0, E=1, S=2, W=3, L=4), virtual channels, XY routing,
// round-robin VC and switch allocation, credit flow control, a configurable pipeline delay and
// per-output link serialisation. Given the same inputs it produces the same outputs in the same
// cycles as the C++ router; docs/MODEL.md ("RTL router and pin-level meshes") explains how, and
// the ctest checks RtlRouterCosim.* and RtlMesh.* hold it to that.
//
// Parameters are the hardware's capacities; the cfg_* straps select the configuration inside
// them (as in noc::NocConfig) and must stay constant after reset:
//   cfg_x/y     this router's mesh coordinates (x grows East, y grows South)
//   cfg_vcs     virtual channels per input port, 1..MAX_VCS
//   cfg_depth   flit slots per VC buffer, 1..MAX_DEPTH (also the initial credit count)
//   cfg_delay   router delay in cycles, 1..MAX_DELAY: a flit arriving in cycle a may leave in
//               cycle a + cfg_delay - 1 at the earliest
//   cfg_cpf_q_* cycles per flit of each output link, unsigned Q16.16, >= 1.0 (0x10000)
//
// Pins, one set per port. Flit word (64 bits):
//   [0] valid  [1] head  [2] tail  [5:3] vc  [13:6] dst x  [21:14] dst y  [37:22] seq
//   [63:38] packet id (payload: carried unchanged)
// Credit word (4 bits): [0] valid [3:1] vc. in_credit_* returns a slot of the output port's
// downstream VC; out_credit_* frees a slot of this router's input VC. The local output needs no
// credits (the network interface sinks every flit), so there is no in_credit_l.
// Every output is a register: inputs sampled at a rising edge affect outputs after that edge.
module nmp_router #(
    parameter int MAX_VCS   = 4,
    parameter int MAX_DEPTH = 64,  // power of two
    parameter int MAX_DELAY = 8    // power of two
) (
    input  logic        clk,
    input  logic        rst,          // synchronous, active high
    input  logic [ 7:0] cfg_x,
    input  logic [ 7:0] cfg_y,
    input  logic [ 3:0] cfg_vcs,
    input  logic [$clog2(MAX_DEPTH):0] cfg_depth,
    input  logic [ 6:0] cfg_delay,
    input  logic [31:0] cfg_cpf_q_n,
    input  logic [31:0] cfg_cpf_q_e,
    input  logic [31:0] cfg_cpf_q_s,
    input  logic [31:0] cfg_cpf_q_w,
    input  logic [63:0] in_flit_n,
    input  logic [63:0] in_flit_e,
    input  logic [63:0] in_flit_s,
    input  logic [63:0] in_flit_w,
    input  logic [63:0] in_flit_l,
    input  logic [ 3:0] in_credit_n,
    input  logic [ 3:0] in_credit_e,
    input  logic [ 3:0] in_credit_s,
    input  logic [ 3:0] in_credit_w,
    output logic [63:0] out_flit_n,
    output logic [63:0] out_flit_e,
    output logic [63:0] out_flit_s,
    output logic [63:0] out_flit_w,
    output logic [63:0] out_flit_l,
    output logic [ 3:0] out_credit_n,
    output logic [ 3:0] out_credit_e,
    output logic [ 3:0] out_credit_s,
    output logic [ 3:0] out_credit_w,
    output logic [ 3:0] out_credit_l
);
  localparam int NP = 5;  // ports
  localparam int ND = 4;  // mesh directions (ports with links and credits)
  localparam int NIVC = NP * MAX_VCS;
  localparam int IW = $clog2(NIVC);
  localparam int VW = MAX_VCS > 1 ? $clog2(MAX_VCS) : 1;
  localparam int DW = $clog2(MAX_DEPTH);
  localparam int CW = DW + 1;
  localparam int LW = $clog2(MAX_DELAY);
  localparam logic [31:0] ONE = 32'h0001_0000;  // one cycle in Q16.16
  localparam logic [2:0] LOCAL = 3'd4;

  // ---------------------------------------------------------------- pins as arrays
  logic [63:0] in_flit[NP];
  logic [ 3:0] in_credit[ND];
  logic [31:0] cfg_cpf_q[ND];
  logic [63:0] out_flit_q[NP];
  logic [ 3:0] out_credit_q[NP];
  assign in_flit[0] = in_flit_n;
  assign in_flit[1] = in_flit_e;
  assign in_flit[2] = in_flit_s;
  assign in_flit[3] = in_flit_w;
  assign in_flit[4] = in_flit_l;
  assign in_credit[0] = in_credit_n;
  assign in_credit[1] = in_credit_e;
  assign in_credit[2] = in_credit_s;
  assign in_credit[3] = in_credit_w;
  assign cfg_cpf_q[0] = cfg_cpf_q_n;
  assign cfg_cpf_q[1] = cfg_cpf_q_e;
  assign cfg_cpf_q[2] = cfg_cpf_q_s;
  assign cfg_cpf_q[3] = cfg_cpf_q_w;
  assign out_flit_n = out_flit_q[0];
  assign out_flit_e = out_flit_q[1];
  assign out_flit_s = out_flit_q[2];
  assign out_flit_w = out_flit_q[3];
  assign out_flit_l = out_flit_q[4];
  assign out_credit_n = out_credit_q[0];
  assign out_credit_e = out_credit_q[1];
  assign out_credit_s = out_credit_q[2];
  assign out_credit_w = out_credit_q[3];
  assign out_credit_l = out_credit_q[4];

  // ---------------------------------------------------------------- state
  logic [63:0] dl_q[NP][MAX_DELAY];  // pipeline: dl_q[p][k] arrived k + 1 cycles ago
  logic [63:0] buf_q[NIVC][MAX_DEPTH];  // input VC rings, ivc = port * MAX_VCS + vc
  logic [DW-1:0] head_q[NIVC];
  logic [CW-1:0] cnt_q[NIVC];
  logic [NIVC-1:0] alloc_q;  // input VC holds an output VC (mesh directions only)
  logic [1:0] aport_q[NIVC];
  logic [VW-1:0] avc_q[NIVC];
  logic [MAX_VCS-1:0] busy_q[ND];  // output VC holds a packet
  logic [CW-1:0] cred_q[ND][MAX_VCS];
  logic [31:0] lbusy_q[ND];  // Q16.16 time until the output link is free, plus one cycle minus 1
  logic [IW-1:0] va_rr_q[ND];
  logic [VW-1:0] in_rr_q[NP];
  logic [2:0] out_rr_q[NP];

  // ---------------------------------------------------------------- helpers
  // Round-robin arbiter: lowest set bit at or above ptr, else the lowest set bit.
  function automatic logic [IW-1:0] rr_pick(input logic [NIVC-1:0] req, input logic [IW-1:0] ptr);
    logic [IW-1:0] lo, hi;
    logic found_hi;
    lo = '0;
    hi = '0;
    found_hi = 1'b0;
    for (int k = NIVC - 1; k >= 0; k--) begin
      if (req[k]) begin
        lo = IW'(k);
        if (IW'(k) >= ptr) begin
          hi = IW'(k);
          found_hi = 1'b1;
        end
      end
    end
    rr_pick = found_hi ? hi : lo;
  endfunction

  function automatic logic [VW-1:0] lowest_zero(input logic [MAX_VCS-1:0] b);
    logic [VW-1:0] r;
    r = '0;
    for (int k = MAX_VCS - 1; k >= 0; k--) if (!b[k]) r = VW'(k);
    lowest_zero = r;
  endfunction

  // XY dimension-order routing: X first (East grows x), then Y (South grows y), then Local.
  function automatic logic [2:0] xy_route(input logic [7:0] dx, input logic [7:0] dy);
    if (dx > cfg_x) xy_route = 3'd1;
    else if (dx < cfg_x) xy_route = 3'd3;
    else if (dy > cfg_y) xy_route = 3'd2;
    else if (dy < cfg_y) xy_route = 3'd0;
    else xy_route = LOCAL;
  endfunction

  // ---------------------------------------------------------------- one cycle
  // A single clocked process: the allocation logic below is combinational (blocking assignments
  // to process-local temporaries) and feeds the registers through non-blocking assignments.
  // Keeping it inside the clocked process means a simulator evaluates it once per rising edge,
  // not again whenever an input pin changes between edges.
  always_ff @(posedge clk) begin : step
    logic [63:0] arr[NP];  // flit entering the VC buffers this cycle (after the pipeline delay)
    logic [MAX_VCS-1:0] vmask;
    logic [NIVC-1:0] has, ready, valloc;
    logic [63:0] front[NIVC];
    logic [2:0] route[NIVC];
    logic [2:0] eport[NIVC];
    logic [VW-1:0] evc[NIVC];
    logic [VW-1:0] vovc[NIVC];
    logic [MAX_VCS-1:0] va_busy[ND];
    logic [IW-1:0] va_rr_d[ND];
    logic [CW-1:0] credv[ND][MAX_VCS];
    logic [VW-1:0] in_pick[NP];
    logic [NP-1:0] out_req[NP];
    logic [NP-1:0] gnt, pop;
    logic [2:0] gnt_in[NP];
    logic [VW-1:0] gnt_vc[NP];
    logic [VW-1:0] pop_v[NP];
    logic [63:0] gflit[NP];
    logic [NIVC-1:0] req;
    logic [MAX_VCS-1:0] busy, cand;
    logic [IW-1:0] ptr, g;
    logic [VW-1:0] ov, pv;
    logic [2:0] gi, o;
    logic [IW-1:0] i, iv;
    logic arrive, granted, from_buf, write, take;
    logic [MAX_VCS-1:0] freed;

    if (rst) begin
      for (int p = 0; p < NP; p++) begin
        for (int k = 0; k < MAX_DELAY; k++) dl_q[p][k] <= '0;
        in_rr_q[p] <= '0;
        out_rr_q[p] <= '0;
        out_flit_q[p] <= '0;
        out_credit_q[p] <= '0;
      end
      for (int k = 0; k < NIVC; k++) begin
        head_q[k] <= '0;
        cnt_q[k] <= '0;
        aport_q[k] <= '0;
        avc_q[k] <= '0;
      end
      alloc_q <= '0;
      for (int d = 0; d < ND; d++) begin
        busy_q[d] <= '0;
        va_rr_q[d] <= '0;
        lbusy_q[d] <= ONE - 32'd1;  // as if the link had last been free at cycle -1
        for (int v = 0; v < MAX_VCS; v++) cred_q[d][v] <= cfg_depth;
      end
    end else begin
      for (int v = 0; v < MAX_VCS; v++) vmask[v] = 32'(v) < 32'(cfg_vcs);
      for (int p = 0; p < NP; p++)
        arr[p] = cfg_delay <= 7'd1 ? in_flit[p] : dl_q[p][LW'(cfg_delay - 7'd2)];

      // Route compute on the front flit of every input VC (the arriving flit if the VC is empty).
      for (int p = 0; p < NP; p++) begin
        for (int v = 0; v < MAX_VCS; v++) begin
          i = IW'(p * MAX_VCS + v);
          front[i] = cnt_q[i] != '0 ? buf_q[i][head_q[i]] : arr[p];
          has[i] = vmask[v] && (cnt_q[i] != '0 || (arr[p][0] && arr[p][5:3] == 3'(v)));
          route[i] = xy_route(front[i][13:6], front[i][21:14]);
        end
      end

      // VC allocation per output direction: round-robin over requesting input VCs, lowest free VC.
      valloc = '0;
      for (int k = 0; k < NIVC; k++) vovc[k] = '0;
      for (int d = 0; d < ND; d++) begin
        req = '0;
        for (int k = 0; k < NIVC; k++) req[k] = has[k] && !alloc_q[k] && route[k] == 3'(d);
        busy = busy_q[d];
        ptr = va_rr_q[d];
        for (int n = 0; n < MAX_VCS; n++) begin
          if (req != '0 && (busy & vmask) != vmask) begin
            g = rr_pick(req, ptr);
            ov = lowest_zero(busy);
            valloc[g] = 1'b1;
            vovc[g] = ov;
            req[g] = 1'b0;
            busy[ov] = 1'b1;
            ptr = 32'(g) == NIVC - 1 ? '0 : g + 1'b1;
          end
        end
        va_busy[d] = busy;
        va_rr_d[d] = ptr;
      end

      for (int k = 0; k < NIVC; k++) begin
        eport[k] = alloc_q[k] ? {1'b0, aport_q[k]} : route[k];
        evc[k] = alloc_q[k] ? avc_q[k] : vovc[k];
        ready[k] = has[k] && (alloc_q[k] || valloc[k] || route[k] == LOCAL);
      end
      for (int d = 0; d < ND; d++)
        for (int v = 0; v < MAX_VCS; v++)
          credv[d][v] = cred_q[d][v] + CW'(in_credit[d][0] && in_credit[d][3:1] == 3'(v));

      // Switch allocation, input stage: one ready VC per input whose output link is free and whose
      // output VC has a credit (the local output needs neither).
      for (int p = 0; p < NP; p++) out_req[p] = '0;
      for (int p = 0; p < NP; p++) begin
        cand = '0;
        for (int v = 0; v < MAX_VCS; v++) begin
          i = IW'(p * MAX_VCS + v);
          o = eport[i];
          cand[v] = ready[i] && (o == LOCAL || (lbusy_q[o[1:0]] < ONE && credv[o[1:0]][evc[i]] != '0));
        end
        pv = VW'(rr_pick(NIVC'(cand), IW'(in_rr_q[p])));
        in_pick[p] = pv;
        if (cand != '0) out_req[eport[p*MAX_VCS+32'(pv)]][p] = 1'b1;
      end

      // Output stage: one input per output, round-robin.
      gnt = '0;
      pop = '0;
      for (int p = 0; p < NP; p++) begin
        gnt_in[p] = '0;
        gnt_vc[p] = '0;
        pop_v[p] = '0;
        gflit[p] = '0;
      end
      for (int q = 0; q < NP; q++) begin
        if (out_req[q] != '0) begin
          gi = 3'(rr_pick(NIVC'(out_req[q]), IW'(out_rr_q[q])));
          pv = in_pick[gi];
          i = IW'(32'(gi) * MAX_VCS + 32'(pv));
          gnt[q] = 1'b1;
          gnt_in[q] = gi;
          gnt_vc[q] = evc[i];
          pop[gi] = 1'b1;
          pop_v[gi] = pv;
          gflit[q] = {front[i][63:6], 3'(evc[i]), front[i][2:0]};
        end
      end

      // ---- register updates
      for (int p = 0; p < NP; p++) begin
        dl_q[p][0] <= in_flit[p];
        for (int k = 1; k < MAX_DELAY; k++) dl_q[p][k] <= dl_q[p][k-1];
        for (int v = 0; v < MAX_VCS; v++) begin
          iv = IW'(p * MAX_VCS + v);
          arrive = vmask[v] && arr[p][0] && arr[p][5:3] == 3'(v);
          granted = pop[p] && pop_v[p] == VW'(v);
          from_buf = cnt_q[iv] != '0;
          write = arrive && !(granted && !from_buf);  // not bypassed straight out
          take = granted && from_buf;
          if (write) buf_q[iv][head_q[iv]+cnt_q[iv][DW-1:0]] <= arr[p];
          if (take) head_q[iv] <= head_q[iv] + 1'b1;
          cnt_q[iv] <= cnt_q[iv] + CW'(write) - CW'(take);
          if (granted && front[iv][2]) alloc_q[iv] <= 1'b0;
          else if (valloc[iv]) begin
            alloc_q[iv] <= 1'b1;
            aport_q[iv] <= route[iv][1:0];
            avc_q[iv] <= vovc[iv];
          end
        end
        out_credit_q[p] <= pop[p] ? {3'(pop_v[p]), 1'b1} : 4'd0;
        if (pop[p]) in_rr_q[p] <= 32'(pop_v[p]) + 1 >= 32'(cfg_vcs) ? '0 : pop_v[p] + 1'b1;
        out_flit_q[p] <= gnt[p] ? gflit[p] : '0;
        if (gnt[p]) out_rr_q[p] <= gnt_in[p] == 3'd4 ? 3'd0 : gnt_in[p] + 3'd1;
      end
      for (int d = 0; d < ND; d++) begin
        freed = '0;
        if (gnt[d] && gflit[d][2]) freed[gnt_vc[d]] = 1'b1;
        busy_q[d] <= va_busy[d] & ~freed;
        va_rr_q[d] <= va_rr_d[d];
        for (int v = 0; v < MAX_VCS; v++)
          cred_q[d][v] <= credv[d][v] - CW'(gnt[d] && gnt_vc[d] == VW'(v));
        if (gnt[d]) lbusy_q[d] <= lbusy_q[d] + cfg_cpf_q[d] - ONE;
        else lbusy_q[d] <= lbusy_q[d] >= ONE ? lbusy_q[d] - ONE : '0;
      end
    end
  end
endmodule
