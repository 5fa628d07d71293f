# ctest "router_plugin_out_of_tree": installs nmpsim into a scratch prefix, builds this project (a
# router of one's own, described, no shell) against it into a plugin, and runs the installed nmpsim
# with it: the synthetic testbench and one MoE step, whose messages must all be delivered with every
# check passing. Prints how long the plugin took to build. Arguments: -DBUILD=<nmpsim build dir>
# -DSRC=<this dir> -DWORK=<scratch dir>.
file(REMOVE_RECURSE "${WORK}")
function(must what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE r OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT r EQUAL 0)
    message(FATAL_ERROR "${what} failed (${r}): ${out}${err}")
  endif()
  set(_out "${out}" PARENT_SCOPE)
endfunction()
must("cmake --install" ${CMAKE_COMMAND} --install "${BUILD}" --prefix "${WORK}/prefix")
must("configuring the plugin project" ${CMAKE_COMMAND} -S "${SRC}" -B "${WORK}/build" "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
string(TIMESTAMP t0 "%s")
must("building the plugin" ${CMAKE_COMMAND} --build "${WORK}/build" -j2)
string(TIMESTAMP t1 "%s")
math(EXPR secs "${t1} - ${t0}")
message(STATUS "the plugin nmpsim_rtl_pkt.so built in ${secs} s")
set(nmpsim "${WORK}/prefix/bin/nmpsim")
set(plugin "${WORK}/build/nmpsim_rtl_pkt.so")
must("nmpsim noc on the plugin's router" ${nmpsim} --rtl-plugin ${plugin} noc --router rtl:pkt --mesh 4x4
     --injection-rate 0.25 --cycles 3000 --warmup-cycles 300 --json "${WORK}/noc.json")
message(STATUS "${_out}")
# One MoE layer on the chip, every router the plugin's: the same messages as on the engine, all delivered.
must("nmpsim model" ${nmpsim} model --model mixtral-8x7b --print-json)
string(JSON m SET "${_out}" moe_layers 1)
string(JSON m SET "${m}" dense_layers 0)
file(WRITE "${WORK}/model.json" "${m}")
foreach(router engine rtl:pkt)
  string(REPLACE ":" "_" dir "${router}")
  must("nmpsim run --router ${router}" ${nmpsim} --rtl-plugin=${plugin} run --hw nmp-4x4-5t50g --set noc.vcs=1
       --model "${WORK}/model.json" --steps 1 --batch 8 --strategy ep --router ${router} --message-log
       --out "${WORK}/run_${dir}" --no-plots --quiet)
  file(STRINGS "${WORK}/run_${dir}/messages-ep.csv" rows_${dir})
  list(LENGTH rows_${dir} n_${dir})
endforeach()
if(NOT n_engine EQUAL n_rtl_pkt OR n_engine LESS 100)
  message(FATAL_ERROR "the MoE step delivered ${n_rtl_pkt} messages on rtl:pkt and ${n_engine} on the engine")
endif()
message(STATUS "one MoE layer on rtl:pkt routers: ${n_rtl_pkt} message rows, as on the engine")
