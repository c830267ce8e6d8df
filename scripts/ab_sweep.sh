#!/usr/bin/env bash
# A/B of two source trees in one run on one GPU (docs/performance.md's rule: a "faster" claim
# compares within one run). Builds both trees' binaries for CONFIG, verifies each on CONFIG's suite
# (a failure stops the run: nothing wrong is timed), sweeps the suite with the "before" binary,
# then the "after" one, and compares them with `mha-tune compare` (PREFIX_compare.md; its exit
# code is the script's), printing the best time per problem of each side and their ratio.
#   scripts/ab_sweep.sh BEFORE_TREE AFTER_TREE CONFIG PREFIX [extra sweep arguments...]
# Trees are source checkouts; on a machine without .git, make one with
#   git archive <rev> | tar -x -C .ab/before
# and name each tree's commit with MHA_GIT_COMMIT_BEFORE / MHA_GIT_COMMIT_AFTER.
set -euo pipefail
if [[ $# -lt 4 ]]; then
  echo "usage: scripts/ab_sweep.sh BEFORE_TREE AFTER_TREE CONFIG PREFIX [sweep args...]" >&2
  exit 2
fi
before=$1 after=$2 config=$3 prefix=$4
shift 4
for tree in "$before" "$after"; do
  [[ -f "$tree/scripts/setup.sh" ]] || { echo "ab_sweep.sh: $tree: not an mha-tune source tree" >&2; exit 2; }
done
[[ -f "$config" ]] || { echo "ab_sweep.sh: $config: no such config" >&2; exit 2; }
config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")
mkdir -p "$(dirname "$prefix")"

build() {  # tree, commit -> builds tree/build-ab for the config
  (cd "$1" && MHA_GIT_COMMIT=$2 bash -c "source scripts/setup.sh && mha_setup build-ab '$config'")
}
build "$before" "${MHA_GIT_COMMIT_BEFORE:-before}" > "${prefix}_build_before.log" 2>&1 &
build "$after" "${MHA_GIT_COMMIT_AFTER:-after}" > "${prefix}_build_after.log" 2>&1 &
wait %1 || { tail -n 20 "${prefix}_build_before.log"; echo "ab_sweep.sh: the before tree did not build" >&2; exit 2; }
wait %2 || { tail -n 20 "${prefix}_build_after.log"; echo "ab_sweep.sh: the after tree did not build" >&2; exit 2; }

for side in before after; do
  tree=$before; [[ $side == after ]] && tree=$after
  "$tree/build-ab/mha-tune" verify --problems "$config" --quiet > "${prefix}_verify_$side.log" ||
    { tail -n 20 "${prefix}_verify_$side.log"; echo "ab_sweep.sh: $side failed verification" >&2; exit 1; }
done
"$before/build-ab/mha-tune" sweep --config "$config" --out "${prefix}_before" --quiet "$@"
"$after/build-ab/mha-tune" sweep --config "$config" --out "${prefix}_after" --quiet "$@"
status=0
"$after/build-ab/mha-tune" compare "${prefix}_before.json" "${prefix}_after.json" > "${prefix}_compare.md" || status=$?
python3 - "${prefix}_before.json" "${prefix}_after.json" "$(dirname "${BASH_SOURCE[0]}")" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
from mha_report import best_by_problem, geomean, load_report, ratios_by_kernel
rows_before, rows_after = (load_report(path)["rows"] for path in sys.argv[1:3])
before, after = best_by_problem(rows_before), best_by_problem(rows_after)
ratios = []
print("| problem | before µs | after µs | after / before |\n|---|---:|---:|---:|")
for name in sorted(set(before) & set(after)):
    b, a = before[name]["time"]["median_us"], after[name]["time"]["median_us"]
    ratios.append(a / b)
    print(f"| {name} | {b:.2f} | {a:.2f} | {a / b:.3f} |")
if ratios:
    print(f"\nBest per problem, after / before: geomean {geomean(ratios):.3f} over {len(ratios)}")
# Every kernel's movement, slowest first: a kernel that got slower but is never the best moves
# no row above, and may be a lead (a 6-stage tile was one).
by_kernel = ratios_by_kernel(rows_before, rows_after)
if by_kernel:
    print("\n| kernel | points | after / before (geomean) | min | max |\n|---|---:|---:|---:|---:|")
    for kernel, v in sorted(by_kernel.items(), key=lambda kv: -geomean(kv[1])):
        print(f"| {kernel} | {len(v)} | {geomean(v):.3f} | {min(v):.3f} | {max(v):.3f} |")
PY
exit $status
