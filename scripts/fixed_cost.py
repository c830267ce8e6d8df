#!/usr/bin/env python3
"""Where a family's step time goes: a fixed cost per step and a streaming rate. For each family of
a sweep (problems named <family>_n<keys>, timed at two or more lengths) it fits the best time per
length to t = F + bytes / R, by least squares on the relative error, and fits the measured read
floor the same way (`floor_us`: a plain streaming read of the same K/V bytes, launched like a
step), where the sweep timed one. F above the read's F is what every step pays whatever its
length (launches, the pipeline's ramp, the combine, the reduce); R below the read's R is what the
key loop leaves of the bandwidth. Short steps are about the first, long ones about the second.

Usage: scripts/fixed_cost.py REPORT.json[.gz]
Exit 2 on an unreadable report, 1 when no family has two timed lengths (nothing fitted is not a
pass). Standard library only.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mha_report import best_by_problem, load_report_argument  # noqa: E402

LENGTH_SUFFIX = re.compile(r"^(?P<family>.+)_n(?P<keys>\d+)$")


def fit(points):
    """(F, 1/R) minimising sum(((F + x/R - t) / t)^2) over (x, t) points: bytes and µs."""
    sw = swx = swxx = swt = swxt = 0.0
    for x, t in points:
        w = 1.0 / (t * t)
        sw, swx, swxx = sw + w, swx + w * x, swxx + w * x * x
        swt, swxt = swt + w * t, swxt + w * x * t
    det = sw * swxx - swx * swx
    if det <= 0:  # all points at one length
        return None
    inv_rate = (sw * swxt - swx * swt) / det
    fixed = (swt - inv_rate * swx) / sw
    return fixed, inv_rate


def worst_residual(points, model):
    fixed, inv_rate = model
    return max(abs(fixed + x * inv_rate - t) / t for x, t in points)


def families(rows):
    """family -> [(keys, K/V bytes, best µs, read floor µs or None)], lengths ascending. The K/V
    bytes are a problem's smallest row bytes: an unsplit or cluster split moves no partials."""
    kv_bytes = {}
    for r in rows:
        name = r["problem"]["name"]
        if isinstance(r.get("bytes"), (int, float)) and r["bytes"] > 0:
            kv_bytes[name] = min(kv_bytes.get(name, r["bytes"]), r["bytes"])
    out = {}
    for name, best in best_by_problem(rows).items():
        m = LENGTH_SUFFIX.match(name)
        if not m or name not in kv_bytes:
            continue
        floor = best.get("floor_us")
        floor = floor if isinstance(floor, (int, float)) and floor > 0 else None
        out.setdefault(m["family"], []).append(
            (int(m["keys"]), kv_bytes[name], best["time"]["median_us"], floor))
    return {f: sorted(p) for f, p in out.items() if len({k for k, *_ in p}) >= 2}


def gbps(inv_rate):
    return 1e-3 / inv_rate if inv_rate > 0 else float("inf")  # bytes per µs -> GB/s


def main(argv):
    report = load_report_argument(argv)
    found = families(report["rows"])
    if not found:
        print(f"fixed_cost.py: {argv[1]}: no family timed at two or more lengths "
              "(problems named <family>_n<keys>)", file=sys.stderr)
        return 1
    print("| family | keys | F µs | R GB/s | worst fit error | read F µs | read R GB/s "
          "| F − read F | R / read R |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for family, points in sorted(found.items()):
        ours = fit([(x, t) for _, x, t, _ in points])
        reads = [(x, f) for _, x, _, f in points if f is not None]
        read = fit(reads) if len(reads) == len(points) else None
        keys = f"{points[0][0]}–{points[-1][0]} ({len(points)})"
        cells = [f"{ours[0]:.2f}", f"{gbps(ours[1]):.0f}",
                 f"{100 * worst_residual([(x, t) for _, x, t, _ in points], ours):.1f}%"]
        if read:
            cells += [f"{read[0]:.2f}", f"{gbps(read[1]):.0f}", f"{ours[0] - read[0]:+.2f}",
                      f"{gbps(ours[1]) / gbps(read[1]):.3f}"]
        else:
            cells += ["—"] * 4
        print(f"| {family} | {keys} | " + " | ".join(cells) + " |")
    print("\nt = F + bytes / R fitted to the best time at each length (least squares on the "
          "relative error); read: the same fit of the plain streaming read of the same bytes.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
