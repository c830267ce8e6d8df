#!/usr/bin/env bash
# Builds the CI configuration (configs/tiles/ci.json) into build-ci/, warning-free (-DMHA_WERROR=ON:
# a warning in our host C++ sources fails the build), and runs every test under ctest.
# Extra arguments go to ctest, e.g. ./scripts/test.sh -L host   or   ./scripts/test.sh -R generator
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$MHA_ROOT"
mha_setup build-ci configs/tiles/ci.json -DMHA_WERROR=ON
ctest --test-dir build-ci --output-on-failure "$@"
