# Third-party packages. Works with Debian 12 (CLI11 2.1, fmt 9.1, nlohmann 3.11.2, GTest 1.12,
# CMake 3.25) and Ubuntu 24.04-era sets (CLI11 2.4, nlohmann 3.11.3, GTest 1.14, CMake 4.x).
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3.10 CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(CUDAToolkit REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# NVTX3 is header-only in the toolkit: CUDA::nvtx3 where this CMake defines it, else the
# toolkit include directory (which holds nvtx3/).
add_library(mha_nvtx INTERFACE)
if(TARGET CUDA::nvtx3)
  target_link_libraries(mha_nvtx INTERFACE CUDA::nvtx3)
else()
  target_include_directories(mha_nvtx INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
endif()
