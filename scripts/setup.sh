#!/usr/bin/env bash
# Shared by scripts/sweep.sh and scripts/test.sh (source it, then call mha_setup BUILD_DIR CONFIG):
# installs missing build dependencies (Debian/Ubuntu, apt-get) only when something is missing,
# configures BUILD_DIR once (again only when the config changes or MHA_CMAKE_ARGS is set), builds.
# Environment: MHA_CMAKE_ARGS (extra configure arguments, e.g. "-DCMAKE_CUDA_ARCHITECTURES=80"),
# MHA_KERNEL_FILTER (globs over kernel names), MHA_JOBS (build jobs; default nproc).

MHA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MHA_APT_PACKAGES=(cmake ninja-build libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev
                  libgmock-dev)

mha_log() { echo "[mha setup] $*" >&2; }

mha_cmake_ok() {  # cmake >= 3.25 on PATH
  command -v cmake >/dev/null 2>&1 || return 1
  local v
  v="$(cmake --version | head -n1 | sed -E 's/[^0-9]*([0-9]+)\.([0-9]+).*/\1 \2/')"
  read -r major minor <<<"$v"
  [[ "$major" -gt 3 || ( "$major" -eq 3 && "$minor" -ge 25 ) ]]
}

# Packages that are neither installed (dpkg) nor provided some other way (a command on PATH).
mha_missing_packages() {
  local pkg missing=()
  for pkg in "${MHA_APT_PACKAGES[@]}"; do
    case "$pkg" in
      cmake) mha_cmake_ok && continue ;;
      ninja-build) command -v ninja >/dev/null 2>&1 && continue ;;
    esac
    if command -v dpkg-query >/dev/null 2>&1 &&
       dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      continue
    fi
    missing+=("$pkg")
  done
  echo "${missing[@]}"
}

# Whether CMake package configs for the libraries can be found in the usual prefixes.
mha_find_cmake_configs() {
  local name prefixes=(/usr /usr/local /opt) extra=()
  IFS=: read -r -a extra <<<"${CMAKE_PREFIX_PATH:-}:${CONDA_PREFIX:-}"
  for name in "${extra[@]}"; do [[ -d "$name" ]] && prefixes+=("$name"); done
  for name in CLI11Config.cmake nlohmann_jsonConfig.cmake fmt-config.cmake GTestConfig.cmake; do
    if ! find "${prefixes[@]}" -maxdepth 6 -name "$name" -print -quit 2>/dev/null | grep -q .; then
      mha_log "not found: $name"
      return 1
    fi
  done
}

# mha_apt_install PACKAGE...: through apt-get (with sudo when not root); fails without apt.
mha_apt_install() {
  local sudo=()
  if [[ "$(id -u)" -ne 0 ]] && command -v sudo >/dev/null 2>&1; then sudo=(sudo); fi
  command -v apt-get >/dev/null 2>&1 || return 1
  # Said before it happens: sudo may ask for a password, and the packages change the system.
  mha_log "installing with ${sudo[*]:+sudo }apt-get: $*"
  command -v apt-get >/dev/null 2>&1 &&
    { "${sudo[@]}" apt-get update -qq || true; } &&
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
      "$@" >&2
}

# mha_config_args ARG...: the main-job scripts' arguments. Sets `config` (--config FILE, else
# $MHA_CONFIG, else configs/suites/default.json), `build_dir` (build/ for configs/suites/default.json,
# build-<config stem>/ for any other) and `rest_args` (every other argument, in order); exits 2
# on a missing config.
mha_config_args() {
  config="${MHA_CONFIG:-configs/suites/default.json}"
  rest_args=()
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --config)
        [[ $# -ge 2 ]] || { mha_log "error: --config needs a file"; exit 2; }
        config="$2"
        shift 2
        ;;
      --config=*) config="${1#--config=}"; shift ;;
      *) rest_args+=("$1"); shift ;;
    esac
  done
  [[ -f "$config" ]] || { mha_log "error: config $config does not exist"; exit 2; }
  build_dir="build-$(basename "$config" .json)"
  [[ "$(realpath "$config")" == "$(realpath configs/suites/default.json)" ]] && build_dir=build
  mha_log "config $config -> $build_dir/"
}

mha_install_deps() {
  local missing=()
  read -r -a missing <<<"$(mha_missing_packages)"
  [[ ${#missing[@]} -eq 0 ]] && return 0
  mha_log "missing: ${missing[*]}"
  mha_apt_install "${missing[@]}" && return 0
  # No apt (or it failed): carry on when the tools and packages are there some other way.
  mha_log "could not install with apt-get; looking for the packages' CMake configs"
  mha_cmake_ok || { mha_log "error: cmake >= 3.25 is required"; return 1; }
  mha_find_cmake_configs ||
    mha_log "warning: some CMake configs were not found; configure may fail (set CMAKE_PREFIX_PATH)"
  return 0
}

# matplotlib and numpy for scripts/plot_report.py (not needed to build or test: the plot tests
# skip without them). apt's python3-matplotlib where possible, else pip for this user.
mha_install_plot_deps() {
  python3 -c "import matplotlib, numpy" 2>/dev/null && return 0
  mha_log "matplotlib or numpy missing: installing python3-matplotlib"
  mha_apt_install python3-matplotlib python3-numpy && return 0
  python3 -m pip install --user matplotlib numpy >&2
}

# nvcc is often installed but not on PATH.
mha_find_nvcc() {
  if [[ -z "${CUDACXX:-}" ]] && ! command -v nvcc >/dev/null 2>&1; then
    local c
    for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do
      if [[ -x "$c" ]]; then export CUDACXX="$c"; return 0; fi
    done
  fi
}

mha_cached() {  # mha_cached BUILD_DIR VAR: the value of VAR in BUILD_DIR/CMakeCache.txt
  sed -n -E "s/^$2(:[A-Z]+)?=(.*)$/\2/p" "$1/CMakeCache.txt" 2>/dev/null | head -n1
}

# mha_setup BUILD_DIR CONFIG [-DNAME=VALUE...]: install, configure (when needed: also when a
# given -D value differs from the cached one) and build.
mha_setup() {
  local build_dir="$1" config="$2" extra=("${@:3}") stale=0 a
  local config_abs="$MHA_ROOT/$config"
  [[ "$config" = /* ]] && config_abs="$config"
  mha_install_deps || return 1
  mha_find_nvcc
  local args=(-DCMAKE_BUILD_TYPE=Release "-DMHA_CONFIG=$config_abs")
  # Unset means every kernel: a filter cached by an earlier configure must not linger (a bench
  # once ran on the 6 kernels a previous filtered build of the same directory had selected).
  local filter="${MHA_KERNEL_FILTER:-*}"
  args+=("-DMHA_KERNEL_FILTER=$filter")
  if [[ -n "${MHA_CMAKE_ARGS:-}" ]]; then
    # shellcheck disable=SC2206  # word splitting of user-given arguments is intended
    args+=($MHA_CMAKE_ARGS)
  fi
  for a in "${extra[@]}"; do
    if [[ "$a" =~ ^-D([A-Za-z0-9_]+)(:[A-Z]+)?=(.*)$ &&
          "$(mha_cached "$build_dir" "${BASH_REMATCH[1]}")" != "${BASH_REMATCH[3]}" ]]; then
      stale=1
    fi
  done
  args+=("${extra[@]}")
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    local gen=()
    if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
    cmake -S "$MHA_ROOT" -B "$build_dir" "${gen[@]}" "${args[@]}" || return 1
  elif [[ "$stale" -eq 1 || "$(mha_cached "$build_dir" MHA_CONFIG)" != "$config_abs" ||
          -n "${MHA_CMAKE_ARGS:-}" ||
          "$(mha_cached "$build_dir" MHA_KERNEL_FILTER)" != "$filter" ]]; then
    cmake -S "$MHA_ROOT" -B "$build_dir" "${args[@]}" || return 1
  fi
  # MHA_BUILD_TARGET: one target only (the sweep needs mha-tune, not the tests).
  cmake --build "$build_dir" --parallel "${MHA_JOBS:-$(nproc)}" \
    ${MHA_BUILD_TARGET:+--target "$MHA_BUILD_TARGET"}
}
