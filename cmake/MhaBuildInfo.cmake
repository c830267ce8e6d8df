# What the binary reports about its own build: the git commit (see MhaGitCommit.cmake:
# $MHA_GIT_COMMIT when set, else the enclosing repository's HEAD, "-dirty" when the tree differs
# from it, else "unknown"), resolved at every build into mha_build_commit.h, and one line of
# configuration (arch, config, filter, build type).
# A copy of the tree names its commit through the environment of the build:
# MHA_GIT_COMMIT=$(git rev-parse --short HEAD). Nothing about the commit is resolved when
# configuring, so neither a commit nor a new MHA_GIT_COMMIT needs a re-configure.

# Semicolons would split the compile definition: filters are shown comma-separated.
string(REPLACE ";" "," _mha_filter_text "${MHA_KERNEL_FILTER}")
string(REPLACE ";" "," _mha_arch_text "${CMAKE_CUDA_ARCHITECTURES}")
string(JOIN " " MHA_BUILD_INFO_STRING
    "arch=${_mha_arch_text}" "config=${MHA_CONFIG_LABEL}" "filter=${_mha_filter_text}"
    "build_type=${CMAKE_BUILD_TYPE}" "cuda=${CUDAToolkit_VERSION}")

# The commit header, rewritten at every build (cmake/MhaCommitHeader.cmake); a target that
# includes it calls mha_use_commit_header(TARGET).
set(MHA_COMMIT_HEADER_DIR "${PROJECT_BINARY_DIR}/generated/commit")
add_custom_target(mha_commit_header
    COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}"
            "-DOUTPUT=${MHA_COMMIT_HEADER_DIR}/mha_build_commit.h"
            -P "${PROJECT_SOURCE_DIR}/cmake/MhaCommitHeader.cmake"
    BYPRODUCTS "${MHA_COMMIT_HEADER_DIR}/mha_build_commit.h"
    VERBATIM)
function(mha_use_commit_header target)
  add_dependencies(${target} mha_commit_header)
  target_include_directories(${target} PRIVATE "${PROJECT_BINARY_DIR}/generated")  # "commit/..."
endfunction()
