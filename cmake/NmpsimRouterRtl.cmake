# nmpsim_add_router_rtl(NAME SOURCES <.sv/.v files> TOP <module> DESCRIPTION <file.json>
#                       [INCLUDE_DIRS <dirs>] [VERILATOR_ARGS <args>] [PLUGIN]
#                       [TARGET <target> UNREGISTERED])
#
# Builds a router RTL of your own into nmpsim: Verilates it (plain C++), generates the glue that
# reads and writes its pins as its description says, and registers it as `--router rtl:NAME`
# (docs/RTL.md "Bring your own router"). The description names the clock, the reset and its
# polarity, the handshake pins per port and the straps, and gives the flit format, the protocol
# and the router's port order.
#
# Pin names: {p} is the port's name ("ports", default n e s w l) and {EXPR} an integer expression
# of i, the router's index of the port ("port_index", default N 0, E 1, S 2, W 3, L 4), such as
# {66*i+65}. A pin is `name` (one per port), `name[BIT]` (one bit of a packed vector) or
# `name[LO +: WIDTH]` (a slice: a flit within a packed link bundle).
#
# In nmpsim's own tree (rtl_checks/routers.cmake) the router goes into nmpsim_rtl. Anywhere else
# (a project of your own after find_package(nmpsim)), or with PLUGIN, it becomes a plugin,
# nmpsim_rtl_NAME.so, that the installed nmpsim loads with `--rtl-plugin FILE` (docs/RTL.md
# "Out of tree"); nothing of nmpsim is rebuilt. INCLUDE_DIRS become Verilator -I options.
# Verilator's warnings are not fatal for routers of your own (add -Wall -Wfatal... to
# VERILATOR_ARGS to see or enforce them).
# When Yosys is found, the RTL is checked for a combinational path from an input pin to an output
# pin first; one found stops the configure step with the path (docs/RTL.md "Registered outputs").
# TARGET, UNREGISTERED and NO_COMB_CHECK are for tests: build into another target, leave the router
# out of nmpsim's registry (the test calls nmpsim::rtl::register_rtl_NAME() itself) and untraced,
# and skip the static check (for mutants with a combinational path, which the run must catch).

if(NOT NMPSIM_RTL_PLUGIN_INCLUDE_DIR)  # in the tree; the installed package sets it
  set(NMPSIM_RTL_PLUGIN_INCLUDE_DIR ${NMPSIM_INCLUDE_DIR})
endif()
set(_NMPSIM_RTL_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

# Substitutes {p} and {EXPR of i} in a pin or strap pattern.
function(_nmpsim_rtl_subst out where pattern i p)
  set(_s "${pattern}")
  while(_s MATCHES "{([^{}]*)}")
    set(_expr "${CMAKE_MATCH_1}")
    if(_expr STREQUAL "p")
      set(_v "${p}")
    elseif(_expr MATCHES "^[0-9i+*() -]+$" AND _expr MATCHES "[0-9i]")
      string(REPLACE "i" "(${i})" _e "${_expr}")
      math(EXPR _v "${_e}")
    else()
      message(FATAL_ERROR "${where}: '{${_expr}}' is neither {p} nor an expression of i (digits, i, + - * and parentheses)")
    endif()
    string(REPLACE "{${_expr}}" "${_v}" _s "${_s}")
  endwhile()
  set(${out} "${_s}" PARENT_SCOPE)
endfunction()

# For pin `pin` (after substitution) of a role: a statement writing `v` (out_set), an expression
# reading it (out_get) and a compile-time check that it lies within the pin (out_assert).
function(_nmpsim_rtl_access out_set out_get out_assert where pin is_flit flit_bits top)
  set(_id "[A-Za-z_][A-Za-z0-9_]*")
  if(pin MATCHES "^(${_id})$")
    set(_n ${CMAKE_MATCH_1})
    set(_hi 0)
    if(is_flit)
      set(_set "put_flit(t.${_n}, v)")
      set(_get "get_flit(t.${_n})")
    else()
      set(_set "t.${_n} = v")
      set(_get "(t.${_n} != 0)")
    endif()
  elseif(pin MATCHES "^(${_id})\\[([0-9]+)\\]$")
    set(_n ${CMAKE_MATCH_1})
    math(EXPR _hi "${CMAKE_MATCH_2} + 1")
    if(is_flit)
      message(FATAL_ERROR "${where}: '${pin}' is one bit; a flit pin is a whole pin or a slice NAME[LO +: ${flit_bits}]")
    endif()
    set(_set "set_bit(t.${_n}, ${CMAKE_MATCH_2}, v)")
    set(_get "get_bit(t.${_n}, ${CMAKE_MATCH_2})")
  elseif(pin MATCHES "^(${_id})\\[([0-9]+) *\\+: *([0-9]+)\\]$")
    set(_n ${CMAKE_MATCH_1})
    set(_lo ${CMAKE_MATCH_2})
    set(_w ${CMAKE_MATCH_3})
    math(EXPR _hi "${_lo} + ${_w}")
    if(is_flit AND NOT _w EQUAL flit_bits)
      message(FATAL_ERROR "${where}: '${pin}' is ${_w} bits wide; flit pins are flit_bits = ${flit_bits} wide")
    elseif(NOT is_flit AND NOT _w EQUAL 1)
      message(FATAL_ERROR "${where}: '${pin}' is ${_w} bits wide; this pin is one bit")
    endif()
    if(is_flit)
      set(_set "put_slice(t.${_n}, ${_lo}, ${_w}, v)")
      set(_get "get_slice(t.${_n}, ${_lo}, ${_w})")
    else()
      set(_set "set_bit(t.${_n}, ${_lo}, v)")
      set(_get "get_bit(t.${_n}, ${_lo})")
    endif()
  else()
    message(FATAL_ERROR "${where}: '${pin}' is not a pin: NAME, NAME[BIT] or NAME[LO +: WIDTH]")
  endif()
  set(_assert "")
  if(_hi GREATER 0)
    set(_assert "static_assert(${_hi} <= pin_capacity(static_cast<std::remove_reference_t<decltype(V${top}::${_n})>*>(nullptr)), \"${where}: '${pin}' reaches beyond pin ${_n}\");\n")
  endif()
  set(${out_set} "${_set}" PARENT_SCOPE)
  set(${out_get} "${_get}" PARENT_SCOPE)
  set(${out_assert} "${_assert}" PARENT_SCOPE)
endfunction()

# The straps' assignments, as C++ statements on `t` (the model) from `s` (StrapValues).
function(_nmpsim_rtl_straps out desc where)
  set(_code "")
  string(JSON _nstraps ERROR_VARIABLE _err LENGTH "${desc}" straps)
  if(_err OR _nstraps EQUAL 0)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  set(_id "[A-Za-z_][A-Za-z0-9_]*")
  math(EXPR _last "${_nstraps} - 1")
  foreach(_k RANGE ${_last})
    string(JSON _key MEMBER "${desc}" straps ${_k})
    string(JSON _type TYPE "${desc}" straps "${_key}")
    string(JSON _value GET "${desc}" straps "${_key}")
    if(_type STREQUAL "STRING" AND _value MATCHES "^(x|y|width|height|buffer_flits)$")
      set(_v "static_cast<uint64_t>(s.${_value})")
    elseif(_type STREQUAL "NUMBER" AND _value MATCHES "^[0-9]+$")
      set(_v "uint64_t{${_value}}")
    else()
      message(FATAL_ERROR "${where}: straps.${_key}: '${_value}' is not one of x y width height buffer_flits or a non-negative integer")
    endif()
    if(_key MATCHES "^(${_id})$")
      string(APPEND _code "    t.${_key} = static_cast<std::remove_reference_t<decltype(t.${_key})>>(${_v});\n")
    elseif(_key MATCHES "^(${_id})\\[([0-9]+)\\]$")
      string(APPEND _code "    set_bit(t.${CMAKE_MATCH_1}, ${CMAKE_MATCH_2}, (${_v}) & 1u);\n")
    elseif(_key MATCHES "^(${_id})\\[([0-9]+) \\+: ([0-9]+)\\]$")
      string(APPEND _code "    put_value(t.${CMAKE_MATCH_1}, ${CMAKE_MATCH_2}, ${CMAKE_MATCH_3}, ${_v});\n")
    else()
      message(FATAL_ERROR "${where}: straps.${_key}: not a pin, a bit (pin[3]) or a slice (pin[4 +: 4])")
    endif()
  endforeach()
  set(${out} "${_code}" PARENT_SCOPE)
endfunction()

# Reading the description (macros: they run in nmpsim_add_router_rtl's scope, on its _desc and _dw).
macro(_nmpsim_json out)
  string(JSON ${out} ERROR_VARIABLE _err GET "${_desc}" ${ARGN})
  if(_err)
    message(FATAL_ERROR "${_dw}: ${_err}")
  endif()
endmacro()
# Optional fields, with their defaults.
macro(_nmpsim_json_or out default)
  string(JSON ${out} ERROR_VARIABLE _err GET "${_desc}" ${ARGN})
  if(_err)
    set(${out} "${default}")
  endif()
endmacro()

# The arguments: plugin or not, absolute sources and include directories, Verilator's arguments.
macro(_nmpsim_rtl_inputs)
  set(_plugin OFF)
  if(A_PLUGIN OR (NOT A_TARGET AND NOT TARGET nmpsim_rtl))
    set(_plugin ON)
  endif()
  get_filename_component(_desc_path ${A_DESCRIPTION} ABSOLUTE)
  if(NOT EXISTS ${_desc_path})
    message(FATAL_ERROR "${_where}: DESCRIPTION: no file ${_desc_path}")
  endif()
  set(_sources "")
  foreach(_s ${A_SOURCES})
    get_filename_component(_abs ${_s} ABSOLUTE)
    if(NOT EXISTS ${_abs})
      message(FATAL_ERROR "${_where}: SOURCES: no file ${_abs}")
    endif()
    list(APPEND _sources ${_abs})
  endforeach()
  set(_vargs -Wno-fatal -Wno-lint -Wno-style)  # a third-party router's lint is not ours to enforce
  set(_incs "")
  foreach(_d ${A_INCLUDE_DIRS})
    get_filename_component(_abs ${_d} ABSOLUTE)
    if(NOT IS_DIRECTORY ${_abs})
      message(FATAL_ERROR "${_where}: INCLUDE_DIRS: no directory ${_abs}")
    endif()
    list(APPEND _vargs -I${_abs})
    list(APPEND _incs ${_abs})
  endforeach()
  list(APPEND _vargs ${A_VERILATOR_ARGS})
endmacro()

# Clock, reset and its polarity, flit width, port names and the router's port indices, protocol.
macro(_nmpsim_rtl_header)
  _nmpsim_json(_clk clock)
  _nmpsim_json(_rst reset)
  _nmpsim_json_or(_rst_active high reset_active)
  if(NOT _rst_active MATCHES "^(high|low)$")
    message(FATAL_ERROR "${_dw}: reset_active: '${_rst_active}' is not high or low")
  endif()
  set(_rst_low 0)
  if(_rst_active STREQUAL "low")
    set(_rst_low 1)
  endif()
  _nmpsim_json_or(_flit_bits 64 flit_bits)
  set(_names n e s w l)
  set(_dirs north east south west local)
  set(_ports "")
  set(_index "")
  foreach(_i RANGE 4)
    list(GET _names ${_i} _def)
    _nmpsim_json_or(_p ${_def} ports ${_i})
    list(APPEND _ports ${_p})
    list(GET _dirs ${_i} _dir)
    _nmpsim_json_or(_x ${_i} port_index ${_dir})
    if(NOT _x MATCHES "^[0-9]+$")
      message(FATAL_ERROR "${_dw}: port_index.${_dir}: '${_x}' is not an index")
    endif()
    list(APPEND _index ${_x})
  endforeach()
  # The flow-control pins by protocol: the router's input about each output (stop, ready or a
  # returned credit) and its output about each input.
  _nmpsim_json(_protocol protocol)
  if(_protocol STREQUAL "valid_stop")
    set(_flow_in out_stop)
    set(_flow_out in_stop)
  elseif(_protocol STREQUAL "valid_ready")
    set(_flow_in out_ready)
    set(_flow_out in_ready)
  elseif(_protocol STREQUAL "credit")
    set(_flow_in in_credit)
    set(_flow_out out_credit)
  else()
    message(FATAL_ERROR "${_dw}: protocol: '${_protocol}' is not one of valid_stop valid_ready credit")
  endif()
endmacro()

# The glue's switch cases per pin role, and the checks that each pin lies within its Verilated pin.
macro(_nmpsim_rtl_pins)
  # Per role and nmpsim port: a C++ statement that writes the pin (inputs) or an expression that reads it.
  set(_asserts "")
  foreach(_role in_valid in_flit ${_flow_in} out_valid out_flit ${_flow_out})
    _nmpsim_json(_pattern pins ${_role})
    set(_cases "")
    set(_flit OFF)
    if(_role MATCHES "flit$")
      set(_flit ON)
    endif()
    foreach(_i RANGE 4)
      list(GET _ports ${_i} _p)
      list(GET _index ${_i} _ri)
      _nmpsim_rtl_subst(_pin "${_dw}: pins.${_role}" "${_pattern}" ${_ri} ${_p})
      _nmpsim_rtl_access(_set _get _assert "${_dw}: pins.${_role}" "${_pin}" ${_flit} ${_flit_bits} ${name})
      string(APPEND _asserts "${_assert}")
      if(_role MATCHES "^(in_valid|in_flit|${_flow_in})$")
        string(APPEND _cases "      case ${_i}: ${_set}; break;\n")
      else()
        string(APPEND _cases "      case ${_i}: return ${_get};\n")
      endif()
    endforeach()
    string(REPLACE "${_flow_in}" "flow_in" _R "${_role}")
    string(REPLACE "${_flow_out}" "flow_out" _R "${_R}")
    string(TOUPPER ${_R} _R)
    set(_CASES_${_R} "${_cases}")
  endforeach()
endmacro()

# The target the router is built into: a plugin of its own, or nmpsim_rtl (or TARGET).
macro(_nmpsim_rtl_target)
  if(_plugin)
    set(A_TARGET nmpsim_rtl_${name})
    add_library(${A_TARGET} MODULE)
    set_target_properties(${A_TARGET} PROPERTIES PREFIX "" CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON POSITION_INDEPENDENT_CODE ON)
    target_include_directories(${A_TARGET} PRIVATE ${NMPSIM_RTL_PLUGIN_INCLUDE_DIR})
    # Its own copy of Verilator's runtime stays inside it: nothing it defines can bind to nmpsim's.
    target_link_options(${A_TARGET} PRIVATE -Wl,--exclude-libs,ALL)
    set(_plugin01 1)
  else()
    if(NOT A_TARGET)
      set(A_TARGET nmpsim_rtl)
    endif()
    set(_plugin01 0)
  endif()
endmacro()

function(nmpsim_add_router_rtl name)
  cmake_parse_arguments(PARSE_ARGV 1 A "UNREGISTERED;PLUGIN;NO_COMB_CHECK" "TOP;DESCRIPTION;TARGET" "SOURCES;VERILATOR_ARGS;INCLUDE_DIRS")
  set(_where "nmpsim_add_router_rtl(${name})")
  if(NOT name MATCHES "^[A-Za-z][A-Za-z0-9_]*$")
    message(FATAL_ERROR "nmpsim_add_router_rtl: '${name}' is not a name (letters, digits, _)")
  endif()
  foreach(_req TOP DESCRIPTION SOURCES)
    if(NOT A_${_req})
      message(FATAL_ERROR "${_where}: ${_req} is missing")
    endif()
  endforeach()
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${_where}: unknown arguments: ${A_UNPARSED_ARGUMENTS}")
  endif()
  _nmpsim_rtl_inputs()
  file(READ ${_desc_path} _desc)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_desc_path} ${_sources})
  set(_dw "${_where}: ${A_DESCRIPTION}")
  _nmpsim_rtl_header()
  _nmpsim_rtl_pins()
  _nmpsim_rtl_straps(_straps "${_desc}" "${_dw}")
  if(NOT A_NO_COMB_CHECK)
    nmpsim_check_comb_paths(${name} TOP ${A_TOP} SOURCES ${_sources} INCLUDE_DIRS ${_incs} VERILATOR_ARGS ${A_VERILATOR_ARGS}
                          DESCRIPTION "${_desc}" CLOCK ${_clk} RESET ${_rst})
  endif()
  # Found here, not when this file is included: find_package(nmpsim) alone needs no Verilator.
  find_package(verilator 5 REQUIRED HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)
  if(_desc MATCHES "\\)nmpsimjson\"")
    message(FATAL_ERROR "${_dw}: the description may not contain )nmpsimjson\"")
  endif()
  if(A_UNREGISTERED)  # the test mutants: no VCD
    set(_traced 0)
    set(_trace "")
  else()
    set(_traced 1)
    set(_trace TRACE)
  endif()
  _nmpsim_rtl_target()
  set(_glue ${CMAKE_CURRENT_BINARY_DIR}/rtl_routers/nmpsim_rtl_${name}.cpp)
  configure_file(${_NMPSIM_RTL_CMAKE_DIR}/nmpsim_rtl_glue.cpp.in ${_glue} @ONLY)
  file(SHA1 ${_desc_path} _h)
  verilate(${A_TARGET} ${_trace}
    PREFIX V${name}
    TOP_MODULE ${A_TOP}
    SOURCES ${_sources}
    VERILATOR_ARGS -O3 --x-assign fast --x-initial fast +define+NMPSIM_RTL_DESCRIPTION_HASH=${_h} ${_vargs}
    OPT_FAST -O2)
  target_sources(${A_TARGET} PRIVATE ${_glue})
  set_source_files_properties(${_glue} PROPERTIES COMPILE_OPTIONS -w)
  if(_plugin)
    message(STATUS "nmpsim: router rtl:${name} builds into the plugin nmpsim_rtl_${name}.so (target nmpsim_rtl_${name})")
  elseif(NOT A_UNREGISTERED)
    set_property(GLOBAL APPEND PROPERTY NMPSIM_RTL_ROUTERS ${name})
  endif()
endfunction()
# Writes the registry that calls every router's registration (after the last nmpsim_add_router_rtl).
function(nmpsim_write_router_registry)
  get_property(_names GLOBAL PROPERTY NMPSIM_RTL_ROUTERS)
  set(_decl "")
  set(_calls "")
  foreach(_n ${_names})
    string(APPEND _decl "void register_rtl_${_n}();\n")
    string(APPEND _calls "    register_rtl_${_n}();\n")
  endforeach()
  set(_reg ${CMAKE_CURRENT_BINARY_DIR}/rtl_routers/nmpsim_rtl_registry.cpp)
  file(CONFIGURE OUTPUT ${_reg} @ONLY CONTENT [=[
// Generated by nmpsim_write_router_registry (cmake/NmpsimRouterRtl.cmake): do not edit.
#include "nmpsim/rtl_checks/described_router.h"

namespace nmpsim::rtl {
@_decl@
void register_all_described_routers() {
  static const bool once = [] {
@_calls@    return true;
  }();
  (void)once;
}
}  // namespace nmpsim::rtl
]=])
  target_sources(nmpsim_rtl PRIVATE ${_reg})
endfunction()

# nmpsim_check_comb_paths(NAME TOP t SOURCES ... [INCLUDE_DIRS ...] [VERILATOR_ARGS ...] DESCRIPTION json
#                         CLOCK pin RESET pin): with Yosys, fails the configure step naming a
# combinational path from an input pin to an output pin (nmpsim_comb_paths.cmake: flip-flops cut,
# the cone from the inputs, the shortest path to an output printed); the clock, the reset and the
# straps start no path. Sources Yosys 0.23 cannot read are reported and skipped (the per-cycle check
# of every run still applies). The answer is kept per hash of the sources and arguments, so a
# re-configure does not run Yosys again.
function(nmpsim_check_comb_paths name)
  cmake_parse_arguments(PARSE_ARGV 1 A "" "TOP;DESCRIPTION;CLOCK;RESET" "SOURCES;INCLUDE_DIRS;VERILATOR_ARGS")
  find_program(NMPSIM_YOSYS_EXE NAMES yosys)
  if(NOT NMPSIM_YOSYS_EXE)
    message(STATUS "nmpsim: rtl:${name}: no combinational path check at configure time (yosys not found); every run checks it")
    return()
  endif()
  find_program(NMPSIM_VERILATOR_EXE NAMES verilator HINTS $ENV{VERILATOR_ROOT}/bin)
  set(_ignore ${A_CLOCK} ${A_RESET})
  string(JSON _n ERROR_VARIABLE _err LENGTH "${A_DESCRIPTION}" straps)
  if(NOT _err AND _n GREATER 0)
    math(EXPR _last "${_n} - 1")
    foreach(_k RANGE ${_last})
      string(JSON _key MEMBER "${A_DESCRIPTION}" straps ${_k})
      string(REGEX REPLACE "\\[.*$" "" _pin "${_key}")
      list(APPEND _ignore ${_pin})
    endforeach()
  endif()
  set(_params "")
  set(_defines "")
  foreach(_a ${A_VERILATOR_ARGS})
    if(_a MATCHES "^-G(.+)$")
      list(APPEND _params "${CMAKE_MATCH_1}")
    elseif(_a MATCHES "^\\+define\\+(.+)$")
      string(REPLACE "+" ";" _d "${CMAKE_MATCH_1}")
      list(APPEND _defines ${_d})
    endif()
  endforeach()
  set(_key "${A_TOP}|${A_SOURCES}|${A_INCLUDE_DIRS}|${_params}|${_defines}|${_ignore}")
  foreach(_f ${A_SOURCES} ${_NMPSIM_RTL_CMAKE_DIR}/nmpsim_comb_paths.cmake ${_NMPSIM_RTL_CMAKE_DIR}/nmpsim_comb_paths_guards.cmake)
    file(SHA1 ${_f} _h)
    string(APPEND _key "|${_h}")
  endforeach()
  string(SHA1 _key "${_key}")
  set(_work ${CMAKE_CURRENT_BINARY_DIR}/rtl_routers/comb_${name})
  set(_answer ${_work}/answer-${_key}.txt)
  if(NOT EXISTS ${_answer})
    file(REMOVE_RECURSE ${_work})
    execute_process(COMMAND ${CMAKE_COMMAND} -DYOSYS=${NMPSIM_YOSYS_EXE} -DTOP=${A_TOP} "-DSOURCES=${A_SOURCES}"
                            "-DINCLUDE_DIRS=${A_INCLUDE_DIRS}" "-DPARAMS=${_params}" "-DDEFINES=${_defines}"
                            "-DIGNORE=${_ignore}" -DVERILATOR=${NMPSIM_VERILATOR_EXE} -DWORK=${_work}/run
                            -P ${_NMPSIM_RTL_CMAKE_DIR}/nmpsim_comb_paths.cmake
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    string(REGEX MATCH "comb path: [^\n]*" _path "${_err}")
    string(REGEX MATCH "(no combinational input-to-output path|comb path check [^\n]*)" _note "${_out}${_err}")
    if(NOT _rc EQUAL 0 AND _path STREQUAL "")
      set(_note "comb path check failed: ${_err}")
    endif()
    file(WRITE ${_answer} "path=${_path}\nnote=${_note}\n")
  endif()
  file(READ ${_answer} _text)
  string(REGEX MATCH "note=[^\n]*" _note "${_text}")
  string(SUBSTRING "${_note}" 5 -1 _note)
  if(_text MATCHES "path=comb path: ([^\n]*)")
    message(FATAL_ERROR "nmpsim_add_router_rtl(${name}): a combinational path from an input pin to an output pin: "
                        "${CMAKE_MATCH_1} (outputs must come from registers: docs/RTL.md \"Registered outputs\")")
  endif()
  message(STATUS "nmpsim: rtl:${name}: ${_note}")
endfunction()
