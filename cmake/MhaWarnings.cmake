# Compiler flags for our own targets (not third-party ones): warnings on for host code and
# through -Xcompiler for .cu files, ptxas spill warnings for kernels, constexpr in device code.
add_library(mha_warnings INTERFACE)
target_compile_options(mha_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -Xptxas=--warn-on-spills
                               --expt-relaxed-constexpr>)

# CI builds (scripts/test.sh) are warning-free and stay so: -Werror on our host C++ sources.
# Off by default, so that a newer compiler's new warning never breaks someone's local build.
# CUDA sources keep plain warnings: nvcc's generated host stubs are not ours to fix.
option(MHA_WERROR "Treat warnings in the project's host C++ sources as errors (CI builds)" OFF)
if(MHA_WERROR)
  target_compile_options(mha_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
