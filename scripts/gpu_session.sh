#!/usr/bin/env bash
# One GPU session in one call: build what is missing, verify, sanitize, sweep a slice, and print
# a short table last. Logs go to $OUT (or ./gpu-logs). Usage: scripts/gpu_session.sh [STEP...]
# Steps: build verify edge sanitize tests sweep (default: all but sweep).
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-gpu-logs}"
mkdir -p "$OUT"
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(build verify edge sanitize tests)
jobs=$(nproc)
summary=()
note() { summary+=("$1"); echo "== $1"; }

build() {  # build DIR CONFIG [extra cmake args]
  local dir=$1 config=$2; shift 2
  if [[ ! -x $dir/mha-tune ]] || ! cmp -s "$config" "$dir/.config-used"; then
    cmake -S . -B "$dir" -G Ninja -DMHA_CONFIG="$config" "$@" >"$OUT/cmake_$(basename $dir).log" 2>&1 &&
      ninja -C "$dir" -j"$jobs" >"$OUT/build_$(basename $dir).log" 2>&1 && cp "$config" "$dir/.config-used"
  else
    ninja -C "$dir" -j"$jobs" >"$OUT/build_$(basename $dir).log" 2>&1
  fi
}

for step in "${steps[@]}"; do
  case $step in
    build)
      t0=$SECONDS
      build build-gpu configs/default.json -DMHA_BUILD_TESTS=OFF; rc1=$?
      build build-gpu-features configs/features.json -DMHA_BUILD_TESTS=ON; rc2=$?
      note "build: default rc=$rc1, features(+tests) rc=$rc2, $((SECONDS - t0)) s"
      tail -5 "$OUT"/build_*.log | grep -E "error|FAILED" | head -20
      ;;
    verify)
      t0=$SECONDS
      build-gpu/mha-tune verify --quiet >"$OUT/verify_default.log" 2>&1; rc=$?
      note "verify default.json (basic suite): rc=$rc, $((SECONDS - t0)) s: $(tail -1 "$OUT/verify_default.log")"
      ;;
    edge)
      t0=$SECONDS
      build-gpu-features/mha-tune verify --suite edge --quiet >"$OUT/verify_edge.log" 2>&1; rc=$?
      note "verify --suite edge features.json: rc=$rc, $((SECONDS - t0)) s: $(tail -1 "$OUT/verify_edge.log")"
      ;;
    sanitize)
      t0=$SECONDS
      compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu-features/mha-tune verify \
        --problem "batch=2,kv_heads=2,keys=1:65:1000,partitions=1:3:40" --quiet >"$OUT/memcheck.log" 2>&1; rc=$?
      note "memcheck (features kernels, 3 lengths x 3 partitions): rc=$rc, $((SECONDS - t0)) s: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
      compute-sanitizer --tool racecheck --error-exitcode 9 build-gpu-features/mha-tune verify \
        --filter '*g4*' --problem "batch=1,kv_heads=1,keys=200,partitions=1:2" --quiet >"$OUT/racecheck.log" 2>&1; rc=$?
      note "racecheck (g4 kernels): rc=$rc: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log" | tail -1)"
      ;;
    tests)
      t0=$SECONDS
      (cd build-gpu-features && ctest --output-on-failure -j4) >"$OUT/ctest.log" 2>&1; rc=$?
      note "ctest (features build, host + gpu): rc=$rc, $((SECONDS - t0)) s: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -1)"
      ;;
    sweep)
      t0=$SECONDS
      build-gpu/mha-tune sweep --config configs/default.json ${SWEEP_ARGS:-} --out "$OUT/sweep" >"$OUT/sweep.log" 2>&1; rc=$?
      note "sweep: rc=$rc, $((SECONDS - t0)) s"
      sed -n '/Best configuration per problem/,$p' "$OUT/sweep.log"
      ;;
  esac
done
echo
echo "=== summary ==="
printf '%s\n' "${summary[@]}"
