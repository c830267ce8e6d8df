#!/usr/bin/env bash
# The main job: builds a tuning space (default configs/suites/default.json) and sweeps it on this
# machine's GPU 0, writing results/<gpu>_<date>.{json,csv}. The build, not --config, decides
# which kernels exist, so each config gets its own build directory: build/ for
# configs/suites/default.json, build-<config stem>/ for any other (configs/suites/paged.json -> build-paged/).
# Choose the config with MHA_CONFIG=configs/suites/paged.json or --config configs/suites/paged.json; other
# arguments go to `mha-tune sweep`, e.g. ./scripts/sweep.sh --filter '*_bn64_*' or --resume.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$MHA_ROOT"
mha_config_args "$@"
# The build's log goes to stderr: stdout is the sweep's (`--dry-run --json` prints JSON there).
MHA_BUILD_TARGET=mha-tune mha_setup "$build_dir" "$config" >&2
exec "$build_dir/mha-tune" sweep --config "$config" "${rest_args[@]}"
