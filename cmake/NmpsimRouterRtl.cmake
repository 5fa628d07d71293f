# nmpsim_add_router_rtl(NAME SOURCES <.sv/.v files> TOP <module> DESCRIPTION <file.json>
#                       [VERILATOR_ARGS <args>] [TARGET <target> UNREGISTERED])
#
# Builds a router RTL of your own into nmpsim: Verilates it (plain C++) into nmpsim_rtl, generates
# the glue that reads and writes its pins by the names its description gives, and registers it as
# `--router rtl:NAME`. The description (docs/RTL.md "Bring your own router") names the clock, the
# reset, the six handshake pins per port and the straps, and gives the flit format and the protocol.
# Pin names may contain {p} (the port's name from "ports", e.g. n e s w l) and {i} (its index 0-4);
# "name[{i}]" is bit i of a packed vector. Call it from rtl_checks/routers.cmake.
# The protocol (valid_stop, valid_ready or credit) selects the flow-control pins the glue drives.
# Registered routers are Verilated with --trace, so `nmpsim noc --vcd` can dump them.
# TARGET and UNREGISTERED are for tests: build into another target, and leave the router out of
# nmpsim's registry (the test calls nmpsim::rtl::register_rtl_NAME() itself) and untraced.
function(nmpsim_add_router_rtl name)
  cmake_parse_arguments(PARSE_ARGV 1 A "UNREGISTERED" "TOP;DESCRIPTION;TARGET" "SOURCES;VERILATOR_ARGS")
  if(NOT A_TARGET)
    set(A_TARGET nmpsim_rtl)
  endif()
  if(NOT name MATCHES "^[A-Za-z][A-Za-z0-9_]*$")
    message(FATAL_ERROR "nmpsim_add_router_rtl: '${name}' is not a name (letters, digits, _)")
  endif()
  foreach(_req TOP DESCRIPTION SOURCES)
    if(NOT A_${_req})
      message(FATAL_ERROR "nmpsim_add_router_rtl(${name}): ${_req} is missing")
    endif()
  endforeach()
  get_filename_component(_desc_path ${A_DESCRIPTION} ABSOLUTE)
  file(READ ${_desc_path} _desc)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_desc_path} ${A_SOURCES})
  macro(_nmpsim_json out)
    string(JSON ${out} ERROR_VARIABLE _err GET "${_desc}" ${ARGN})
    if(_err)
      message(FATAL_ERROR "nmpsim_add_router_rtl(${name}): ${A_DESCRIPTION}: ${_err}")
    endif()
  endmacro()
  _nmpsim_json(_clk clock)
  _nmpsim_json(_rst reset)
  set(_ports "")
  foreach(_i RANGE 4)
    _nmpsim_json(_p ports ${_i})
    list(APPEND _ports ${_p})
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
    message(FATAL_ERROR "nmpsim_add_router_rtl(${name}): ${A_DESCRIPTION}: protocol: '${_protocol}' is not one of valid_stop valid_ready credit")
  endif()
  # Per role and port: a C++ statement that writes the pin (inputs) or an expression that reads it.
  foreach(_role in_valid in_flit ${_flow_in} out_valid out_flit ${_flow_out})
    _nmpsim_json(_pattern pins ${_role})
    set(_cases "")
    foreach(_i RANGE 4)
      list(GET _ports ${_i} _p)
      string(REPLACE "{p}" "${_p}" _pin "${_pattern}")
      string(REPLACE "{i}" "${_i}" _pin "${_pin}")
      if(_role MATCHES "flit$" AND NOT _pin MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
        message(FATAL_ERROR "nmpsim_add_router_rtl(${name}): pins.${_role}: '${_pin}' must name one port per router port (a flit pin cannot be a bit of a vector)")
      endif()
      if(_role STREQUAL "in_flit")
        set(_set "put_flit(t.${_pin}, v)")
      elseif(_role STREQUAL "out_flit")
        set(_get "get_flit(t.${_pin})")
      elseif(_pin MATCHES "^([A-Za-z_][A-Za-z0-9_]*)\\[([0-9]+)\\]$")
        set(_n ${CMAKE_MATCH_1})
        set(_b ${CMAKE_MATCH_2})
        set(_set "t.${_n} = (t.${_n} & ~(1ull << ${_b})) | (static_cast<uint64_t>(v != 0) << ${_b})")
        set(_get "((t.${_n} >> ${_b}) & 1u)")
      elseif(_pin MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
        set(_set "t.${_pin} = v")
        set(_get "t.${_pin}")
      else()
        message(FATAL_ERROR "nmpsim_add_router_rtl(${name}): pins.${_role}: '${_pin}' is not a pin name")
      endif()
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
  string(JSON _nstraps ERROR_VARIABLE _err LENGTH "${_desc}" straps)
  set(_straps "")
  if(NOT _err AND _nstraps GREATER 0)
    math(EXPR _last "${_nstraps} - 1")
    foreach(_k RANGE ${_last})
      string(JSON _pin MEMBER "${_desc}" straps ${_k})
      _nmpsim_json(_value straps ${_pin})
      if(NOT _value MATCHES "^(x|y|width|height|buffer_flits)$")
        message(FATAL_ERROR "nmpsim_add_router_rtl(${name}): straps.${_pin}: '${_value}' is not one of x y width height buffer_flits")
      endif()
      string(APPEND _straps "    t.${_pin} = static_cast<uint32_t>(s.${_value});\n")
    endforeach()
  endif()
  if(A_UNREGISTERED)  # the test mutants: no VCD
    set(_traced 0)
    set(_trace "")
  else()
    set(_traced 1)
    set(_trace TRACE)
  endif()
  set(_glue ${CMAKE_CURRENT_BINARY_DIR}/rtl_routers/nmpsim_rtl_${name}.cpp)
  file(CONFIGURE OUTPUT ${_glue} @ONLY CONTENT [=[
// Generated by nmpsim_add_router_rtl(@name@) from @_desc_path@: do not edit.
#include "V@name@.h"
#include "nmpsim/rtl_checks/described_router.h"
#include "nmpsim/rtl_checks/flit_pins.h"
#include "verilated.h"
#define NMPSIM_RTL_TRACED @_traced@
#if NMPSIM_RTL_TRACED
#include "verilated_vcd_c.h"
#endif

namespace {
using nmpsim::rtl::get_flit;
using nmpsim::rtl::put_flit;

class Io final : public nmpsim::rtl::RtlPinIo {
 public:
  explicit Io(const nmpsim::rtl::StrapValues& s) : rtl_(std::make_unique<V@name@>(ctx_.get(), "@name@")) {
    V@name@& t = *rtl_;
@_straps@  }
  ~Io() override {
    close_vcd();
    rtl_->final();
  }
  void clock(bool rst) override {
    rtl_->@_rst@ = rst;
    rtl_->@_clk@ = 0;
    rtl_->eval();
#if NMPSIM_RTL_TRACED
    if (vcd_) vcd_->dump(2 * edges_);
#endif
    rtl_->@_clk@ = 1;
    rtl_->eval();
#if NMPSIM_RTL_TRACED
    if (vcd_) vcd_->dump(2 * edges_ + 1);
#endif
    ++edges_;
  }
  void open_vcd(const std::string& path) override {
#if NMPSIM_RTL_TRACED
    close_vcd();
    vcd_ = std::make_unique<VerilatedVcdC>();
    rtl_->trace(vcd_.get(), 99);
    vcd_->open(path.c_str());
    if (!vcd_->isOpen()) {
      vcd_.reset();
      throw nmpsim::noc::ConfigError("--vcd: cannot open '" + path + "'");
    }
#else
    (void)path;
    throw nmpsim::noc::ConfigError("RTL router '@name@' was built without tracing: it cannot write a VCD");
#endif
  }
  void close_vcd() override {
#if NMPSIM_RTL_TRACED
    if (vcd_) vcd_->close();
    vcd_.reset();
#endif
  }
  void set_in_valid(int p, bool v) override {
    V@name@& t = *rtl_;
    switch (p) {
@_CASES_IN_VALID@    }
  }
  void set_in_flit(int p, const nmpsim::rtl::FlitBits& v) override {
    V@name@& t = *rtl_;
    switch (p) {
@_CASES_IN_FLIT@    }
  }
  void set_flow_in(int p, bool v) override {
    V@name@& t = *rtl_;
    switch (p) {
@_CASES_FLOW_IN@    }
  }
  bool out_valid(int p) const override {
    const V@name@& t = *rtl_;
    switch (p) {
@_CASES_OUT_VALID@    }
    return false;
  }
  nmpsim::rtl::FlitBits out_flit(int p) const override {
    const V@name@& t = *rtl_;
    switch (p) {
@_CASES_OUT_FLIT@    }
    return {};
  }
  bool flow_out(int p) const override {
    const V@name@& t = *rtl_;
    switch (p) {
@_CASES_FLOW_OUT@    }
    return false;
  }

 private:
  static std::unique_ptr<VerilatedContext> context() {
    auto c = std::make_unique<VerilatedContext>();
    c->traceEverOn(NMPSIM_RTL_TRACED);  // lets open_vcd() attach a trace; costs nothing until then
    return c;
  }
  std::unique_ptr<VerilatedContext> ctx_ = context();
  std::unique_ptr<V@name@> rtl_;
  uint64_t edges_ = 0;
#if NMPSIM_RTL_TRACED
  std::unique_ptr<VerilatedVcdC> vcd_;
#endif
};
}  // namespace

namespace nmpsim::rtl {
void register_rtl_@name@() {
  register_described_router("@name@", R"nmpsimjson(@_desc@)nmpsimjson",
                            [](const StrapValues& s) { return std::make_unique<Io>(s); });
}
}  // namespace nmpsim::rtl
]=])
  file(SHA1 ${_desc_path} _h)
  verilate(${A_TARGET} ${_trace}
    PREFIX V${name}
    TOP_MODULE ${A_TOP}
    SOURCES ${A_SOURCES}
    VERILATOR_ARGS -O3 --x-assign fast --x-initial fast +define+NMPSIM_RTL_DESCRIPTION_HASH=${_h} ${A_VERILATOR_ARGS}
    OPT_FAST -O2)
  target_sources(${A_TARGET} PRIVATE ${_glue})
  set_source_files_properties(${_glue} PROPERTIES COMPILE_OPTIONS -w)
  if(NOT A_UNREGISTERED)
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
