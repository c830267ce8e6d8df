# Runs scripts/gen_dispatch.py at configure time: one .cu per kernel instance of MHA_CONFIG
# (after MHA_KERNEL_FILTER), dispatch_table.cu, build_config.cpp and manifest.json in ${CMAKE_BINARY_DIR}/generated.
# The generator writes a file only when its content changes, so re-running it rebuilds nothing
# needlessly. Sets MHA_GENERATED_SOURCES, MHA_MANIFEST and MHA_CONFIG_LABEL.
get_filename_component(_mha_config "${MHA_CONFIG}" ABSOLUTE BASE_DIR "${PROJECT_SOURCE_DIR}")
if(NOT EXISTS "${_mha_config}")
  message(FATAL_ERROR "MHA_CONFIG: ${MHA_CONFIG} does not exist")
endif()
file(RELATIVE_PATH MHA_CONFIG_LABEL "${PROJECT_SOURCE_DIR}" "${_mha_config}")
if(MHA_CONFIG_LABEL MATCHES "^\\.\\.")
  set(MHA_CONFIG_LABEL "${_mha_config}")
endif()

set(MHA_GENERATED_DIR "${CMAKE_BINARY_DIR}/generated")
set(MHA_MANIFEST "${MHA_GENERATED_DIR}/manifest.json")
set(_mha_generator "${PROJECT_SOURCE_DIR}/scripts/gen_dispatch.py")
set(_mha_filter "${MHA_KERNEL_FILTER}")
if(_mha_filter STREQUAL "")
  set(_mha_filter "*")
endif()

execute_process(
    COMMAND "${Python3_EXECUTABLE}" "${_mha_generator}" --config "${_mha_config}"
            --out-dir "${MHA_GENERATED_DIR}" --filter "${_mha_filter}"
    RESULT_VARIABLE _mha_gen_rc
    OUTPUT_VARIABLE _mha_gen_out OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_VARIABLE _mha_gen_err ERROR_STRIP_TRAILING_WHITESPACE)
if(NOT _mha_gen_rc EQUAL 0)
  message(FATAL_ERROR "scripts/gen_dispatch.py failed (exit ${_mha_gen_rc}):\n${_mha_gen_err}")
endif()
message(STATUS "${_mha_gen_out}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_mha_config}" "${_mha_generator}")

# The instance list comes from the manifest, in generator order.
file(READ "${MHA_MANIFEST}" _mha_manifest)
# A suite naming a tile space (configs/suites/) is built from that file too.
string(JSON _mha_tile_space ERROR_VARIABLE _mha_no_tile_space GET "${_mha_manifest}" tile_space)
if(NOT _mha_no_tile_space)
  get_filename_component(_mha_tile_space "${_mha_tile_space}" ABSOLUTE BASE_DIR
                         "${PROJECT_SOURCE_DIR}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_mha_tile_space}")
endif()
string(JSON _mha_count LENGTH "${_mha_manifest}" instances)
set(MHA_GENERATED_SOURCES "${MHA_GENERATED_DIR}/dispatch_table.cu"
    "${MHA_GENERATED_DIR}/build_config.cpp")
math(EXPR _mha_last "${_mha_count} - 1")
foreach(_i RANGE 0 ${_mha_last})
  string(JSON _src GET "${_mha_manifest}" instances ${_i} source)
  list(APPEND MHA_GENERATED_SOURCES "${MHA_GENERATED_DIR}/${_src}")
endforeach()
message(STATUS "mha-tune: ${_mha_count} kernel instances from ${MHA_CONFIG_LABEL}")
