# ctest "library_testbench": installs the build into a scratch prefix, builds this example against
# it with find_package(nmpsim) and runs it. Arguments: -DBUILD=<nmpsim build dir> -DSRC=<this dir>
# -DWORK=<scratch dir>.
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD}" --prefix "${WORK}/prefix" RESULT_VARIABLE r OUTPUT_QUIET)
if(NOT r EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${r})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SRC}" -B "${WORK}/build" "-DCMAKE_PREFIX_PATH=${WORK}/prefix"
                        -DCMAKE_BUILD_TYPE=Release RESULT_VARIABLE r)
if(NOT r EQUAL 0)
  message(FATAL_ERROR "configuring the example against the installed package failed (${r})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK}/build" RESULT_VARIABLE r)
if(NOT r EQUAL 0)
  message(FATAL_ERROR "building the example failed (${r})")
endif()
execute_process(COMMAND "${WORK}/build/nmpsim_testbench" RESULT_VARIABLE r)
if(NOT r EQUAL 0)
  message(FATAL_ERROR "the example testbench failed (${r})")
endif()
