#!/usr/bin/env bash
# One GPU session in one call: build what is missing, verify, sanitize, sweep a slice, and print
# a short table last. Logs go to $OUT (or ./gpu-logs). Usage: scripts/lab/gpu_session.sh [STEP...]
# Steps: build verify edge sanitize tests sweep main resume noise reduce peers
# (default: build verify edge sanitize tests).
set -u -o pipefail
cd "$(dirname "$0")/../.."
# Everything lands in $OUT/run and is packed into one archive, $OUT/run.tgz, at the end: one file
# to copy back from the GPU machine.
FINAL_OUT="${OUT:-gpu-logs}"
OUT="$FINAL_OUT/run"
mkdir -p "$OUT"
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(build verify edge sanitize tests)
jobs=$(nproc)
summary=()
note() { summary+=("$1"); echo "== $1"; printf '%s\n' "$1" >>"$OUT/summary.txt"; }

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
      build build-gpu configs/tiles/default.json -DMHA_BUILD_TESTS=OFF; rc1=$?
      build build-gpu-features configs/tiles/features.json -DMHA_BUILD_TESTS=ON; rc2=$?
      build build-gpu-paged configs/tiles/paged.json -DMHA_BUILD_TESTS=OFF; rc3=$?
      note "build: default rc=$rc1, features(+tests) rc=$rc2, paged rc=$rc3, $((SECONDS - t0)) s"
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
      build-gpu-features/mha-tune verify --suite edge --reduce separate --quiet >"$OUT/verify_edge_separate.log" 2>&1; rc=$?
      note "verify --suite edge --reduce separate: rc=$rc: $(tail -1 "$OUT/verify_edge_separate.log")"
      build-gpu-paged/mha-tune verify --suite edge --quiet >"$OUT/verify_edge_paged.log" 2>&1; rc=$?
      note "verify --suite edge paged.json: rc=$rc: $(tail -1 "$OUT/verify_edge_paged.log")"
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
      build-gpu/mha-tune sweep --config configs/suites/default.json ${SWEEP_ARGS:-} --out "$OUT/sweep" >"$OUT/sweep.log" 2>&1; rc=$?
      note "sweep: rc=$rc, $((SECONDS - t0)) s"
      sed -n '/Best configuration per problem/,$p' "$OUT/sweep.log"
      ;;
    reducecmp)  # side by side in one run: split-K combine fused into the kernel vs a separate launch
      t0=$SECONDS
      for mode in fused separate; do
        build-gpu/mha-tune sweep --config configs/suites/default.json --filter '*g4*' --reduce $mode --quiet \
          --out "$OUT/g4_$mode" >"$OUT/g4_$mode.log" 2>&1
      done
      REDUCE=$(python3 -c "
import json, math
t=lambda f:{(r['kernel'],r['problem']['name'],r['partitions']):r['time']['median_us'] for r in json.load(open(f))['rows'] if r['status']=='passed'}
a,b=t('$OUT/g4_fused.json'),t('$OUT/g4_separate.json')
v=[a[k]/b[k] for k in a if k in b and k[2]>1]
g=math.exp(sum(map(math.log,v))/len(v)); print('fused' if g<1 else 'separate', f'{g:.4f}')")
      note "reduce side by side (g4, P>1): fused/separate geomean ${REDUCE#* } -> main sweep uses ${REDUCE%% *}; $((SECONDS - t0)) s"
      REDUCE=${REDUCE%% *}
      ;;
    main)  # the README's main job, as a new user runs it
      t0=$SECONDS
      ./scripts/sweep.sh --quiet --reduce "${REDUCE:-fused}" --out "$OUT/default_sweep" >"$OUT/main.log" 2>&1; rc=$?
      note "main sweep (./scripts/sweep.sh): rc=$rc, $((SECONDS - t0)) s"
      ;;
    resume)  # interrupted then resumed must give the same rows as one uninterrupted run
      t0=$SECONDS
      args=(--config configs/suites/default.json --filter '*g4*bn64_bk32*s2*' --quiet)
      build/mha-tune sweep "${args[@]}" --out "$OUT/whole" >"$OUT/resume.log" 2>&1
      timeout -s INT 6 build/mha-tune sweep "${args[@]}" --out "$OUT/parts" >>"$OUT/resume.log" 2>&1; rc1=$?
      build/mha-tune sweep "${args[@]}" --out "$OUT/parts" --resume >>"$OUT/resume.log" 2>&1; rc2=$?
      same=$(python3 -c "
import json,sys
k=lambda f:sorted((r['kernel'],r['problem']['name'],r['partitions'],r['status']) for r in json.load(open(f))['rows'])
a,b=k('$OUT/whole.json'),k('$OUT/parts.json'); print(len(a),len(b),'same rows' if a==b else 'DIFFERENT rows: %s | %s' % (sorted(set(a)-set(b))[:3], sorted(set(b)-set(a))[:3]))")
      note "interrupt (rc=$rc1) + resume (rc=$rc2): $same, $((SECONDS - t0)) s"
      ;;
    noise)  # the same sweep twice: medians within 3% for points over 20 us
      t0=$SECONDS
      args=(--config configs/suites/default.json --filter '*g4*' --quiet)
      build/mha-tune sweep "${args[@]}" --out "$OUT/noise_a" >"$OUT/noise.log" 2>&1
      build/mha-tune sweep "${args[@]}" --out "$OUT/noise_b" >>"$OUT/noise.log" 2>&1
      build/mha-tune compare "$OUT/noise_a.json" "$OUT/noise_b.json" >"$OUT/noise_compare.md" 2>&1; rc=$?
      spread=$(python3 -c "
import json
a={(r['kernel'],r['problem']['name'],r['partitions']):r['time']['median_us'] for r in json.load(open('$OUT/noise_a.json'))['rows'] if r['status']=='passed'}
b={(r['kernel'],r['problem']['name'],r['partitions']):r['time']['median_us'] for r in json.load(open('$OUT/noise_b.json'))['rows'] if r['status']=='passed'}
d=sorted(abs(b[k]/a[k]-1) for k in a if k in b and a[k]>20)
print(f'{len(d)} points >20us: median diff {100*d[len(d)//2]:.2f}%, p95 {100*d[int(len(d)*.95)]:.2f}%, max {100*d[-1]:.2f}%, over 3%: {sum(x>0.03 for x in d)}')")
      note "noise (g4 family twice): compare rc=$rc; $spread; $((SECONDS - t0)) s"
      ;;
    reduce)  # side by side: split-K reduce as a separate launch vs fused (the main sweep)
      t0=$SECONDS
      build/mha-tune sweep --config configs/suites/default.json --filter '*g4*' --reduce separate --quiet \
        --out "$OUT/separate_reduce" >"$OUT/reduce.log" 2>&1; rc=$?
      note "separate-reduce sweep (g4 family): rc=$rc, $((SECONDS - t0)) s"
      ;;
    paged)
      t0=$SECONDS
      build-gpu-paged/mha-tune sweep --config configs/suites/paged.json --quiet --reduce "${REDUCE:-fused}" \
        --out "$OUT/paged_sweep" >"$OUT/paged.log" 2>&1; rc=$?
      note "paged sweep: rc=$rc, $((SECONDS - t0)) s"
      ;;
    dump)  # --dump files must let anyone recompute the result: numpy float64 from the dumped inputs
      t0=$SECONDS
      rm -rf "$OUT/dump"
      build-gpu-features/mha-tune verify --filter '*g7_contig_chunked_sink*' --dump "$OUT/dump" \
        --problem "batch=2,kv_heads=2,keys=300,chunk=100,partitions=3,sink_mean=1" --quiet >"$OUT/dump.log" 2>&1; rc=$?
      check=$(python3 scripts/check_dump.py "$OUT/dump" 2>&1 | tail -1)
      note "verify --dump: rc=$rc; $check"
      ;;
    peers)
      t0=$SECONDS
      # The problems come from the sweep's own plan (peers.py reads no specs).
      plan=()
      for b in 1 8; do
        for hk in 32,8 64,8 32,32; do  # heads,kv_heads
          spec="batch=$b,heads=${hk%,*},kv_heads=${hk#*,},dtype=bf16,kv=contig"
          plan+=(--problem "$spec,keys=512:131072:x4")
        done
      done
      build-gpu/mha-tune sweep --dry-run --json "${plan[@]}" >"$OUT/peers_plan.json" \
        2>"$OUT/peers.log" &&
        python3 scripts/peers/peers.py --plan "$OUT/peers_plan.json" --out "$OUT/peers" \
          --peers flash,cudnn >>"$OUT/peers.log" 2>&1; rc=$?
      note "peers.py (torch SDPA flash + cudnn): rc=$rc, $((SECONDS - t0)) s"
      ;;
  esac
  tar czf "$FINAL_OUT/run.tgz" -C "$FINAL_OUT" run  # after every step: a timeout loses nothing
done
printf '%s\n' "${summary[@]}" >"$OUT/summary.txt"
tar czf "$FINAL_OUT/run.tgz" -C "$FINAL_OUT" run && rm -rf "$OUT"
echo
echo "=== summary ==="
printf '%s\n' "${summary[@]}"
