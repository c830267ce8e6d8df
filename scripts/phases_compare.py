#!/usr/bin/env python3
"""Two `mha-tune phases` outputs side by side: where an A/B's time moved inside the step.

  scripts/phases_compare.py BEFORE.md AFTER.md

Rows pair on (kernel, problem, P); a pair prints each phase as "before → after" with the
difference (ramp, loop, tail and its merge / cluster wait / finish parts, decode end, step and
the timed step). A key printed twice in one file (two specs of one problem) counts once, its
first row. Rows in only one file are listed under the table. Exit 0; 1 when no row pairs
(nothing was compared); 2 on bad input.
"""

import argparse
import re
import sys

# Columns of `mha-tune phases` (src/reports/phase_timeline.cpp, phase_table_header).
KERNEL, PROBLEM, SPLIT, BLOCKS, LAST_START, RAMP, LOOP, TAIL, TAIL_PARTS, DECODE_END = range(10)
STEP_FROM_END, TIMED_FROM_END = 3, 2  # step and timed step, counted from the last column
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


class InputError(Exception):
    pass


def first_number(cell, what):
    m = NUMBER.search(cell)
    if not m:
        raise InputError(f"{what}: '{cell}' holds no number")
    return float(m.group())


def read_table(path):
    """{(kernel, problem, split): {phase: µs}} from the rows of one phases output."""
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}")
    rows = {}
    for n, line in enumerate(lines, 1):
        if not line.startswith("| decode_"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < DECODE_END + 1 + STEP_FROM_END:
            raise InputError(f"{path}:{n}: {len(cells)} columns, not a phases row")
        where = f"{path}:{n}"
        parts = [float(x) for x in NUMBER.findall(cells[TAIL_PARTS])[:3]]
        if len(parts) != 3:
            raise InputError(f"{where}: tail parts '{cells[TAIL_PARTS]}' are not merge / cluster wait / finish")
        key = (cells[KERNEL], cells[PROBLEM], cells[SPLIT])
        rows.setdefault(key, {
            "ramp": first_number(cells[RAMP], where), "loop": first_number(cells[LOOP], where),
            "tail": first_number(cells[TAIL], where), "merge": parts[0], "cluster wait": parts[1],
            "finish": parts[2], "decode end": first_number(cells[DECODE_END], where),
            "step": first_number(cells[-STEP_FROM_END], where),
            "timed step": first_number(cells[-TIMED_FROM_END], where)})
    if not rows:
        raise InputError(f"{path}: no phases row (| decode_...)")
    return rows


PHASES = ["ramp", "loop", "tail", "merge", "cluster wait", "finish", "decode end", "step", "timed step"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    args = parser.parse_args()
    try:
        before, after = read_table(args.before), read_table(args.after)
    except InputError as e:
        print(f"phases_compare.py: {e}", file=sys.stderr)
        return 2
    pairs = [k for k in before if k in after]
    print("| kernel | problem | P | " + " | ".join(PHASES) + " |")
    print("|---|---|---|" + "---:|" * len(PHASES))
    for k in pairs:
        cells = [f"{before[k][p]:.2f} → {after[k][p]:.2f} ({after[k][p] - before[k][p]:+.2f})" for p in PHASES]
        print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")
    for name, only in (("before", [k for k in before if k not in after]), ("after", [k for k in after if k not in before])):
        for k in only:
            print(f"- only {name}: {k[0]} {k[1]} P {k[2]}")
    if not pairs:
        print("phases_compare.py: no row pairs on (kernel, problem, P): nothing was compared", file=sys.stderr)
        return 1
    print(f"\n{len(pairs)} row(s) compared")
    return 0


if __name__ == "__main__":
    sys.exit(main())
