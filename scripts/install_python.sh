#!/usr/bin/env bash
# Installs the PyTorch package (python/, `import mha_tune`) into the active Python environment in
# one command: builds the C++ library for a config (default configs/suites/default.json; like sweep.sh,
# build/ for it and build-<config stem>/ for any other), installs it into
# <build dir>/python-prefix, then pip-installs python/ against that prefix. Offline: pip runs with
# --no-build-isolation --no-deps --no-index, so the extension compiles against this environment's
# own torch and scikit-build-core, which must be installed first (checked before building).
#   ./scripts/install_python.sh                                   # configs/suites/default.json
#   MHA_CONFIG=configs/suites/paged_layouts.json ./scripts/install_python.sh
#   ./scripts/install_python.sh --config configs/suites/fp8.json --target /tmp/site   # args after the
#                                                                 # config go to pip install
# Environment: PYTHON (default python3: the environment to install into), CXX (the extension's
# compiler; default the C++ build's), MHA_CONFIG,
# MHA_CMAKE_ARGS, MHA_KERNEL_FILTER and MHA_JOBS (setup.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$MHA_ROOT"
python="${PYTHON:-python3}"

# What pip needs from the environment, before minutes of kernel builds.
missing=()
"$python" -c "import torch" >/dev/null 2>&1 || missing+=(torch)
"$python" -c "import scikit_build_core" >/dev/null 2>&1 || missing+=(scikit-build-core)
"$python" -m pip --version >/dev/null 2>&1 || missing+=(pip)
if [[ ${#missing[@]} -gt 0 ]]; then
  mha_log "error: $python ($(command -v "$python" || echo 'not found')) lacks: ${missing[*]}."
  mha_log "Install them into this environment first, e.g. $python -m pip install torch" \
          "scikit-build-core; this script downloads nothing (set PYTHON to use another)."
  exit 2
fi

mha_config_args "$@"
pip_args=("${rest_args[@]}")
mha_setup "$build_dir" "$config"

prefix="$MHA_ROOT/$build_dir/python-prefix"
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
# The extension's build uses the C++ build's CUDA toolkit, and its compiler unless CXX names one:
# a GCC that finds only a static libstdc++ builds the library but not a torch extension.
defines=("-Ccmake.define.CMAKE_PREFIX_PATH=$prefix"
         "-Ccmake.define.CMAKE_CXX_COMPILER=${CXX:-$(mha_cached "$build_dir" CMAKE_CXX_COMPILER)}")
nvcc="$(mha_cached "$build_dir" CMAKE_CUDA_COMPILER)"
[[ -n "$nvcc" ]] && defines+=("-Ccmake.define.CUDAToolkit_ROOT=$(dirname "$(dirname "$nvcc")")")
mha_log "pip install ./python into $("$python" -c 'import sys; print(sys.prefix)')"
"$python" -m pip install --no-build-isolation --no-deps --no-index \
  "-Cbuild-dir=$MHA_ROOT/$build_dir/python-build" "${defines[@]}" \
  ${pip_args[@]+"${pip_args[@]}"} "$MHA_ROOT/python"
# Installed into this environment (not elsewhere with --target): it must import.
if [[ ${#pip_args[@]} -eq 0 ]]; then
  (cd / && "$python" -c "import mha_tune; print('mha_tune', mha_tune.__version__, \
mha_tune.build_info(), len(mha_tune.kernels()), 'kernel(s)')")
fi
