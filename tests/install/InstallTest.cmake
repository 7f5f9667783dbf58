# The installed package works for a project outside the tree: installs this
# build into WORK_DIR/prefix, builds tests/install/consumer against it, and
# checks that the consumer, which compiles and simulates a model through the
# libraries, prints what the installed `spyre` prints for the same model.
#
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=...
#         -DCXX=... [-DLAUNCHER=...] -P InstallTest.cmake

function(run_step what)
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(file bin/spyre lib/cmake/spyre/spyreConfig.cmake
    lib/cmake/spyre/spyreConfigVersion.cmake lib/cmake/spyre/spyreTargets.cmake
    include/spyre/compiler/driver/Compile.h include/spyre/sim/core/Machine.h
    include/spyre/compiler/ir/OpKinds.def share/doc/spyre/LICENSE)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "cmake --install did not install ${file}")
  endif()
endforeach()

set(launcher "")
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run_step("configuring the consumer" ${CMAKE_COMMAND}
  -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build -G ${GENERATOR}
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
  -DCMAKE_CXX_COMPILER=${CXX} ${launcher})
run_step("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)

set(model ${SOURCE_DIR}/examples/models/gpt_block/model.json)
run_step("the consumer" ${WORK_DIR}/build/consumer ${model})
set(got "${step_output}")
run_step("spyre compile" ${prefix}/bin/spyre compile ${model} -o ${WORK_DIR}/model.spyre)
run_step("spyre sim" ${prefix}/bin/spyre sim ${WORK_DIR}/model.spyre --timing-only)
set(want "${step_output}")
if(NOT got STREQUAL want)
  message(FATAL_ERROR "the consumer printed\n${got}\nbut spyre sim printed\n${want}")
endif()
if(NOT got MATCHES "\ncycles +[1-9][0-9]*\n")
  message(FATAL_ERROR "the consumer simulated no cycles:\n${got}")
endif()
message(STATUS "the consumer agrees with spyre sim:\n${got}")
