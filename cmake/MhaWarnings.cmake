# Compiler flags for our own targets (not third-party ones): warnings on for host code and
# through -Xcompiler for .cu files, ptxas spill warnings for kernels, constexpr in device code.
add_library(mha_warnings INTERFACE)
target_compile_options(mha_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -Xptxas=--warn-on-spills
                               --expt-relaxed-constexpr>)
