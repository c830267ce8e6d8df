#!/usr/bin/env bash
# FlashAttention-3 (flash-attention's hopper/, the decode kernel behind flash_attn_with_kvcache) built
# from its source on a Hopper machine, restricted to what decode runs, and archived for reuse:
#   scripts/peers/build_fa3.sh SRC [--out ARCHIVE] [--hdims 64,128,256] [--dtypes bf16,e4m3]
#                        [--no-softcap] [--no-local] [--jobs N] [--nvcc-threads N] [--reuse]
#                        [--install DIR] [--dry-run]
# SRC is a flash-attention tree: SRC/hopper and SRC/csrc/cutlass/include (the CUTLASS submodule's
# headers) are all the build reads. The registry has no wheel of it (flash-attn 2.8.3 is a source
# archive of FlashAttention-2; fa3-fwd has no paged cache).
#
# What is built: forward only (no backward), sm90 only (no sm80 kernels), head dims --hdims
# (default 64,128,256; 96 and 192 are never built), bf16 plus what --dtypes adds (fp16, e4m3: FA3's
# fp8 takes q, K and V in e4m3), with the paged, split-KV, pack-GQA and variable-length
# (cache_seqlens) instantiations decode needs; no append-KV (decode reads the cache, it appends
# nothing) and none of the mixed head dims (64/256, 64/512, 192/128). Soft cap and sliding window
# stay unless --no-softcap / --no-local. Each head dim and dtype is 10 translation units with the
# soft cap, 5 without (setup.py's product rule: split x paged x softcap x pack-GQA, pack-GQA only
# without paged and split, where FA3 always packs), plus flash_api, combine and the scheduler.
#
# ARCHIVE (default fa3_build.tar.gz) holds flash_attn_3/ (with _C.abi3.so), flash_attn_interface.py,
# flash_attn_config.py and fa3_build_info.json (flags, commit, seconds, nvcc and torch versions);
# `tar -xzf ARCHIVE -C DIR` and PYTHONPATH=DIR make `import flash_attn_interface` work offline.
# --reuse skips the build when ARCHIVE exists; --install DIR unpacks ARCHIVE into DIR afterwards.
# --jobs (default: every core) is ninja's parallelism (MAX_JOBS), --nvcc-threads nvcc's --threads
# per unit (default 1: the units outnumber the cores). --dry-run prints the environment, the units
# and the command, and builds nothing. Exit 2 on bad arguments, 3 when SRC or a tool is missing.
set -euo pipefail

usage() {
  sed -n '3,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
fail() { echo "build_fa3.sh: $1" >&2; exit "${2:-2}"; }

[[ $# -ge 1 ]] || usage
src="" out="fa3_build.tar.gz" hdims="64,128,256" dtypes="bf16" softcap=1 local_mask=1
jobs="$(nproc 2>/dev/null || echo 4)" nvcc_threads=1 reuse=0 install="" dry_run=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="${2:?--out needs a file}"; shift 2 ;;
    --hdims) hdims="${2:?--hdims needs a list}"; shift 2 ;;
    --dtypes) dtypes="${2:?--dtypes needs a list}"; shift 2 ;;
    --no-softcap) softcap=0; shift ;;
    --no-local) local_mask=0; shift ;;
    --jobs) jobs="${2:?--jobs needs a number}"; shift 2 ;;
    --nvcc-threads) nvcc_threads="${2:?--nvcc-threads needs a number}"; shift 2 ;;
    --reuse) reuse=1; shift ;;
    --install) install="${2:?--install needs a folder}"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    -h|--help) usage ;;
    -*) fail "unknown option $1" ;;
    *) [[ -z "$src" ]] || fail "one source tree only (got $src and $1)"; src="$1"; shift ;;
  esac
done
[[ -n "$src" ]] || fail "no source tree given"
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || fail "--jobs $jobs: not a positive number"
[[ "$nvcc_threads" =~ ^[1-9][0-9]*$ ]] || fail "--nvcc-threads $nvcc_threads: not a positive number"

# FA3's switches (setup.py reads FLASH_ATTENTION_DISABLE_*): everything decode never runs is off.
declare -A want_hdim=() want_dtype=([bf16]=1)
IFS=, read -r -a list <<<"$hdims"
for h in "${list[@]}"; do
  case "$h" in 64|128|256) want_hdim[$h]=1 ;; *) fail "--hdims: $h is not one of 64, 128, 256" ;; esac
done
[[ ${#want_hdim[@]} -gt 0 ]] || fail "--hdims: empty"
IFS=, read -r -a list <<<"$dtypes"
for d in "${list[@]}"; do
  case "$d" in bf16|fp16|e4m3) want_dtype[$d]=1 ;; *) fail "--dtypes: $d is not one of bf16, fp16, e4m3" ;; esac
done
flags=(FLASH_ATTENTION_FORCE_BUILD=TRUE FLASH_ATTENTION_OFFLINE_BUILD=1
       FLASH_ATTENTION_DISABLE_BACKWARD=TRUE FLASH_ATTENTION_DISABLE_SM80=TRUE
       FLASH_ATTENTION_DISABLE_APPENDKV=TRUE FLASH_ATTENTION_DISABLE_HDIM96=TRUE
       FLASH_ATTENTION_DISABLE_HDIM192=TRUE FLASH_ATTENTION_DISABLE_HDIMDIFF64=TRUE
       FLASH_ATTENTION_DISABLE_HDIMDIFF192=TRUE)
for h in 64 128 256; do
  [[ -n "${want_hdim[$h]:-}" ]] || flags+=("FLASH_ATTENTION_DISABLE_HDIM$h=TRUE")
done
[[ -n "${want_dtype[fp16]:-}" ]] || flags+=(FLASH_ATTENTION_DISABLE_FP16=TRUE)
[[ -n "${want_dtype[e4m3]:-}" ]] || flags+=(FLASH_ATTENTION_DISABLE_FP8=TRUE)
[[ $softcap -eq 1 ]] || flags+=(FLASH_ATTENTION_DISABLE_SOFTCAP=TRUE)
[[ $local_mask -eq 1 ]] || flags+=(FLASH_ATTENTION_DISABLE_LOCAL=TRUE)
flags+=("MAX_JOBS=$jobs" "NVCC_THREADS=$nvcc_threads")
per=$(( softcap ? 10 : 5 ))
units=$(( ${#want_hdim[@]} * ${#want_dtype[@]} * per + 3 ))
cmd=(python3 setup.py build_ext --inplace)

hopper="$src/hopper"
sorted() { printf '%s\n' "$@" | sort -n | paste -sd, -; }
echo "[fa3] head dims $(sorted "${!want_hdim[@]}"); dtypes $(sorted "${!want_dtype[@]}");" \
     "soft cap $softcap; local $local_mask;" \
     "$units translation units on $jobs job(s)"
if [[ $dry_run -eq 1 ]]; then
  printf '[fa3] env %s\n' "${flags[@]}"
  echo "[fa3] would run in $hopper: ${cmd[*]}; archive $out${install:+; install into $install}"
  exit 0
fi

if [[ $reuse -eq 1 && -f "$out" ]]; then
  echo "[fa3] reusing $out"
else
  [[ -f "$hopper/setup.py" && -d "$src/csrc/cutlass/include/cute" ]] ||
    fail "$src: no hopper/setup.py with csrc/cutlass/include beside it" 3
  command -v nvcc >/dev/null 2>&1 || fail "nvcc is not on PATH" 3
  python3 -c "import torch, wheel" 2>/dev/null || fail "python3 lacks torch or wheel" 3
  [[ -f "$src/README.md" ]] || echo "FlashAttention" > "$src/README.md"  # setup.py reads it
  out_abs="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
  # setup.py runs `git submodule update` unchecked; where git is missing that call raises.
  if ! command -v git >/dev/null 2>&1; then
    stub="$(mktemp -d)"
    printf '#!/bin/sh\nexit 0\n' > "$stub/git" && chmod +x "$stub/git" && export PATH="$stub:$PATH"
  fi
  t0=$(date +%s)
  (cd "$hopper" && env "${flags[@]}" "${cmd[@]}") || fail "the build failed (its log is above)" 1
  seconds=$(( $(date +%s) - t0 ))
  compgen -G "$hopper/flash_attn_3/_C*.so" >/dev/null || fail "the build made no flash_attn_3/_C*.so" 1
  commit="$(cat "$src/FA3_COMMIT" 2>/dev/null || git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)"
  python3 - "$hopper/fa3_build_info.json" "$seconds" "$commit" "$jobs" "$units" "${flags[@]}" <<'EOF'
import json, subprocess, sys, torch
path, seconds, commit, jobs, units, *flags = sys.argv[1:]
nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip()
json.dump({"build_seconds": int(seconds), "commit": commit, "jobs": int(jobs), "units": int(units),
           "flags": flags, "nvcc": nvcc.splitlines()[-1] if nvcc else "", "torch": torch.__version__},
          open(path, "w"), indent=1)
EOF
  tar -czf "$out_abs" -C "$hopper" flash_attn_3 flash_attn_interface.py flash_attn_config.py \
    fa3_build_info.json
  echo "[fa3] built in $seconds s ($units units, $jobs jobs); $out: $(du -h "$out_abs" | cut -f1)"
fi
if [[ -n "$install" ]]; then
  mkdir -p "$install"
  tar -xzf "$out" -C "$install"
  echo "[fa3] installed into $install (PYTHONPATH=$install)"
fi
