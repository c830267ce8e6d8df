#!/usr/bin/env python3
"""Where a kernel's time goes, from Nsight Compute's raw CSV (`ncu --import R --csv --page raw`):
one row per profiled kernel launch with its duration, DRAM read throughput, issue-slot and
tensor-pipe use, occupancy, registers, L2 throughput and the bytes read from the L2, warp
instructions, and the leading warp stall reasons (average warps stalled per issued
instruction, the ratio ncu's Warp State section ranks).

Usage: scripts/profile_summary.py PROFILE.csv [--top N]     (scripts/profile_step.sh writes one)
Exit 2 when the file is not such a CSV or holds no kernel row."""

import argparse
import csv
import re
import sys

STALL = re.compile(r"^smsp__average_warps_issue_stalled_(.+)_per_issue_active\.ratio$")
COLUMNS = [  # (metric, heading, format, factor)
    ("gpu__time_duration.sum", "µs", "{:.2f}", 1),
    ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM %", "{:.1f}", 1),
    ("smsp__issue_active.avg.pct_of_peak_sustained_active", "issue %", "{:.1f}", 1),
    ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor %", "{:.1f}", 1),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy %", "{:.1f}", 1),
    ("launch__registers_per_thread", "regs", "{:.0f}", 1),
    # The L2's side: how busy it is, and the bytes the SMs read from it (32-byte sectors), which
    # exceed the DRAM bytes when several blocks stream the same K/V (MQA's row blocks).
    ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "L2 %", "{:.1f}", 1),
    ("lts__t_sectors_srcunit_tex_op_read.sum", "L2 read MB", "{:.1f}", 32e-6),
    ("smsp__inst_executed.sum", "warp instr M", "{:.2f}", 1e-6),
]
# ncu prints durations in the unit its second row names.
TO_US = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def read_rows(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # ncu's own messages are not quoted
    table = list(csv.reader(lines))
    if len(table) < 2 or "Kernel Name" not in table[0]:
        raise ValueError(f"{path}: not Nsight Compute raw CSV (no 'Kernel Name' header)")
    header, units = table[0], table[1]
    rows = [dict(zip(header, r)) for r in table[2:] if len(r) == len(header)]
    if not rows:
        raise ValueError(f"{path}: no kernel row")
    return header, dict(zip(header, units)), rows


def summarise(path, top):
    header, units, rows = read_rows(path)
    stalls = [h for h in header if STALL.match(h)]
    out = ["| kernel | grid × block | " + " | ".join(c[1] for c in COLUMNS) + " | leading stalls (warps per issue) |",
           "|---|---|" + "---:|" * len(COLUMNS) + "---|"]
    for r in rows:
        cells = []
        for metric, _, fmt, factor in COLUMNS:
            v = number(r.get(metric, ""))
            if v is not None and metric == "gpu__time_duration.sum":
                v *= TO_US.get(units.get(metric, "nsecond"), 1e-3)
            elif v is not None:
                v *= factor
            cells.append("—" if v is None else fmt.format(v))
        ranked = sorted(((number(r[h]) or 0.0, STALL.match(h).group(1)) for h in stalls), reverse=True)
        lead = ", ".join(f"{name} {v:.2f}" for v, name in ranked[:top] if v > 0)
        name = re.sub(r"^void |\(.*$", "", r["Kernel Name"])[:60]
        shape = f"{r.get('launch__grid_size', '?')} × {r.get('launch__block_size', '?')}"
        out.append(f"| `{name}` | {shape} | " + " | ".join(cells) + f" | {lead or '—'} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=4, help="stall reasons to list (default 4)")
    a = ap.parse_args()
    try:
        print(summarise(a.csv, a.top))
    except (OSError, ValueError) as e:
        print(f"profile_summary.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
