# GPU tests written in CUDA (tests/gpu_test_*.cu, label "gpu": they skip without a device) and
# the `mha-tune-broken` binary: the real CLI over a registry of deliberately broken kernels, run
# by a test that expects `verify` to exit 1 and name the kernel and the problem.
file(GLOB _mha_gpu_cu_tests CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tests/gpu_test_*.cu")
foreach(_src IN LISTS _mha_gpu_cu_tests)
  mha_add_gtest("${_src}" gpu)
endforeach()

add_executable(mha-tune-broken "${PROJECT_SOURCE_DIR}/src/cli/main.cpp"
                               "${PROJECT_SOURCE_DIR}/tests/broken_registry.cu")
target_link_libraries(mha-tune-broken PRIVATE mha_cli mha_core mha_warnings)
mha_use_commit_header(mha-tune-broken)
add_test(NAME gpu.verify_rejects_broken_kernels
         COMMAND "${CMAKE_COMMAND}" -DBINARY=$<TARGET_FILE:mha-tune-broken>
                 -P "${PROJECT_SOURCE_DIR}/tests/expect_verify_failure.cmake")
set_tests_properties(gpu.verify_rejects_broken_kernels PROPERTIES LABELS gpu
    SKIP_REGULAR_EXPRESSION "no CUDA device: GPU test skipped")

# The sweep tests run the real binary.
if(TARGET gpu_test_sweep)
  target_compile_definitions(gpu_test_sweep PRIVATE MHA_TUNE_BINARY="$<TARGET_FILE:mha-tune>")
  add_dependencies(gpu_test_sweep mha-tune)
endif()
