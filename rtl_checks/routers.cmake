# Router RTL built into nmpsim: one nmpsim_add_router_rtl call per router (cmake/NmpsimRouterRtl.cmake,
# docs/RTL.md "Bring your own router"). Each becomes `--router rtl:NAME`. Add yours below.

# The look-ahead router, the worked example (valid/stop, a flit format of its own). Its FIFO capacity
# is the description's max_buffer_flits.
file(READ ${CMAKE_CURRENT_LIST_DIR}/rtl/la_router.json _la_desc)
string(JSON NMPSIM_RTL_LA_MAX_DEPTH GET "${_la_desc}" max_buffer_flits)
nmpsim_add_router_rtl(la
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/rtl/la_router.sv
  TOP la_router
  DESCRIPTION ${CMAKE_CURRENT_LIST_DIR}/rtl/la_router.json
  VERILATOR_ARGS -Wall -GMAX_DEPTH=${NMPSIM_RTL_LA_MAX_DEPTH})

# The same router inside two shells of ours, the worked examples of the other two protocols: a
# valid/ready handshake with a skid register per output, and credits with an input FIFO per port,
# each with a flit format of its own (docs/RTL.md "Bring your own router").
nmpsim_add_router_rtl(la_vr
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/rtl/la_vr_router.sv ${CMAKE_CURRENT_LIST_DIR}/rtl/la_router.sv
  TOP la_vr_router
  DESCRIPTION ${CMAKE_CURRENT_LIST_DIR}/rtl/la_vr_router.json
  VERILATOR_ARGS -Wall -GMAX_DEPTH=${NMPSIM_RTL_LA_MAX_DEPTH})
nmpsim_add_router_rtl(la_credit
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/rtl/la_credit_router.sv ${CMAKE_CURRENT_LIST_DIR}/rtl/la_router.sv
  TOP la_credit_router
  DESCRIPTION ${CMAKE_CURRENT_LIST_DIR}/rtl/la_credit_router.json
  VERILATOR_ARGS -Wall -GMAX_DEPTH=${NMPSIM_RTL_LA_MAX_DEPTH})
