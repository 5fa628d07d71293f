# One-line mutants of the look-ahead router's RTL, for the tests: each goes through the same path as a
# router of your own (nmpsim_add_router_rtl with la_router.json) but stays out of nmpsim's registry;
# a test registers it by calling nmpsim::rtl::register_rtl_NAME(). They live in nmpsim_rtl so that they
# share its Verilator runtime and flags. The mutant files are rewritten only when they change.
# nmpsim_rtl_mutant(NAME BASE FROM TO): rtl/BASE.sv with FROM replaced by TO, built with BASE.json
# (the shells keep the unchanged la_router.sv beneath them).
function(nmpsim_rtl_mutant name base from to)
  set(_src ${CMAKE_CURRENT_LIST_DIR}/rtl/${base}.sv)
  file(READ ${_src} _text)
  string(FIND "${_text}" "${from}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "rtl_checks: mutant ${name}: '${from}' is no longer in ${base}.sv; update rtl_checks/mutants.cmake")
  endif()
  string(REPLACE "${from}" "${to}" _text "${_text}")
  set(_sv ${CMAKE_CURRENT_BINARY_DIR}/mutants/${name}.sv)
  file(WRITE ${_sv}.new "${_text}")
  file(COPY_FILE ${_sv}.new ${_sv} ONLY_IF_DIFFERENT)
  set(_under "")
  if(NOT base STREQUAL "la_router")
    set(_under ${CMAKE_CURRENT_LIST_DIR}/rtl/la_router.sv)
  endif()
  nmpsim_add_router_rtl(${name} UNREGISTERED NO_COMB_CHECK
    SOURCES ${_sv} ${_under}
    TOP ${base}
    DESCRIPTION ${CMAKE_CURRENT_LIST_DIR}/rtl/${base}.json
    VERILATOR_ARGS -Wno-fatal -GMAX_DEPTH=${NMPSIM_RTL_LA_MAX_DEPTH})
endfunction()
macro(nmpsim_la_mutant name from to)
  nmpsim_rtl_mutant(${name} la_router "${from}" "${to}")
endmacro()

# The lock-step check must catch this one (LaRouter.AOneLineMutantOfTheRtlIsCaught): the round-robin
# pointer stays on the winner.
nmpsim_la_mutant(la_mutant_rr "if (found) rr_q[o] <= (win == 3'd4) ? 3'd0 : win + 3'd1;" "if (found) rr_q[o] <= win;")
# The router-agnostic checks must catch these (BrokenRtl.*): East-bound flits leave South; an arrival
# into the last free FIFO slot is dropped; a head or body flit leaving its FIFO stays there and leaves
# again; out_stop is ignored.
nmpsim_la_mutant(la_broken_xy "want[p] = cand[p][20:18];" "want[p] = (cand[p][20:18] == 3'd1) ? 3'd2 : cand[p][20:18];")
nmpsim_la_mutant(la_broken_drop "if (in_valid[p] && !(taken[p] && !from_fifo[p]) && cnt < cfg_depth) begin"
                 "if (in_valid[p] && !(taken[p] && !from_fifo[p]) && cnt + 1'b1 < cfg_depth) begin")
nmpsim_la_mutant(la_broken_dup "if (taken[p] && from_fifo[p]) begin" "if (taken[p] && from_fifo[p] && cand[p][1]) begin")
nmpsim_la_mutant(la_broken_stop "if (o == NP - 1 || !out_stop[o]) begin" "if (1'b1) begin")
# The shells' handshakes (BrokenRtl.*): the valid/ready shell forgets a flit it presented while not
# ready (the adapter's hold check); the credit shell sends without credits (the mesh's credit check).
nmpsim_rtl_mutant(la_vr_broken_hold la_vr_router "skid_valid_q[o] <= 1'b1;" "skid_valid_q[o] <= 1'b0;")
nmpsim_rtl_mutant(la_credit_broken_credit la_credit_router
                  "assign inner_out_stop[o] = credits_q == {{AW{1'b0}}, inner_out_valid[o]};"
                  "assign inner_out_stop[o] = 1'b0;")
# A valid that depends on ready within the cycle (BrokenRtl.*): the per-cycle registered-output check.
# (Registered with NO_COMB_CHECK, as every mutant: Yosys would refuse it at configure time, which
# rtl_comb_path_check tests on the same mutant.)
nmpsim_rtl_mutant(la_vr_broken_comb la_vr_router "assign out_valid[o] = skid_valid_q[o] | inner_out_valid[o];"
                  "assign out_valid[o] = (skid_valid_q[o] | inner_out_valid[o]) & out_ready[o];")
