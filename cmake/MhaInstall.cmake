# Install rules and the CMake package: `cmake --install BUILD --prefix P` lays out
#   P/lib/libmha_kernels.a, libmha_decode.a     the exported targets mha::kernels, mha::decode
#   P/include/mha_tune/{api,common,registry}/*.h, kernels/*.cuh
#                                               the public headers, under the same folders as in
#                                               the tree: a consumer includes "api/decode_plan.h"
#   P/lib/cmake/mha_tune/                       mha_tuneConfig.cmake, its version file, targets
#   P/bin/mha-tune
# so that another project can `find_package(mha_tune)` and link mha::decode (examples/consumer).
# mha_core (library code beside the CLI commands, needing CLI11, fmt, JSON) is not exported.
include(CMakePackageConfigHelpers)

set(MHA_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/mha_tune")

install(TARGETS mha_kernels mha_decode EXPORT mha_tune_targets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
file(GLOB _mha_kernel_headers "${PROJECT_SOURCE_DIR}/kernels/*.cuh")
install(FILES ${_mha_kernel_headers} DESTINATION "${MHA_INSTALL_INCLUDEDIR}/kernels")
# What a consumer includes: the API, the registry it returns, and the vocabulary they name (split
# codes, a measurement row's types), each in its folder.
install(FILES "${PROJECT_SOURCE_DIR}/src/api/decode_api.h"
              "${PROJECT_SOURCE_DIR}/src/api/decode_plan.h"
              "${PROJECT_SOURCE_DIR}/src/api/split_plan.h"
        DESTINATION "${MHA_INSTALL_INCLUDEDIR}/api")
install(FILES "${PROJECT_SOURCE_DIR}/src/common/split_code.h"
              "${PROJECT_SOURCE_DIR}/src/common/result_row.h"
        DESTINATION "${MHA_INSTALL_INCLUDEDIR}/common")
install(FILES "${PROJECT_SOURCE_DIR}/src/registry/kernel_registry.h"
        DESTINATION "${MHA_INSTALL_INCLUDEDIR}/registry")
install(EXPORT mha_tune_targets NAMESPACE mha:: FILE mha_tuneTargets.cmake
        DESTINATION "${MHA_INSTALL_CMAKEDIR}")

if(TARGET mha-tune)
  # The CUDA runtime's directory stays on the installed binary's RPATH.
  set_target_properties(mha-tune PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS mha-tune RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/mha_tuneConfig.cmake.in"
    "${CMAKE_BINARY_DIR}/mha_tuneConfig.cmake" INSTALL_DESTINATION "${MHA_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${CMAKE_BINARY_DIR}/mha_tuneConfigVersion.cmake"
    VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_BINARY_DIR}/mha_tuneConfig.cmake"
              "${CMAKE_BINARY_DIR}/mha_tuneConfigVersion.cmake"
        DESTINATION "${MHA_INSTALL_CMAKEDIR}")
