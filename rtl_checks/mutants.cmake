# One-line mutants of the look-ahead router's RTL, for the tests: each goes through the same path as a
# router of your own (nmpsim_add_router_rtl with la_router.json) but stays out of nmpsim's registry;
# a test registers it by calling nmpsim::rtl::register_rtl_NAME(). They live in nmpsim_rtl so that they
# share its Verilator runtime and flags. The mutant files are rewritten only when they change.
set(_la_src ${CMAKE_CURRENT_LIST_DIR}/rtl/la_router.sv)
function(nmpsim_la_mutant name from to)
  file(READ ${_la_src} _text)
  string(FIND "${_text}" "${from}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "rtl_checks: mutant ${name}: '${from}' is no longer in la_router.sv; update rtl_checks/mutants.cmake")
  endif()
  string(REPLACE "${from}" "${to}" _text "${_text}")
  set(_sv ${CMAKE_CURRENT_BINARY_DIR}/mutants/${name}.sv)
  file(WRITE ${_sv}.new "${_text}")
  file(COPY_FILE ${_sv}.new ${_sv} ONLY_IF_DIFFERENT)
  nmpsim_add_router_rtl(${name} UNREGISTERED
    SOURCES ${_sv}
    TOP la_router
    DESCRIPTION ${CMAKE_CURRENT_LIST_DIR}/rtl/la_router.json
    VERILATOR_ARGS -Wno-fatal -GMAX_DEPTH=${NMPSIM_RTL_LA_MAX_DEPTH})
endfunction()

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
