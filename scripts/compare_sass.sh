#!/usr/bin/env bash
# Compiles the same decode-kernel instances from two kernel trees (folders named kernels/, as their
# includes spell them) and compares their SASS:
# identical, identical but for register numbers, or different (with instruction counts), so a
# refactor of kernels/ can show it changed no machine code without a GPU.
#   scripts/compare_sass.sh [--before-instances FILE] [--after-instances FILE] BEFORE_KERNELS_DIR
#                           AFTER_KERNELS_DIR
# A tree whose DecodeTraits takes other parameters spells the same instances its own way: FILE
# lists them as that tree's DecodeTraits arguments, one a line, in the order of the list below
# (blank lines and # comments skipped). scripts/lab/sass_instances_fault_in_traits.txt spells them
# for the trees whose DecodeTraits took one flat list with the test-only fault (b7877b6 and
# before).
# Needs nvcc, cuobjdump and the nvdisasm it runs (on PATH, or CUOBJDUMP=...; `pip download
# nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm` has both).
set -euo pipefail
before_file="" after_file=""
while [[ $# -gt 0 && $1 == --* ]]; do
  case "$1" in
    --before-instances) before_file=$2; shift 2 ;;
    --after-instances) after_file=$2; shift 2 ;;
    *) echo "compare_sass.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $# -eq 2 ]] || { echo "usage: compare_sass.sh [--before-instances FILE] [--after-instances FILE] BEFORE_KERNELS_DIR AFTER_KERNELS_DIR" >&2; exit 2; }
before=$1 after=$2
cuobjdump=${CUOBJDUMP:-cuobjdump}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One instance per code path: warp split-K or not, contiguous or paged, masks, sinks, fp16->fp32,
# groups 4..64 (several row blocks, BM 64), heads as MMA columns (BM 8), fp8 caches on the MMA
# rows (convert_tile), fp8 caches with heads as MMA columns (in registers; e5m2 with d64's
# swizzle, paging, a window, sinks and the soft cap).
instances=(
  "DecodeFeatures<__nv_bfloat16, __nv_bfloat16, 128, 4, ContiguousKv, NullMask, false>, TileShape<16, 64, 32, 16, 16, 128, 3, true>"
  "DecodeFeatures<__nv_bfloat16, __nv_bfloat16, 128, 4, PagedKv, NullMask, false>, TileShape<16, 128, 64, 16, 16, 256, 2, false>"
  "DecodeFeatures<__nv_bfloat16, __nv_bfloat16, 64, 8, PagedKv, SlidingWindowMask, true>, TileShape<16, 64, 32, 16, 16, 128, 4, false>"
  "DecodeFeatures<__nv_bfloat16, __nv_bfloat16, 64, 64, ContiguousKv, NullMask, false>, TileShape<64, 64, 32, 16, 64, 128, 3, false>"
  "DecodeFeatures<__half, float, 128, 7, ContiguousKv, ChunkedMask, true>, TileShape<16, 64, 32, 16, 16, 128, 3, true>"
  "DecodeFeatures<__nv_bfloat16, __nv_bfloat16, 128, 32, ContiguousKv, NullMask, false>, TileShape<16, 64, 32, 16, 16, 128, 3, true>"
  "DecodeFeatures<__nv_bfloat16, __nv_bfloat16, 128, 4, ContiguousKv, NullMask, false>, TileShape<8, 64, 32, 8, 16, 128, 3, true>"
  "DecodeFeatures<__half, float, 64, 8, PagedHndKv, SlidingWindowMask, true>, TileShape<8, 64, 32, 8, 16, 128, 4, true>"
  "DecodeFeatures<__nv_bfloat16, __nv_bfloat16, 128, 4, ContiguousKv, NullMask, false, __nv_fp8_e4m3>, TileShape<16, 64, 32, 16, 16, 128, 4, true>"
  "DecodeFeatures<__half, float, 64, 7, PagedKv, SlidingWindowMask, true, __nv_fp8_e5m2, true>, TileShape<16, 64, 32, 16, 16, 128, 3, false>"
  "DecodeFeatures<__nv_bfloat16, __nv_bfloat16, 128, 4, ContiguousKv, NullMask, false, __nv_fp8_e4m3>, TileShape<8, 64, 32, 8, 16, 128, 4, true>"
  "DecodeFeatures<__half, float, 64, 8, PagedKv, SlidingWindowMask, true, __nv_fp8_e5m2, true>, TileShape<8, 64, 32, 8, 16, 128, 3, true>"
)
# spelled FILE ARRAY: ARRAY holds the instances as FILE spells them (the list above without one).
spelled() {
  local -n into=$2
  if [[ -z "$1" ]]; then into=("${instances[@]}"); return; fi
  mapfile -t into < <(grep -vE '^\s*(#|$)' "$1")
  if [[ ${#into[@]} -ne ${#instances[@]} ]]; then
    echo "compare_sass.sh: $1 lists ${#into[@]} instances, not the ${#instances[@]} of the list" >&2
    exit 2
  fi
}
spelled "$before_file" before_instances
spelled "$after_file" after_instances
sass() {  # kernels dir, index, traits -> SASS text
  local src="$work/i$2_$(basename "$1").cu"
  printf '#include "kernels/decode_launch.cuh"\nnamespace mha { cudaError_t f(const DecodeParams& p, cudaStream_t s) { return launch_decode<DecodeTraits<%s>>(p, s); } }\n' "$3" > "$src"
  nvcc -I"$(dirname "$1")" -O3 -DNDEBUG -arch=sm_90 --expt-relaxed-constexpr -std=c++17 -cubin -o "$src.cubin" "$src"
  "$cuobjdump" -sass "$src.cubin" | grep -E '^\s+/\*[0-9a-f]{4}\*/'
}
normalise() { sed -E 's/\/\*[0-9a-f]{4}\*\/ *//; s/\/\* 0x[0-9a-f]+ \*\///; s/\bU?R[0-9]+\b/R/g; s/\bP[0-6]\b/P/g; s/ +/ /g'; }
status=0
for i in "${!instances[@]}"; do
  a=$(sass "$before" "$i" "${before_instances[$i]}"); b=$(sass "$after" "$i" "${after_instances[$i]}")
  if [[ "$a" == "$b" ]]; then verdict="identical"
  elif [[ "$(normalise <<<"$a")" == "$(normalise <<<"$b")" ]]; then verdict="identical but for register numbers"
  else verdict="different: $(wc -l <<<"$a") vs $(wc -l <<<"$b") instructions"; status=1; fi
  echo "${after_instances[$i]}: $verdict"
done
exit $status
