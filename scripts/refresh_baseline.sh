#!/usr/bin/env bash
# Refreshes the regression baseline with main's kernels, the step a kernel change ends with: on an
# H200 with a clean checkout, sweeps configs/suites/default.json as the baseline was swept
# (--reduce separate), compares the new sweep with the committed baseline under the noise floor
# (the summary goes to build/baseline_refresh_compare.md: explain every regression in
# docs/performance.md, "The baseline"), and writes the new sweep over results/h200_default.json
# with its commit in the metadata. Commit the new baseline; the summary is run history.
#   scripts/refresh_baseline.sh [extra sweep arguments]
# Exit 2 on a dirty tree (a baseline must come from a commit) or a GPU that is not the baseline's.
# A copy of a commit (files copied to a GPU machine, its .git absent or not that commit's) names
# the commit in MHA_GIT_COMMIT; the tree is then not checked.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
baseline=results/h200_default.json
floor=results/h200_2026-11-29_noise_floor.json
[[ -f "$baseline" ]] || { echo "refresh_baseline.sh: $baseline is missing" >&2; exit 2; }
if [[ -n "${MHA_GIT_COMMIT:-}" ]]; then
  commit=$MHA_GIT_COMMIT
elif git rev-parse --git-dir > /dev/null 2>&1; then
  if [[ -n "$(git status --porcelain --untracked-files=no)" ]]; then
    echo "refresh_baseline.sh: the tree has uncommitted changes: a baseline comes from a commit" >&2
    exit 2
  fi
  commit=$(git rev-parse --short HEAD)
else
  echo "refresh_baseline.sh: not a git checkout: name the commit this copy holds in MHA_GIT_COMMIT" >&2
  exit 2
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 || true)
want=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['metadata']['gpu_name'])" "$baseline")
[[ "$gpu" == "$want" ]] || {
  echo "refresh_baseline.sh: the baseline is a $want's; this machine's GPU 0 is '${gpu:-none}'" >&2
  exit 2
}
candidate=results/baseline_candidate_$commit
MHA_GIT_COMMIT=$commit ./scripts/sweep.sh --config configs/suites/default.json --reduce separate \
  --out "$candidate" --force "$@"
status=0
build/mha-tune compare "$baseline" "$candidate.json" --noise "$floor" \
  --markdown build/baseline_refresh_compare.md > /dev/null || status=$?
mv "$candidate.json" "$baseline"
rm -f "$candidate.csv" "$candidate.journal.jsonl"
echo "wrote $baseline (commit $commit); compare against the old one: exit $status, summary in" \
     "build/baseline_refresh_compare.md"
