#!/usr/bin/env bash
# One decode step's kernels under Nsight Compute, and where their time goes:
#   scripts/profile_step.sh BUILD_DIR KERNEL_GLOB PROBLEM [OUT_PREFIX]
# e.g. scripts/profile_step.sh build-fp8 '*kve4m3*_bm8_bn64_bk32_wm8_wn16_t128_s4_wsk' \
#        'batch=1,heads=32,kv_heads=8,keys=131072,kv_dtype=e4m3,partitions=32'
# runs `mha-tune verify` on that one kernel and problem (one launch of the decode kernel, and of
# the reduce when split) under ncu with the clocks left alone (--clock-control none, as the
# sweep measures them), keeps the report (OUT_PREFIX.ncu-rep, default /tmp/profile_step) and
# prints scripts/profile_summary.py's table: duration, DRAM throughput, issue-slot and tensor-pipe
# use, occupancy, L2 throughput and bytes, warp instructions and the leading warp stall reasons. Exit 3 without ncu or a GPU.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: scripts/profile_step.sh BUILD_DIR KERNEL_GLOB PROBLEM [OUT_PREFIX]" >&2
  exit 2
fi
build=$1 filter=$2 problem=$3 out=${4:-/tmp/profile_step}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v ncu > /dev/null || { echo "profile_step.sh: ncu (Nsight Compute) is not on PATH" >&2; exit 3; }
[[ -x "$build/mha-tune" ]] || { echo "profile_step.sh: $build/mha-tune: not built" >&2; exit 2; }
# The metrics profile_summary.py reads, and every warp stall reason.
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
metrics+=,launch__grid_size,launch__block_size
metrics+=,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum
metrics+=',regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
ncu --clock-control none --kernel-name regex:'decode_kernel|splitk_reduce_kernel' --metrics "$metrics" \
  --export "$out" --force-overwrite --log-file "$out.ncu.log" \
  "$build/mha-tune" verify --filter "$filter" --problem "$problem" --quiet > "$out.verify.log" ||
  { tail -n 5 "$out.ncu.log" "$out.verify.log" >&2; echo "profile_step.sh: ncu or verify failed" >&2; exit 1; }
ncu --import "$out.ncu-rep" --csv --page raw > "$out.csv"
python3 scripts/profile_summary.py "$out.csv"
