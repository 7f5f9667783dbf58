# `cmake --install`: the `spyre` executable, and the libraries with their
# headers as a CMake package, so that another project can compile and
# simulate with
#
#   find_package(spyre REQUIRED)
#   target_link_libraries(app PRIVATE spyre::compiler spyre::sim)
#
# The package's targets (docs/install.md):
#   spyre::compiler  graph JSON and ONNX import, the passes and the driver
#                    (compiler/driver/Compile.h), the host reference evaluator
#   spyre::sim       the simulator (sim/core/Machine.h) and its SystemC layer
#                    (sim/systemc/ChipModule.h)
#   spyre::run       compile and simulate in one step (run/RunModel.h)
#   spyre::scmain    the sc_main that libsystemc wants, for a program with its
#                    own main() (a SystemC program defines its own sc_main)
# and one spyre::<name> per library below them (spyre::hw, spyre::isa, ...).
#
# Components: `runtime` (the executable) and `development` (libraries,
# headers, package). Other parts of the project add their own install rules,
# with their own component, in their own folder (the Python package in
# python/); this file installs only the C++ side.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SPYRE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/spyre)
set(SPYRE_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/spyre)

# The umbrella targets a user links.
add_library(spyre_compiler INTERFACE)
target_link_libraries(spyre_compiler INTERFACE spyre_compiler_driver
  spyre_compiler_import spyre_compiler_ref spyre_compiler_ir spyre_hw spyre_isa)
add_library(spyre_sim INTERFACE)
target_link_libraries(spyre_sim INTERFACE spyre_sim_systemc spyre_sim_core
  spyre_sim_output spyre_sim_analysis spyre_hw spyre_isa)

# Every library the umbrellas reach, each exported as spyre::<name without
# the spyre_ prefix>.
set(spyre_installed_libraries
  spyre_support spyre_numerics spyre_host spyre_hw spyre_isa
  spyre_sim_numerics spyre_sim_check spyre_sim_timing spyre_sim_analysis
  spyre_sim_core spyre_sim_output spyre_systemc spyre_sim_systemc spyre_scmain
  spyre_compiler_ir spyre_compiler_codegen spyre_compiler_pm
  spyre_compiler_plan spyre_compiler_emit spyre_compiler_passes
  spyre_compiler_pipeline
  spyre_compiler_import spyre_compiler_ref spyre_compiler_driver spyre_run
  spyre_compiler spyre_sim)
foreach(lib IN LISTS spyre_installed_libraries)
  string(REGEX REPLACE "^spyre_" "" name ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${name})
  # In the tree every header is found from the source root; installed, from
  # include/spyre, so that `#include "hw/HwConfig.h"` means the same.
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${SPYRE_INSTALL_INCLUDEDIR}>)
  # The headers are C++20.
  target_compile_features(${lib} INTERFACE cxx_std_20)
  # The warning flags are how the project builds itself, nothing a user
  # links: a static library would otherwise export them as a link item.
  get_target_property(interface ${lib} INTERFACE_LINK_LIBRARIES)
  if(interface)
    list(REMOVE_ITEM interface "$<LINK_ONLY:spyre_warnings>")
    set_target_properties(${lib} PROPERTIES INTERFACE_LINK_LIBRARIES "${interface}")
  endif()
endforeach()

install(TARGETS spyre RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS ${spyre_installed_libraries} EXPORT spyreTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
  OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/spyre-objects COMPONENT development)
# The headers of those libraries, in the layout of the source tree.
foreach(dir support numerics host hw isa sim compiler run)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}
    DESTINATION ${SPYRE_INSTALL_INCLUDEDIR} COMPONENT development
    FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
endforeach()
install(EXPORT spyreTargets NAMESPACE spyre:: DESTINATION ${SPYRE_INSTALL_CMAKEDIR}
  COMPONENT development)

# How the package finds what the libraries link: the same packages as this
# build, and SystemC the way this build found it.
if(SystemCLanguage_FOUND)
  set(SPYRE_SYSTEMC_FROM_CMAKE TRUE)
else()
  set(SPYRE_SYSTEMC_FROM_CMAKE FALSE)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/spyreConfig.cmake.in
  ${PROJECT_BINARY_DIR}/spyreConfig.cmake
  INSTALL_DESTINATION ${SPYRE_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/spyreConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/spyreConfig.cmake
  ${PROJECT_BINARY_DIR}/spyreConfigVersion.cmake
  DESTINATION ${SPYRE_INSTALL_CMAKEDIR} COMPONENT development)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE
  DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/spyre COMPONENT runtime)
