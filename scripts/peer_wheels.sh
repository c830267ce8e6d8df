#!/usr/bin/env bash
# The peers' Python packages as wheels, for GPU machines without a package registry:
#   scripts/peer_wheels.sh fetch [DIR]     where PyPI is reachable: download the wheels (default .whl/)
#   source scripts/peer_wheels.sh install [DIR]   on the GPU machine: install them offline into
#                                          $MHA_PEER_SITE (default /tmp/mha_peer_site) and export
#                                          PYTHONPATH; a missing DIR leaves the peers 'skipped'.
# FlashInfer 0.5.3 runs with PyTorch 2.11 (cu130) on the H200 and compiles its kernels just in time
# with nvcc; its three wheels are 21 MB. flashinfer-python 0.7.x is a 62 MB wheel (427 MB unpacked,
# mostly sources decode never compiles): scripts/trim_flashinfer_wheel.py re-packs it with only
# what its decode paths build from (0.7.2.post1: 22.0 MB). Wheels are never committed (.whl/ is
# ignored).
# Versions: FlashInfer's own needs besides these (torch, numpy, ninja, requests, ...) are on the
# GPU image; nvidia-cutlass-dsl is only for its CuTe-DSL kernels, which decode does not import.
MHA_PEER_WHEELS=(flashinfer-python==0.5.3 apache-tvm-ffi==0.1.15.post2 nvidia-cudnn-frontend==1.32.0)

mha_peer_wheels_fetch() {
  local dir="${1:-.whl}"
  mkdir -p "$dir"
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
    -d "$dir" "${MHA_PEER_WHEELS[@]}"
}

mha_peer_wheels_install() {
  local dir="${1:-.whl}" site="${MHA_PEER_SITE:-/tmp/mha_peer_site}"
  if ! ls "$dir"/*.whl >/dev/null 2>&1; then
    echo "[peer wheels] no wheels in $dir: FlashInfer peers will be reported 'skipped'" >&2
    return 0
  fi
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$site" "$dir"/*.whl || return 1
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
}

case "${1:-}" in
  fetch) shift; mha_peer_wheels_fetch "$@" ;;
  install) shift; mha_peer_wheels_install "$@" ;;
  *) echo "usage: scripts/peer_wheels.sh fetch [DIR] | source scripts/peer_wheels.sh install [DIR]" >&2
     return 2 2>/dev/null || exit 2 ;;
esac
