#!/usr/bin/env bash
# Draws a report's plots (scripts/plot_report.py), first installing matplotlib when it is missing:
# python3-matplotlib through apt-get on Debian/Ubuntu, else `pip install --user matplotlib`.
# Arguments go to plot_report.py, e.g. ./scripts/plot.sh results/X.json --defaults results/Y.json
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$MHA_ROOT"
mha_install_plot_deps || true  # plot_report.py says what is missing (exit 3) if this failed
exec python3 scripts/plot_report.py "$@"
