# What the binary reports about its own build: the git commit at configure time ("unknown"
# outside a repository) and one line of configuration (arch, config, filter, build type).
# A copy of the tree without .git (e.g. one shipped to a GPU machine) can name its commit through
# the environment: MHA_GIT_COMMIT=$(git rev-parse --short HEAD).
find_package(Git QUIET)
set(MHA_GIT_COMMIT "unknown")
if(DEFINED ENV{MHA_GIT_COMMIT})
  set(MHA_GIT_COMMIT "$ENV{MHA_GIT_COMMIT}")
endif()
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short HEAD
                  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
                  OUTPUT_VARIABLE _mha_commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _mha_git_rc ERROR_QUIET)
  if(_mha_git_rc EQUAL 0 AND _mha_commit)
    set(MHA_GIT_COMMIT "${_mha_commit}")
    # Re-configure when HEAD moves (a commit or checkout), so the commit stays current.
    execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --absolute-git-dir
                    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
                    OUTPUT_VARIABLE _mha_git_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_mha_git_dir AND EXISTS "${_mha_git_dir}/logs/HEAD")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_mha_git_dir}/logs/HEAD")
    endif()
  endif()
endif()

# Semicolons would split the compile definition: filters are shown comma-separated.
string(REPLACE ";" "," _mha_filter_text "${MHA_KERNEL_FILTER}")
string(REPLACE ";" "," _mha_arch_text "${CMAKE_CUDA_ARCHITECTURES}")
string(JOIN " " MHA_BUILD_INFO_STRING
    "arch=${_mha_arch_text}" "config=${MHA_CONFIG_LABEL}" "filter=${_mha_filter_text}"
    "build_type=${CMAKE_BUILD_TYPE}" "cuda=${CUDAToolkit_VERSION}")
