#!/usr/bin/env python3
"""Paged against contiguous caches in one report, as the paged target reads (paged / contiguous
<= 1.05 on one tile, docs/performance.md): for every paged problem with a contiguous twin (the
same problem but for the layout), the paged problem's best point against the contiguous twin
timed on the same tile (the same kernel but for its layout, best split of each), and, beside it,
against the twin's best tile. Layouts are told apart by page order and size (paged16, paged128,
paged_hnd16, ...).

Usage: scripts/paged_vs_contig.py REPORT.json[.gz] [--limit 1.05]
Prints a table (slowest first), then per layout the worst same-tile ratio and how many exceed
the limit. Exit 2 on an unreadable report or bad arguments, 1 when no paged problem has a
contiguous twin timed on its tile (nothing compared is not a pass); 0 otherwise, whatever the
ratios (a report, not a gate). Standard library only.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mha_report import geomean, is_timed, load_report_argument, split_label  # noqa: E402

LAYOUT_FIELDS = ("kv", "page_size", "name")


def layout(problem):
    """"contig", or the page order and size: "paged16", "paged_hnd128"."""
    return "contig" if problem["kv"] == "contig" else f"{problem['kv']}{problem['page_size']}"


def twin_key(problem):
    """The problem less its layout: what a paged problem and its contiguous twin share."""
    return tuple(sorted((k, str(v)) for k, v in problem.items() if k not in LAYOUT_FIELDS))


# Traits that follow from the layout rather than choose the tile: a paged kernel may stage its
# page-table entries in shared memory, so its smem_bytes differs from its contiguous twin's.
NOT_TILE_TRAITS = ("kv", "smem_bytes")


def tile_key(row):
    """The kernel less its layout: its traits but kv and what the layout derives."""
    return tuple(sorted((k, str(v)) for k, v in row["traits"].items() if k not in NOT_TILE_TRAITS))


def best_points(rows):
    """(twin key, layout, tile) -> the timed row with the lowest median over the splits."""
    best = {}
    for r in rows:
        if not is_timed(r) or "traits" not in r:
            continue
        key = (twin_key(r["problem"]), layout(r["problem"]), tile_key(r))
        if key not in best or r["time"]["median_us"] < best[key]["time"]["median_us"]:
            best[key] = r
    return best


def comparisons(rows):
    """One dict per paged problem whose best tile was also timed contiguous."""
    best = best_points(rows)
    paged_best, contig_best = {}, {}
    for (twin, lay, _), r in best.items():
        table = contig_best if lay == "contig" else paged_best
        key = twin if lay == "contig" else (twin, lay)
        if key not in table or r["time"]["median_us"] < table[key]["time"]["median_us"]:
            table[key] = r
    out = []
    for (twin, lay), paged in paged_best.items():
        same = best.get((twin, "contig", tile_key(paged)))
        if same is None:
            continue
        t = paged["time"]["median_us"]
        out.append({"paged": paged, "layout": lay, "same_tile": same, "contig_best": contig_best[twin],
                    "ratio": t / same["time"]["median_us"],
                    "ratio_best": t / contig_best[twin]["time"]["median_us"]})
    return sorted(out, key=lambda c: -c["ratio"])


def parse_limit(argv):
    if len(argv) == 4 and argv[2] == "--limit":
        try:
            return argv[:2], float(argv[3])
        except ValueError:
            pass
    elif len(argv) <= 2:
        return argv, 1.05
    print("usage: paged_vs_contig.py REPORT.json[.gz] [--limit 1.05]", file=sys.stderr)
    sys.exit(2)


def main(argv):
    argv, limit = parse_limit(argv)
    report = load_report_argument(argv, "REPORT.json[.gz]")
    found = comparisons(report["rows"])
    if not found:
        print(f"paged_vs_contig.py: {argv[1]}: no paged problem whose best tile was also timed on a "
              "contiguous twin", file=sys.stderr)
        return 1
    print("| paged problem | paged µs (kernel, split) | same tile contiguous µs (split) | paged / same tile "
          "| contiguous best µs (split) | paged / contiguous best |")
    print("|---|---|---:|---:|---:|---:|")
    for c in found:
        p, s, b = c["paged"], c["same_tile"], c["contig_best"]
        mark = " **over**" if c["ratio"] > limit else ""
        print(f"| {p['problem']['name']} | {p['time']['median_us']:.2f} ({p['kernel']}, {split_label(p)}) | "
              f"{s['time']['median_us']:.2f} ({split_label(s)}) | {c['ratio']:.3f}{mark} | "
              f"{b['time']['median_us']:.2f} ({split_label(b)}) | {c['ratio_best']:.3f} |")
    print()
    for lay in sorted({c["layout"] for c in found}):
        ratios = [c["ratio"] for c in found if c["layout"] == lay]
        over = sum(r > limit for r in ratios)
        print(f"- {lay}: {len(ratios)} problem(s), same tile geomean {geomean(ratios):.3f}, worst "
              f"{max(ratios):.3f}, {over} above {limit:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
