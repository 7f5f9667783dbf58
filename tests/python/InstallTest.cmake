# Installs the `python` component of BUILD_DIR into PREFIX and runs a model
# with the installed package (PYTHONPATH = PREFIX/PACKAGE_DIR only).
file(REMOVE_RECURSE ${PREFIX})
execute_process(
  COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
          --component python
  RESULT_VARIABLE status OUTPUT_QUIET)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${status})")
endif()
foreach(file __init__.py torch.py)
  if(NOT EXISTS ${PREFIX}/${PACKAGE_DIR}/spyre/${file})
    message(FATAL_ERROR "not installed: ${PACKAGE_DIR}/spyre/${file}")
  endif()
endforeach()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PREFIX}/${PACKAGE_DIR}
    ${PYTHON} -c "import os, spyre; assert os.path.realpath(spyre.__file__).startswith(os.path.realpath('${PREFIX}')), spyre.__file__; print(spyre.compile('${MODEL}').run(seed=1).cycles)"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "^[1-9][0-9]*\n$")
  message(FATAL_ERROR "the installed package did not run a model (${status}): ${out}${err}")
endif()
