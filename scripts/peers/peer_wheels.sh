#!/usr/bin/env bash
# The peers' Python packages as wheels, for GPU machines without a package registry:
#   scripts/peers/peer_wheels.sh fetch [DIR]           where PyPI is reachable: download the
#                                                      wheels (default .whl/)
#   source scripts/peers/peer_wheels.sh install [DIR]  on the GPU machine: install them offline
#                                                      into $MHA_PEER_SITE (default
#                                                      /tmp/mha_peer_site) and export PYTHONPATH;
#                                                      a missing DIR leaves the peers 'skipped'.
# FlashInfer 0.5.3 runs with PyTorch 2.11 (cu130) on the H200 and compiles its kernels just in time
# with nvcc; its three wheels are 21 MB. flashinfer-python 0.7.x is a 62 MB wheel (427 MB unpacked,
# mostly sources decode never compiles): scripts/peers/trim_flashinfer_wheel.py re-packs it with
# only what its decode paths build from (0.7.2.post1: 22.0 MB). It goes to DIR/v072/, installed into
# a folder of its own ($MHA_PEER_SITE-v072) that peers.py puts first on its workers' PYTHONPATH
# (--flashinfer-site v072=...; install exports MHA_FLASHINFER_SITE_ARGS with it), so both versions
# run in one call. 0.7.2 imports with 0.5.3's apache-tvm-ffi and cudnn-frontend (it asks for
# >= 0.1.11 and >= 1.31) and, of its other declared needs, only cuda-bindings, which the GPU image
# has: nvidia-cutlass-dsl, cuda-tile, nccl4py and nccl-extensions are for CuTe-DSL, cuTile and
# communication kernels that decode does not import. A FlashAttention-3 build archive
# (scripts/peers/build_fa3.sh) at DIR/fa3_build.tar.gz is unpacked into $MHA_PEER_SITE-fa3 and put
# on PYTHONPATH too. Wheels are never committed (.whl/ is ignored).
# Versions: FlashInfer's own needs besides these (torch, numpy, ninja, requests, ...) are on the
# GPU image.
MHA_PEER_WHEELS=(flashinfer-python==0.5.3 apache-tvm-ffi==0.1.15.post2 nvidia-cudnn-frontend==1.32.0)
MHA_PEER_WHEELS_V072=(flashinfer-python==0.7.2.post1)

mha_peer_wheels_fetch() {
  local dir="${1:-.whl}"
  mkdir -p "$dir"
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
    -d "$dir" "${MHA_PEER_WHEELS[@]}"
  # 0.7.2, trimmed where this machine can run the trim (torch, apache-tvm-ffi and nvcc).
  local tmp
  tmp="$(mktemp -d)"
  python3 -m pip download --no-deps --only-binary=:all: -d "$tmp" "${MHA_PEER_WHEELS_V072[@]}" &&
    mkdir -p "$dir/v072" &&
    { python3 "$(dirname "${BASH_SOURCE[0]}")/trim_flashinfer_wheel.py" "$tmp"/flashinfer_python-*.whl \
        --out "$dir/v072" ||
      echo "[peer wheels] 0.7.2 not trimmed (see above): its peers will be 'skipped'" >&2; }
  rm -rf "$tmp"
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
  MHA_FLASHINFER_SITE_ARGS=""
  local sub tag
  for sub in "$dir"/*/; do  # a second FlashInfer per folder, named by it (v072)
    tag="$(basename "$sub")"
    ls "$sub"flashinfer_python-*.whl >/dev/null 2>&1 || continue
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target "$site-$tag" "$sub"flashinfer_python-*.whl || return 1
    MHA_FLASHINFER_SITE_ARGS+=" --flashinfer-site $tag=$site-$tag"
  done
  export MHA_FLASHINFER_SITE_ARGS
  if [[ -f "$dir/fa3_build.tar.gz" ]]; then
    mkdir -p "$site-fa3" && tar -xzf "$dir/fa3_build.tar.gz" -C "$site-fa3" || return 1
    export PYTHONPATH="$site-fa3:$PYTHONPATH"
  fi
}

case "${1:-}" in
  fetch) shift; mha_peer_wheels_fetch "$@" ;;
  install) shift; mha_peer_wheels_install "$@" ;;
  *) echo "usage: scripts/peers/peer_wheels.sh fetch [DIR] |" \
          "source scripts/peers/peer_wheels.sh install [DIR]" >&2
     return 2 2>/dev/null || exit 2 ;;
esac
