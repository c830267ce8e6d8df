# Runs `mha-tune-broken verify --suite edge` and passes only if it exits 1 and names a broken
# kernel and a problem on an "incorrect" line. Without a GPU (exit 3) it prints the skip message,
# which SKIP_REGULAR_EXPRESSION turns into a skipped test.
execute_process(COMMAND "${BINARY}" verify --suite edge --quiet
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(rc EQUAL 3)
  message("no CUDA device: GPU test skipped")
elseif(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit 1 from verify on broken kernels, got ${rc}")
else()
foreach(kernel broken_reduce_natural_exp broken_drop_last_tile broken_sink_per_partition)
  if(NOT out MATCHES "${kernel}[^\n]* b[0-9]+_h[0-9]+[^\n]*incorrect")
    message(FATAL_ERROR "verify did not report ${kernel} as incorrect on a named problem")
  endif()
endforeach()
endif()
