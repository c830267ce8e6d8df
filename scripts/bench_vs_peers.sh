#!/usr/bin/env bash
# Ours against every peer on one suite, in one command, on this machine's GPU 0:
#   1. builds the suite's config (default configs/suites/serving.json) into build-<config name>/,
#   2. verifies every kernel on the suite (a failure stops the run: nothing wrong is timed),
#   3. sweeps it (PREFIX_ours.json) and lets `mha-tune select` choose the defaults,
#   4. times the peers on the same problems (the sweep's --dry-run --json plan, PREFIX_plan.json,
#      read by scripts/peers/peers.py --plan; PREFIX_peers.json), installing the
#      FlashInfer wheels offline from .whl/ when it is there (scripts/peers/peer_wheels.sh: 0.5.3, a
#      second FlashInfer from .whl/v072/, a FlashAttention-3 build from .whl/fa3_build.tar.gz),
#   5. prints scripts/peers/side_by_side.py's table, also written to PREFIX_side_by_side.md.
# Usage: scripts/bench_vs_peers.sh [PREFIX] [CONFIG]   (default: results/bench configs/suites/serving.json)
# Extra peers.py arguments: MHA_PEERS_ARGS="--peers fi_tc,fi_xqa". MHA_BENCH_SECONDS=N bounds the
# whole run: the peers get what the build, verification and sweep left (less 15 s for the table),
# and those that find it spent are 'skipped' with that reason (peers.py --stop-after).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
prefix=${1:-results/bench}
config=${2:-configs/suites/serving.json}
build="build-$(basename "$config" .json)"
mkdir -p "$(dirname "$prefix")"
# shellcheck source-path=SCRIPTDIR
source scripts/setup.sh
mha_setup "$build" "$config"
"$build/mha-tune" verify --problems "$config" > "${prefix}_verify.log" ||
  { tail -n 20 "${prefix}_verify.log"; echo "bench_vs_peers: verification failed" >&2; exit 1; }
tail -n 1 "${prefix}_verify.log"
"$build/mha-tune" sweep --config "$config" --out "${prefix}_ours" --quiet
"$build/mha-tune" select "${prefix}_ours.json" --out-json "${prefix}_defaults.json" \
  --out-defaults "${prefix}_defaults_table.json" > "${prefix}_select.md"
# shellcheck source=peers/peer_wheels.sh
source scripts/peers/peer_wheels.sh install .whl
# The peers take the sweep's own expansion of the suite (names, ranges, mixes): the same problems.
"$build/mha-tune" sweep --config "$config" --dry-run --json > "${prefix}_plan.json"
stop_after=()
if [[ -n "${MHA_BENCH_SECONDS:-}" ]]; then
  [[ "$MHA_BENCH_SECONDS" =~ ^[1-9][0-9]*$ ]] ||
    { echo "bench_vs_peers: MHA_BENCH_SECONDS=$MHA_BENCH_SECONDS is not a positive number" >&2; exit 2; }
  left=$(( MHA_BENCH_SECONDS - SECONDS - 15 ))
  (( left > 0 )) || { echo "bench_vs_peers: MHA_BENCH_SECONDS=$MHA_BENCH_SECONDS was spent" \
                             "before the peers (${SECONDS} s)" >&2; exit 1; }
  stop_after=(--stop-after "$left")
fi
# shellcheck disable=SC2086  # word splitting of user-given arguments is intended
python3 scripts/peers/peers.py --plan "${prefix}_plan.json" --out "${prefix}_peers" \
  "${stop_after[@]}" ${MHA_FLASHINFER_SITE_ARGS:-} ${MHA_PEERS_ARGS:-}
python3 scripts/peers/side_by_side.py "${prefix}_ours.json" "${prefix}_peers.json" \
  "${prefix}_defaults.json" | tee "${prefix}_side_by_side.md"
# A suite with uniform twins of its ragged batches (configs/suites/ragged.json): what raggedness costs.
if grep -q "_uniform_equiv" "$config"; then
  python3 scripts/peers/ragged_vs_uniform.py "${prefix}_ours.json" |
    tee "${prefix}_ragged_vs_uniform.md"
fi
