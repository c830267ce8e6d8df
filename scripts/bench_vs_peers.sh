#!/usr/bin/env bash
# Issue 6's side-by-side comparison in one command, on this machine's GPU: the default sweep,
# the PyTorch SDPA peers on the same shapes (scripts/peers.py), `mha-tune select` on the sweep,
# then scripts/side_by_side.py. Writes results/<prefix>_{default,peers,defaults}.json and prints
# the markdown table last. Usage: scripts/bench_vs_peers.sh [PREFIX]   (default: results/bench)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
prefix=${1:-results/bench}
./scripts/sweep.sh --quiet --out "${prefix}_default"
shapes="b=1,h=32,kv=8;b=8,h=32,kv=8;b=1,h=64,kv=8;b=8,h=64,kv=8;b=1,h=32,kv=32;b=8,h=32,kv=32"
lengths="n=512:2048:8192:32768:131072"
python3 scripts/peers.py --out "${prefix}_peers" --problems "$(echo "$shapes" | sed "s/;/,$lengths;/g"),$lengths"
build/mha-tune select "${prefix}_default.json" --out-json "${prefix}_defaults.json" \
  --out-header "${prefix}_defaults.h" >"${prefix}_select.md"
python3 scripts/side_by_side.py "${prefix}_default.json" "${prefix}_peers.json" "${prefix}_defaults.json"
