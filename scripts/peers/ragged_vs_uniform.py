#!/usr/bin/env python3
"""Each ragged batch of a sweep against a uniform batch of the same size and total keys: the
suite names the uniform one `<ragged name>_uniform_equiv...` (configs/suites/ragged.json). Prints, per
pair, the best time measured for each, their ratio (ragged / uniform: how much the raggedness
costs after the split plan) and the geometric mean.

Usage: scripts/peers/ragged_vs_uniform.py REPORT.json
Exit 2 on an unreadable report, 1 when it holds no pair with both sides timed (nothing compared
is not a pass). Standard library only.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from mha_report import best_by_problem, geomean, load_report_argument, split_label  # noqa: E402

MARK = "_uniform_equiv"


def pairs(best):
    """(ragged row, uniform row) for every uniform-equivalent problem whose ragged one was timed."""
    out = []
    for name, uniform in sorted(best.items()):
        if MARK in name:
            ragged = best.get(name.split(MARK)[0])
            if ragged is not None:
                out.append((ragged, uniform))
    return out


def main(argv):
    report = load_report_argument(argv, "REPORT.json")
    found = pairs(best_by_problem(report["rows"]))
    if not found:
        print(f"ragged_vs_uniform.py: {argv[1]}: no ragged batch with a timed `{MARK}` twin",
              file=sys.stderr)
        return 1
    print("| ragged batch | µs (split) | uniform twin µs (split) | ragged / uniform |")
    print("|---|---:|---:|---:|")
    ratios = []
    for ragged, uniform in found:
        r, u = ragged["time"]["median_us"], uniform["time"]["median_us"]
        ratios.append(r / u)
        print(f"| {ragged['problem']['name']} | {r:.2f} ({split_label(ragged)}) | "
              f"{u:.2f} ({split_label(uniform)}) | {r / u:.3f} |")
    print(f"\nGeometric mean over {len(ratios)}: {geomean(ratios):.3f}; worst {max(ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
