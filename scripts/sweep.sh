#!/usr/bin/env bash
# Builds the tuning space (configs/default.json) into build/ and runs the sweep on this machine's
# GPU. Extra arguments go to `mha-tune sweep`, e.g. ./scripts/sweep.sh --filter '*_bn64_*'.
# Until the sweep subcommand exists, runs `mha-tune verify` with the same arguments.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$MHA_ROOT"
mha_setup build configs/default.json
if build/mha-tune sweep --help >/dev/null 2>&1; then
  exec build/mha-tune sweep --config configs/default.json "$@"
fi
echo "[mha sweep] 'mha-tune sweep' is not available in this build; running verify" >&2
exec build/mha-tune verify --config configs/default.json "$@"
