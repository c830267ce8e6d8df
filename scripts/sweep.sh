#!/usr/bin/env bash
# The main job: builds the tuning space (configs/default.json) into build/ and sweeps it on this
# machine's GPU 0, writing results/<gpu>_<date>.{json,csv}. Extra arguments go to
# `mha-tune sweep`, e.g. ./scripts/sweep.sh --filter '*_bn64_*' or ./scripts/sweep.sh --resume.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$MHA_ROOT"
mha_setup build configs/default.json
exec build/mha-tune sweep --config configs/default.json "$@"
