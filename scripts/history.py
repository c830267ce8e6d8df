#!/usr/bin/env python3
"""Regression tracking over a series of sweep reports of one config (the nightly baselines a team
keeps): per point, its medians in the reports' time order, and the one change point that splits the
series most, kept when the medians after it all lie beyond those before it and the move exceeds
--threshold (a step, not noise: no time of one side falls among the other's).

usage: scripts/history.py REPORT.json[.gz] ... [--threshold 0.05] [--min-run 2] [--fail-on-slowdown]
Prints a markdown table of the points that moved (worst first) and a summary line. Exit 0; 1 when
no point was measured in at least 2 x --min-run reports (nothing to track), or with
--fail-on-slowdown when a point got slower; 2 on unusable input.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mha_report import ReportError, is_timed, load_report, split_label  # noqa: E402


def median(values):
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def change_point(series, min_run, threshold):
    """(index of the first value after the change, ratio after / before) of the split that moves
    the median most, when every value after lies beyond every value before and the move exceeds
    the threshold; None otherwise."""
    best = None
    for k in range(min_run, len(series) - min_run + 1):
        before, after = series[:k], series[k:]
        ratio = median(after) / median(before)
        separated = min(after) > max(before) if ratio > 1 else max(after) < min(before)
        if not separated or abs(math.log(ratio)) <= math.log1p(threshold):
            continue
        if best is None or abs(math.log(ratio)) > abs(math.log(best[1])):
            best = (k, ratio)
    return best


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--threshold", type=float, default=0.05)
    ap.add_argument("--min-run", type=int, default=2)
    ap.add_argument("--fail-on-slowdown", action="store_true")
    a = ap.parse_args(argv)
    if not (0 < a.threshold < 10) or a.min_run < 1:
        print("history.py: --threshold must be in (0, 10) and --min-run at least 1", file=sys.stderr)
        return 2
    try:
        reports = [(load_report(p), p) for p in a.reports]
    except ReportError as e:
        print(f"history.py: {e}", file=sys.stderr)
        return 2
    reports.sort(key=lambda rp: rp[0]["metadata"].get("timestamp", ""))
    series = {}  # point -> [(report index, median)]
    for i, (report, _) in enumerate(reports):
        for row in report["rows"]:
            if is_timed(row):
                key = f"{row['kernel']}|{row['problem']['name']}|{split_label(row)}"
                series.setdefault(key, []).append((i, row["time"]["median_us"]))
    tracked = {k: v for k, v in series.items() if len(v) >= 2 * a.min_run}
    if not tracked:
        print(f"history.py: no point was measured in {2 * a.min_run} or more of the "
              f"{len(reports)} report(s): nothing to track", file=sys.stderr)
        return 1
    moved = []
    for key, points in tracked.items():
        found = change_point([t for _, t in points], a.min_run, a.threshold)
        if found:
            k, ratio = found
            moved.append((key, reports[points[k][0]][1], median([t for _, t in points[:k]]),
                          median([t for _, t in points[k:]]), ratio))
    moved.sort(key=lambda m: -abs(math.log(m[4])))
    slower = sum(1 for m in moved if m[4] > 1)
    print(f"{len(tracked)} point(s) tracked over {len(reports)} report(s); {len(moved)} moved by "
          f"more than {100 * a.threshold:.0f}% at a change point ({slower} slower, "
          f"{len(moved) - slower} faster)\n")
    if moved:
        print("| point | from report | median before us | median after us | change |")
        print("|---|---|---:|---:|---:|")
        for key, where, before, after, ratio in moved:
            print(f"| `{key}` | `{where}` | {before:.2f} | {after:.2f} | {100 * (ratio - 1):+.1f}% |")
    return 1 if a.fail_on_slowdown and slower else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
