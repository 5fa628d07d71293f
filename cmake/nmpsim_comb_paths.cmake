# nmpsim_comb_paths.cmake - configure-time check that a (System)Verilog module has no
# combinational path from a top-level input port to a top-level output port.
#
#   cmake -DYOSYS=/usr/bin/yosys -DTOP=<module> -DSOURCES="a.sv;b.sv"
#         [-DINCLUDE_DIRS="dir1;dir2"] [-DDEFINES="X=1;Y"] [-DPARAMS="DW=64;FIFO_ELS=2"]
#         [-DIGNORE="clk_i;reset_ni;my_cord_i"] [-DWORK=<scratch dir>] [-DTIMEOUT=<seconds>]
#         [-DVERILATOR=/usr/bin/verilator]
#         -P nmpsim_comb_paths.cmake
#
# IGNORE: input ports that may not start a path (clock, reset, straps). Outputs are never ignored.
# VERILATOR (optional): also elaborate with `verilator --xml-only` and compare every top-level
#   port width with Yosys's, to catch SystemVerilog that Yosys 0.23 reads wrongly without error.
#
# Outcome, exactly one of:
#   message(FATAL_ERROR "comb path: <input> -> <cell/wire> -> ... -> <output>")   exit code 1
#       preceded by a STATUS line naming every output port with a path
#   message(STATUS "no combinational input-to-output path")                       exit code 0
#   message(STATUS "comb path check skipped: yosys could not read the sources: <first error>")
#                                                                                  exit code 0
#   (also "comb path check skipped: yosys not found" / "...: yosys timed out after N s")
#
# Yosys (and Verilator) run by argv: execute_process with a list, no shell (Yosys through
# `cmake -E env HOME=<WORK>`, since it rewrites $HOME/.yosys_history on exit). Everything
# written (the generated script, logs, small result files) goes to WORK, by default
# ./nmpsim_comb_paths.work under the current directory.
#
# Method, and why:
#  1. read_verilog -sv -defer; chparam -set (PARAMS); hierarchy -check -top; proc; flatten.
#     -defer: nothing is elaborated with its default parameters first (nmp_router with small
#     PARAMS: 55 s without it, about 20 s with it).
#  2. Flip-flops are CUT: every edge-triggered FF cell ($dff $dffe $adff $adffe $sdff $sdffe
#     $sdffce $dffsr $dffsre $aldff $aldffe $ff, and the $_..._ gate forms) is deleted, so its Q
#     net has no driver and no cone passes through it. Latches ($dlatch, $adlatch, $sr) stay:
#     they are transparent, a path through one is a path. Deleting is simpler and safer than
#     `%co*` stop rules (-$dff[...] must name every FF type and port) and than `ltp -noff` (the
#     longest path anywhere, not input to output) or `sta` (needs cell timing). A side effect:
#     opt_clean then drops all logic that only fed FFs, so the rest of the flow is small.
#  3. Memories are NOT collected: no `memory`, `memory -nomap` or `memory_map`. After proc a
#     reg array is $memwr_v2 cells (write ports: clocked, no outputs) plus $memrd cells (read
#     ports: ADDR/EN -> DATA, asynchronous since memory_dff never ran), tied to each other by the
#     MEMID parameter only, not by wires. So a memory adds exactly one combinational arc, read
#     address -> read data: a FIFO read at a registered pointer is clean, an array read at an
#     input-driven index is a path, and write data never reaches read data in the same cycle.
#     (`memory -nomap` collects the ports into one $mem_v2 cell whose write-data inputs would
#     reach its read-data outputs: false alarm. `memory_map` is right but turns big arrays into
#     flops and muxes.) memory_nordff is run anyway, so a read port that is synchronous for any
#     reason becomes an asynchronous read plus FFs, which step 2 cuts.
#  4. techmap to 1-bit gates, then splitnets -ports to 1-bit wires. Yosys's select works on
#     whole wires and cells: on a word-level netlist one input-driven bit of a bus, or of a
#     $mux/$pmux, would drag the other bits along (false alarms). At bit level the cone is exact.
#  5. select: fwd = i:* %co* (IGNOREd ports lose their port flag first, so they start nothing);
#     hits = fwd & o:* (every output bit with a path, listed in a text file); one = one hit
#     (%R1, fixed seed: deterministic); core = (one %ci*) & fwd = the cells and wires on the
#     paths into that bit, written as a small JSON netlist (json -o, selection only).
#  6. This script walks the core JSON backwards (breadth first) from that output bit to an
#     input bit, and prints that shortest path: named wires and the innermost source line of
#     each cell (with its flattened instance), consecutive cells from one line merged.
# The check is structural, like STA: a path that is logically never enabled still counts, unless
# constant folding (opt_expr) removes it, e.g. a mux whose select is a parameter.
#
# Yosys 0.23 reads some SystemVerilog WRONGLY WITHOUT AN ERROR; that would make "clean" a lie,
# so these are turned into the "skipped" outcome: a packed array of a typedef'd type
# (`link_t [4:0] x` comes out as one link_t), found by scanning SOURCES (not `include files);
# an interface port or struct-array member access, seen as "Identifier `\x.y' / `\x[2].v' is
# implicitly declared"; and, with -DVERILATOR, any top-level port whose width differs.
# Constructs it rejects outright (skipped with Yosys's error): `[4:0][65:0]` multi-dimensional
# packed arrays, unpacked-array ports, `inside`, assignment patterns '{...}, foreach, streaming
# operators, `parameter type`, enum methods, `module m import p::*;` headers.

cmake_minimum_required(VERSION 3.19)

# ---------------------------------------------------------------- arguments
if(NOT DEFINED YOSYS OR YOSYS STREQUAL "")
  find_program(YOSYS NAMES yosys)
endif()
if(NOT DEFINED TOP OR TOP STREQUAL "")
  message(FATAL_ERROR "nmpsim_comb_paths: -DTOP=<module> is required")
endif()
if(NOT DEFINED SOURCES OR "${SOURCES}" STREQUAL "")
  message(FATAL_ERROR "nmpsim_comb_paths: -DSOURCES=<file;file...> is required")
endif()
if(NOT DEFINED WORK OR WORK STREQUAL "")
  set(WORK "${CMAKE_CURRENT_BINARY_DIR}/nmpsim_comb_paths.work")
endif()
if(NOT DEFINED TIMEOUT OR TIMEOUT STREQUAL "")
  set(TIMEOUT 600)
endif()
if(NOT YOSYS OR NOT EXISTS "${YOSYS}")
  message(STATUS "comb path check skipped: yosys not found")
  return()
endif()
get_filename_component(WORK "${WORK}" ABSOLUTE)
file(MAKE_DIRECTORY "${WORK}")
set(_skip "comb path check skipped: yosys could not read the sources")

set(_srcs "")
foreach(_s IN LISTS SOURCES)
  if(NOT _s STREQUAL "")
    get_filename_component(_s "${_s}" ABSOLUTE)
    list(APPEND _srcs "${_s}")
  endif()
endforeach()
set(_incs "")
foreach(_i IN LISTS INCLUDE_DIRS)
  if(NOT _i STREQUAL "")
    get_filename_component(_i "${_i}" ABSOLUTE)
    list(APPEND _incs "${_i}")
  endif()
endforeach()

# A token of a Yosys script: quoted (Yosys strips the quotes) unless it is a plain word. Yosys
# scripts have no escape for '"', so such an argument is refused.
function(_cp_quote out str)
  if(str MATCHES "\"")
    message(FATAL_ERROR "nmpsim_comb_paths: '\"' in a file name or option is not supported: ${str}")
  endif()
  if(str MATCHES "^[A-Za-z0-9_./+=:,@-]+$")
    set(${out} "${str}" PARENT_SCOPE)
  else()
    set(${out} "\"${str}\"" PARENT_SCOPE)
  endif()
endfunction()

# ---------------------------------------------------------------- source scan (see header)
# A packed array of a typedef'd type: Yosys 0.23 keeps one element and says nothing.
foreach(_s IN LISTS _srcs)
  if(NOT EXISTS "${_s}")
    continue()   # Yosys reports it
  endif()
  file(READ "${_s}" _txt)
  string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" " " _txt "${_txt}")
  string(REGEX REPLACE "//[^\n]*" "" _txt "${_txt}")
  string(REPLACE ";" " @SC@ " _txt "${_txt}")
  # typedef <type> NAME [unpacked];   and   typedef struct/enum/union {...} NAME;
  string(REGEX MATCHALL "typedef[^@{]*@SC@" _tds "${_txt}")
  string(REGEX MATCHALL "}[ \t\r\n]*[A-Za-z_][A-Za-z0-9_$]*[ \t\r\n]*@SC@" _tds2 "${_txt}")
  set(_names "")
  foreach(_t IN LISTS _tds _tds2)
    string(REGEX REPLACE "(\\[[^]]*\\][ \t\r\n]*)*@SC@$" "" _t "${_t}")
    if(_t MATCHES "([A-Za-z_][A-Za-z0-9_$]*)[ \t\r\n]*$")
      list(APPEND _names "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  string(REGEX REPLACE "typedef[^@{]*@SC@" " " _body "${_txt}")
  string(REGEX REPLACE "}[ \t\r\n]*[A-Za-z_][A-Za-z0-9_$]*[ \t\r\n]*@SC@" " " _body "${_body}")
  foreach(_n IN LISTS _names)
    string(REPLACE "$" "\\$" _nre "${_n}")
    if(_body MATCHES "(^|[^A-Za-z0-9_$.'])${_nre}[ \t\r\n]*\\[")
      message(STATUS "${_skip}: ${_s}: packed array of typedef '${_n}' "
                     "(Yosys 0.23 silently keeps one element; use a plain [N*W-1:0] vector)")
      return()
    endif()
  endforeach()
endforeach()

# ---------------------------------------------------------------- the Yosys script
set(_read "read_verilog -sv -defer")
foreach(_d IN LISTS DEFINES)
  if(NOT _d STREQUAL "")
    _cp_quote(_q "${_d}")
    string(APPEND _read " -D ${_q}")
  endif()
endforeach()
foreach(_i IN LISTS _incs)
  _cp_quote(_q "${_i}")
  string(APPEND _read " -I ${_q}")
endforeach()
foreach(_s IN LISTS _srcs)
  _cp_quote(_q "${_s}")
  string(APPEND _read " ${_q}")
endforeach()

# Parameters: one `chparam -set A 1 -set B 2 TOP` before hierarchy. (`hierarchy -chparam` would
# elaborate the top once instead of twice, but in Yosys 0.23 it trips an assertion when a
# submodule has a parameter of the same name, e.g. la_vr_router's la_router #(.MAX_DEPTH(..)).)
# A value is passed as written: 4, 8'hff, or "text" for a string; no white space.
_cp_quote(_top "${TOP}")
set(_sets "")
foreach(_p IN LISTS PARAMS)
  if(_p MATCHES "^([A-Za-z_][A-Za-z0-9_$]*)=([^ \t\n]+)$")
    string(APPEND _sets " -set ${CMAKE_MATCH_1} ${CMAKE_MATCH_2}")
  elseif(NOT _p STREQUAL "")
    message(FATAL_ERROR "nmpsim_comb_paths: PARAMS entry '${_p}' is not NAME=VALUE")
  endif()
endforeach()
set(_hier "")
if(NOT _sets STREQUAL "")
  set(_hier "chparam${_sets} ${_top}\n")
endif()
string(APPEND _hier "hierarchy -check -top ${_top}")

set(_unport "")
foreach(_n IN LISTS IGNORE)
  if(NOT _n STREQUAL "")
    _cp_quote(_q "i:${_n}")
    string(APPEND _unport "delete -port ${_q}\n")
  endif()
endforeach()

set(_ffs "t:$dff t:$dffe t:$adff t:$adffe t:$sdff t:$sdffe t:$sdffce t:$dffsr t:$dffsre")
string(APPEND _ffs " t:$aldff t:$aldffe t:$ff t:$_FF_ t:$_DFF_* t:$_DFFE_* t:$_SDFF_*")
string(APPEND _ffs " t:$_SDFFE_* t:$_SDFFCE_* t:$_ALDFF_* t:$_ALDFFE_* t:$_DFFSR_* t:$_DFFSRE_*")

file(REMOVE "${WORK}/hits.txt" "${WORK}/target.txt" "${WORK}/core.json" "${WORK}/ports.il" "${WORK}/yosys.log")
file(WRITE "${WORK}/comb_paths.ys" "\
${_read}
${_hier}
proc
flatten
log NMPSIM_COMB_PATHS_ELABORATED
dump -o ports.il x:*
memory_nordff
delete ${_ffs}
${_unport}opt_clean
opt_expr
opt_clean
techmap
opt_expr
opt_clean
splitnets -ports
select -set nmpsim_fwd i:* %co*
select -set nmpsim_hit @nmpsim_fwd o:* %i
select -write hits.txt @nmpsim_hit
select -set nmpsim_one @nmpsim_hit %R1
select -write target.txt @nmpsim_one
select -set nmpsim_core @nmpsim_one %ci* @nmpsim_fwd %i
json -o core.json @nmpsim_core
log NMPSIM_COMB_PATHS_DONE
")

# ---------------------------------------------------------------- run it
# HOME=WORK: Yosys (readline build) rewrites $HOME/.yosys_history at every exit, even with -s.
execute_process(
  COMMAND "${CMAKE_COMMAND}" -E env "HOME=${WORK}"
          "${YOSYS}" -q -l "${WORK}/yosys.log" -s "${WORK}/comb_paths.ys"
  WORKING_DIRECTORY "${WORK}"
  RESULT_VARIABLE _rc
  OUTPUT_VARIABLE _out
  ERROR_VARIABLE _err
  TIMEOUT ${TIMEOUT})

set(_log "")
if(EXISTS "${WORK}/yosys.log")
  file(READ "${WORK}/yosys.log" _log)
endif()
if(NOT _rc EQUAL 0 OR NOT _log MATCHES "NMPSIM_COMB_PATHS_DONE")
  set(_first "")
  foreach(_txt IN ITEMS "${_err}" "${_log}" "${_out}")
    string(REGEX MATCH "[^\n]*ERROR[^\n]*" _first "${_txt}")
    if(NOT _first STREQUAL "")
      break()
    endif()
  endforeach()
  if(_first STREQUAL "")
    set(_first "yosys exited with '${_rc}'")
  endif()
  string(STRIP "${_first}" _first)
  if(_rc MATCHES "[Tt]ime")
    message(STATUS "comb path check skipped: yosys timed out after ${TIMEOUT} s")
  elseif(NOT _log MATCHES "NMPSIM_COMB_PATHS_ELABORATED")
    message(STATUS "${_skip}: ${_first}")
  else()
    # The sources were read; the analysis itself failed (a limit of this script, not the RTL).
    message(WARNING "comb path check failed after elaboration: ${_first} (see ${WORK}/yosys.log)")
  endif()
  return()
endif()

# The misread guards live in their own file (same variables, same scope); its return() ends only
# that file, so it says "skipped" in _cp_skipped.
set(_cp_skipped FALSE)
include("${CMAKE_CURRENT_LIST_DIR}/nmpsim_comb_paths_guards.cmake")
if(_cp_skipped)
  return()
endif()
# ---------------------------------------------------------------- result
set(_hits "")
if(EXISTS "${WORK}/hits.txt")
  file(STRINGS "${WORK}/hits.txt" _hitlines)
  foreach(_h IN LISTS _hitlines)
    string(REGEX REPLACE "^[^/]*/" "" _h "${_h}")
    list(APPEND _hits "${_h}")
  endforeach()
endif()
if(NOT _hits)
  message(STATUS "no combinational input-to-output path")
  return()
endif()
list(LENGTH _hits _nhits)
# The output bit whose path is printed: one hit, picked by Yosys (%R1: a fixed-seed generator,
# so the same design gives the same pick); the core JSON holds that bit's cone only.
file(STRINGS "${WORK}/target.txt" _target LIMIT_COUNT 1)
string(REGEX REPLACE "^[^/]*/" "" _target "${_target}")

# The path print: walking the core JSON back from the output bit (its own file, same scope).
include("${CMAKE_CURRENT_LIST_DIR}/nmpsim_comb_paths_walk.cmake")
