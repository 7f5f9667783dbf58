# SystemC for the simulator. Debian ships SystemC with pkg-config only (no
# CMake package) and builds it as C++17, so every translation unit that
# includes SystemC must see SC_CPLUSPLUS=201703L or the API-version symbol
# does not link. Nothing links SystemC directly: use the `spyre_systemc`
# interface target, which carries those ABI-relevant definitions.
find_package(SystemCLanguage CONFIG QUIET)
add_library(spyre_systemc INTERFACE)
if(SystemCLanguage_FOUND)
  target_link_libraries(spyre_systemc INTERFACE SystemC::systemc)
else()
  pkg_check_modules(SYSTEMC REQUIRED IMPORTED_TARGET systemc>=2.3.3)
  target_link_libraries(spyre_systemc INTERFACE PkgConfig::SYSTEMC)
endif()
target_compile_definitions(spyre_systemc INTERFACE SC_INCLUDE_DYNAMIC_PROCESSES)
if(CMAKE_CXX_STANDARD GREATER 17)
  target_compile_definitions(spyre_systemc INTERFACE SC_CPLUSPLUS=201703L)
endif()
