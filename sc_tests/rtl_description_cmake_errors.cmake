# ctest "rtl_description_cmake_errors": every way a description's pins, straps, reset or port map, or
# nmpsim_add_router_rtl's arguments, can be wrong stops the configure step of a project of one's own
# with a message naming the field (cmake/NmpsimRouterRtl.cmake); so does a combinational path from
# an input pin to an output pin, named. Arguments: -DSRC=<nmpsim source dir>
# -DWORK=<scratch dir>. Each case configures a tiny project and expects failure with its message.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/r.sv" "module r(input logic clk); endmodule\n")
set(_good_pins [=["in_valid": "link_i[{66*i+65}]", "out_ready": "link_i[{66*i+64}]", "in_flit": "link_i[{66*i} +: 64]",
  "out_valid": "link_o[{66*i+65}]", "in_ready": "link_o[{66*i+64}]", "out_flit": "link_o[{66*i} +: 64]"]=])
set(_flit [=["flit": {"dst_x": [0, 4], "dst_y": [4, 4], "length": [8, 4], "payload": [12, 52]}]=])
# name | what replaces a piece of the good description (FROM => TO), or ARGS:<extra arguments> | expected
# name | what replaces a piece of the good description (FROM => TO), or ARGS:<extra arguments> | expected.
# One variable per case: list splitting would trip over the brackets in pin names.
set(_case1 "flit_bit|\"in_flit\": \"link_i[{66*i} +: 64]\"=>\"in_flit\": \"link_i[{66*i}]\"|pins.in_flit: 'link_i[198]' is one bit; a flit pin is a whole pin or a slice")
set(_case2 "flit_width|\"in_flit\": \"link_i[{66*i} +: 64]\"=>\"in_flit\": \"link_i[{66*i} +: 32]\"|pins.in_flit: 'link_i[198 +: 32]' is 32 bits wide; flit pins are flit_bits = 64 wide")
set(_case3 "bit_width|\"in_valid\": \"link_i[{66*i+65}]\"=>\"in_valid\": \"link_i[{66*i} +: 2]\"|pins.in_valid: 'link_i[198 +: 2]' is 2 bits wide; this pin is one bit")
set(_case4 "expression|\"in_valid\": \"link_i[{66*i+65}]\"=>\"in_valid\": \"link_i[{x+1}]\"|pins.in_valid: '{x+1}' is neither {p} nor an expression of i")
set(_case5 "not_a_pin|\"out_valid\": \"link_o[{66*i+65}]\"=>\"out_valid\": \"link o\"|pins.out_valid: 'link o' is not a pin: NAME, NAME[BIT] or NAME[LO +: WIDTH]")
set(_case6 "reset|\"reset_active\": \"low\"=>\"reset_active\": \"falling\"|reset_active: 'falling' is not high or low")
set(_case7 "port_index|\"north\": 3=>\"north\": \"up\"|port_index.north: 'up' is not an index")
set(_case8 "strap|\"my_cord_i[0 +: 4]\"=>\"my_cord_i[3:0]\"|straps.my_cord_i[3:0]: not a pin, a bit (pin[3]) or a slice (pin[4 +: 4])")
set(_case9 "strap_value|: \"y\"}=>: \"z\"}|straps.my_cord_i[4 +: 4]: 'z' is not one of x y width height buffer_flits")
set(_case10 "protocol|\"valid_ready\"=>\"ready_valid\"|protocol: 'ready_valid' is not one of valid_stop valid_ready credit")
set(_case11 "sources|ARGS:SOURCES;nowhere.sv|SOURCES: no file")
set(_case12 "includes|ARGS:INCLUDE_DIRS;nowhere|INCLUDE_DIRS: no directory")
set(_case13 "unknown|ARGS:FLAGS;-O2|unknown arguments: FLAGS")
set(_ncases 13)
set(_good "{\"protocol\": \"valid_ready\", \"valid_hold\": false, \"clock\": \"clk\", \"reset\": \"rst\", \"reset_active\": \"low\",
  \"port_index\": {\"north\": 3, \"east\": 2, \"south\": 4, \"west\": 1, \"local\": 0},
  \"pins\": {${_good_pins}}, ${_flit}, \"straps\": {\"my_cord_i[0 +: 4]\": \"x\", \"my_cord_i[4 +: 4]\": \"y\"}}")
set(_failed "")
foreach(_k RANGE 1 ${_ncases})
  if(NOT "${_case${_k}}" MATCHES "^([^|]*)\\|([^|]*)\\|(.*)$")
    message(FATAL_ERROR "case ${_k} is malformed")
  endif()
  set(_name "${CMAKE_MATCH_1}")
  set(_change "${CMAKE_MATCH_2}")
  set(_expected "${CMAKE_MATCH_3}")
  set(_desc "${_good}")
  set(_args "")
  if(_change MATCHES "^ARGS:(.*)$")
    string(REPLACE ";" " " _args "${CMAKE_MATCH_1}")
  else()
    string(FIND "${_change}" "=>" _arrow)
    string(SUBSTRING "${_change}" 0 ${_arrow} _from)
    math(EXPR _arrow "${_arrow} + 2")
    string(SUBSTRING "${_change}" ${_arrow} -1 _to)
    string(FIND "${_desc}" "${_from}" _at)
    if(_at EQUAL -1)
      message(FATAL_ERROR "case ${_name}: '${_from}' is not in the good description")
    endif()
    string(REPLACE "${_from}" "${_to}" _desc "${_desc}")
  endif()
  set(_dir "${WORK}/${_name}")
  file(MAKE_DIRECTORY "${_dir}")
  file(WRITE "${_dir}/r.json" "${_desc}")
  file(WRITE "${_dir}/CMakeLists.txt" "cmake_minimum_required(VERSION 3.16)\nproject(t NONE)\n"
    "set(NMPSIM_RTL_PLUGIN_INCLUDE_DIR \"${WORK}\")\ninclude(\"${SRC}/cmake/NmpsimRouterRtl.cmake\")\n"
    "nmpsim_add_router_rtl(r SOURCES \"${WORK}/r.sv\" TOP r DESCRIPTION r.json PLUGIN ${_args})\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${_dir}" -B "${_dir}/build" RESULT_VARIABLE _r OUTPUT_VARIABLE _out
                  ERROR_VARIABLE _err)
  string(REPLACE "\n" " " _flat "${_err}")
  string(REGEX REPLACE " +" " " _flat "${_flat}")
  string(FIND "${_flat}" "${_expected}" _found)
  if(_r EQUAL 0 OR _found EQUAL -1)
    string(APPEND _failed "\n  ${_name}: expected '${_expected}', got (exit ${_r}): ${_flat}")
  endif()
endforeach()
# A router with a combinational path (valid & ready on an output of the valid/ready shell) is refused
# at registration, with the path; the unbroken shell passes (needs Yosys).
find_program(_yosys NAMES yosys)
if(_yosys)
  file(READ "${SRC}/rtl_checks/rtl/la_vr_router.sv" _sv)
  string(REPLACE "assign out_valid[o] = skid_valid_q[o] | inner_out_valid[o];"
                 "assign out_valid[o] = (skid_valid_q[o] | inner_out_valid[o]) & out_ready[o];" _bad "${_sv}")
  file(WRITE "${WORK}/comb/la_vr_comb.sv" "${_bad}")
  foreach(_which bad good)
    set(_sv_file "${WORK}/comb/la_vr_comb.sv")
    if(_which STREQUAL "good")
      set(_sv_file "${SRC}/rtl_checks/rtl/la_vr_router.sv")
    endif()
    file(WRITE "${WORK}/comb/${_which}/CMakeLists.txt" "cmake_minimum_required(VERSION 3.16)\nproject(t NONE)\n"
      "set(NMPSIM_RTL_PLUGIN_INCLUDE_DIR \"${WORK}\")\ninclude(\"${SRC}/cmake/NmpsimRouterRtl.cmake\")\n"
      "nmpsim_add_router_rtl(r SOURCES \"${_sv_file}\" \"${SRC}/rtl_checks/rtl/la_router.sv\" TOP la_vr_router "
      "DESCRIPTION \"${SRC}/rtl_checks/rtl/la_vr_router.json\" PLUGIN)\n")
    execute_process(COMMAND ${CMAKE_COMMAND} -S "${WORK}/comb/${_which}" -B "${WORK}/comb/${_which}/build"
                    RESULT_VARIABLE _r OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    string(REPLACE "\n" " " _flat "${_out}${_err}")
    string(REGEX REPLACE " +" " " _flat "${_flat}")
    if(_which STREQUAL "bad")
      set(_expected "a combinational path from an input pin to an output pin: out_ready[1] -> la_vr_comb.sv:69 -> out_valid[1]")
    else()
      set(_expected "rtl:r: no combinational input-to-output path")
    endif()
    string(FIND "${_flat}" "${_expected}" _found)
    if(_found EQUAL -1)
      string(APPEND _failed "\n  comb path (${_which}): expected '${_expected}', got (exit ${_r}): ${_flat}")
    endif()
  endforeach()
else()
  message(STATUS "yosys not found: the combinational path check is not tried")
endif()
if(_failed)
  message(FATAL_ERROR "description errors not reported as expected:${_failed}")
endif()
message(STATUS "all ${_ncases} wrong descriptions stop the configure step naming the field")
