# Tests under ctest: tests/test_*.cpp (label "host") and tests/gpu_test_*.cpp (label "gpu") are
# gtest executables linked to mha_core and mha_kernels; tests/test_*.py run with python3
# (label "host"). Run one label with `ctest -L host`.
find_package(GTest CONFIG QUIET)
if(NOT GTest_FOUND)
  find_package(GTest REQUIRED)  # FindGTest module, for installs without a config package
endif()
include(GoogleTest)

file(GLOB _mha_host_tests CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/test_*.cpp")
file(GLOB _mha_gpu_tests CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/gpu_test_*.cpp")
file(GLOB _mha_py_tests CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/test_*.py")

function(mha_add_gtest source label)
  get_filename_component(_name "${source}" NAME_WE)
  add_executable(${_name} "${source}")
  target_link_libraries(${_name} PRIVATE
      mha_core mha_kernels GTest::gtest GTest::gtest_main GTest::gmock mha_warnings)
  target_compile_definitions(${_name} PRIVATE
      MHA_MANIFEST_PATH="${MHA_MANIFEST}"
      MHA_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  # PRE_TEST: list the tests when ctest runs, not at build time (no GPU needed to build).
  gtest_discover_tests(${_name}
      DISCOVERY_MODE PRE_TEST
      TEST_PREFIX "${_name}."
      PROPERTIES LABELS "${label}")
endfunction()

foreach(_src IN LISTS _mha_host_tests)
  mha_add_gtest("${_src}" host)
endforeach()
foreach(_src IN LISTS _mha_gpu_tests)
  mha_add_gtest("${_src}" gpu)
endforeach()
foreach(_src IN LISTS _mha_py_tests)
  get_filename_component(_name "${_src}" NAME_WE)
  add_test(NAME "py.${_name}" COMMAND "${Python3_EXECUTABLE}" "${_src}" -v
           WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
  # Exit 77: skipped (a test whose tool, e.g. Slurm, is not installed says so and exits 77).
  set_tests_properties("py.${_name}" PROPERTIES LABELS host SKIP_RETURN_CODE 77
      ENVIRONMENT "MHA_BUILD_DIR=${CMAKE_BINARY_DIR};PYTHONDONTWRITEBYTECODE=1")
endforeach()
