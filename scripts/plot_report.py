#!/usr/bin/env python3
"""Plots an mha-tune sweep report (PNG, matplotlib Agg).

  plot_report.py REPORT.json [--defaults DEFAULTS.json] [--out-dir DIR] [--problem NAME]

Writes <stem>_bandwidth.png: achieved GB/s against keys (log2 axis), one line per shape, for the
best passed configuration per problem; dashed: the defaults' configuration (the JSON that
`mha-tune select --out-json` writes); dotted: the peak read bandwidth measured in the same run.
Writes <stem>_heatmap.png: median time (us) of every passed (tile, partitions) on one problem
(default: the longest batch-1 problem; with --problem NAME: <stem>_heatmap_NAME.png), the fastest
cell outlined. Titles name the GPU and the date of the run. Paged problems with different page
sizes are different lines. Exit 2 on a missing, malformed or empty input (nothing passed to plot,
a --problem without passed rows, a report and a defaults file swapped), 3 when matplotlib or
numpy is missing (scripts/plot.sh installs them: apt-get install python3-matplotlib).
"""
import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # also when loaded by path
import mha_report  # noqa: E402
from mha_report import ReportError  # noqa: E402

TILE_KEYS = ("bm", "bn", "bk", "wm", "wn", "threads", "stages", "warp_split_k")


INSTALL_HINT = ("install it with `sudo apt-get install python3-matplotlib` (Debian/Ubuntu) or "
                "`python3 -m pip install matplotlib`, or run scripts/plot.sh, which does")


def die(msg, code=2):
    print(f"plot_report.py: {msg}", file=sys.stderr)
    sys.exit(code)


def import_pyplot():
    """matplotlib.pyplot with the Agg backend; exit 3 (a missing environment dependency) when
    matplotlib or numpy cannot be imported."""
    try:
        import numpy  # noqa: F401  (the heatmap needs it; matplotlib does too)
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        die(f"cannot import {e.name or 'matplotlib'} ({e}); {INSTALL_HINT}", code=3)
    return plt


def load_report(path):
    """The report, with the fields the plots read and something to plot."""
    rep = mha_report.load_report(path, "sweep report",
                                 row_keys=mha_report.ROW_KEYS + ("achieved_gbps",))
    if not rep["rows"]:
        raise ReportError(f"{path}: rows: empty; nothing to plot")
    if not any(plottable(r) for r in rep["rows"]):
        raise ReportError(f"{path}: rows: none passed with a time; nothing to plot")
    return rep


def load_defaults(path):
    """select's defaults file, or a plain mapping: problem name -> {"kernel", "partitions"}."""
    doc = mha_report.read_json(path, "defaults file")
    if isinstance(doc, dict) and "buckets" not in doc and "rows" not in doc:
        return doc
    return mha_report.check_defaults(doc, path)


# A point the plots can place: passed, with a positive median time.
plottable = mha_report.is_timed
best_rows = mha_report.best_by_problem


def tile_name(kernel):
    """decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_..._s4_wsk -> bm16_bn64_..._s4_wsk."""
    m = re.search(r"bm\d+_.*$", kernel)
    return m.group(0) if m else kernel


def default_rows(defaults, rows):
    """problem name -> the report row of the defaults' (tile, partitions) on that problem."""
    choice = {}  # problem name -> (tile dict or kernel name, partitions)
    if "buckets" in defaults:
        for r in rows:
            b = mha_report.bucket_for(defaults, r["problem"])
            if b:
                choice[r["problem"]["name"]] = (b.get("tile"), b["partitions"])
    else:  # a plain mapping: problem -> {"kernel", "partitions"}
        for name, c in defaults.items():
            if isinstance(c, dict) and "kernel" in c and "partitions" in c:
                choice[name] = (c["kernel"], c["partitions"])
    found = {}
    for r in rows:
        c = choice.get(r["problem"]["name"])
        if r["status"] != "passed" or c is None or r["partitions"] != c[1]:
            continue
        if isinstance(c[0], dict):
            if all(r.get("traits", {}).get(k) == c[0].get(k) for k in TILE_KEYS):
                found[r["problem"]["name"]] = r
        elif r["kernel"] == c[0]:
            found[r["problem"]["name"]] = r
    return found


def shape_key(p):
    """One line per key: every field but the length. The page size is part of it: paged problems
    with different page sizes are different lines, not one line zig-zagging between them.
    The cache's dtype and the soft cap too: an e4m3 cache and its bf16 twin are two lines."""
    kv_dtype = p.get("kv_dtype") or p["dtype"]
    return (p["batch"], p["heads"], p["kv_heads"], p["depth"], p["dtype"], p["kv"], p["mask"],
            p.get("has_sink", False), p.get("page_size", 0) if p["kv"] != "contig" else 0,
            kv_dtype if kv_dtype != p["dtype"] else "", p.get("soft_cap", 0) or 0)


def shape_label(key, varying):
    b, h, kv, d, dt, kvk, mask, sink, page, cache, cap = key
    label = f"b{b} h{h}/kv{kv}"
    extra = [f"d{d}", dt, kvk, mask, "sink" if sink else "", f"page {page}" if page else "",
             f"kv {cache}" if cache else "", f"cap {cap:g}" if cap else ""]
    return label + "".join(f" {e}" for i, e in enumerate(extra) if varying[i] and e)


def varying_fields(keys):
    """Which of the fields after batch and heads (depth onwards) differ between the lines: the
    ones their labels name."""
    return [len({k[i] for k in keys}) > 1 for i in range(3, len(keys[0]))] if keys else []


def bandwidth_series(rows):
    """shape key -> [(keys, GB/s), ...] sorted by keys: one line of the bandwidth plot each."""
    series = {}
    for r in rows:
        series.setdefault(shape_key(r["problem"]), []).append((r["problem"]["keys"], r["achieved_gbps"]))
    return {k: sorted(v) for k, v in sorted(series.items())}


def run_label(meta):
    """'NVIDIA H200 (132 SMs), 2026-11-29, reduce separate' from a report's metadata."""
    gpu = str(meta.get("gpu_name") or "?")
    if isinstance(meta.get("sm_count"), int) and meta["sm_count"] > 0:
        gpu += f" ({meta['sm_count']} SMs)"
    parts = [gpu]
    ts = meta.get("timestamp")
    if isinstance(ts, str) and ts:
        parts.append(ts[:10])
    if meta.get("reduce_mode"):
        parts.append(f"reduce {meta['reduce_mode']}")
    return ", ".join(parts)


def plot_bandwidth(plt, rep, defaults, path):
    meta, best = rep["metadata"], best_rows(rep["rows"])
    dflt = default_rows(defaults, rep["rows"]) if defaults is not None else {}
    lines = bandwidth_series(best.values())
    default_lines = bandwidth_series(dflt.values())
    keys = list(lines)
    varying = varying_fields(keys)
    from matplotlib.lines import Line2D
    fig, ax = plt.subplots(figsize=(11, 5.5))
    # Legend: one entry per shape (its colour), then the line styles once, outside the axes.
    handles = []
    for i, key in enumerate(keys):
        color = f"C{i % 10}"
        handles += ax.plot(*zip(*lines[key]), marker="o", color=color, label=shape_label(key, varying))
        dpts = default_lines.get(key)
        if dpts:  # drawn over the best line: where they coincide the x sits on the o
            ax.plot(*zip(*dpts), ls="--", marker="x", markersize=9, markeredgewidth=1.5,
                    color=color)
    handles.append(Line2D([], [], color="0.3", marker="o", label="best measured"))
    if dflt:
        handles.append(Line2D([], [], color="0.3", ls="--", marker="x", markersize=9,
                              markeredgewidth=1.5, label="select default"))
    peak = meta.get("peak_read_gbps")
    if isinstance(peak, (int, float)) and peak > 0:
        handles.append(ax.axhline(peak, color="k", ls=":", label=f"measured peak read {peak:.0f} GB/s"))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("keys per sequence (KV cache length)")
    ax.set_ylabel("achieved bandwidth (GB/s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(f"mha-tune decode: best configuration per problem\n{run_label(meta)}", fontsize=11)
    if handles:
        ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0.0, title="batch, heads / kv heads", title_fontsize=8)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def heatmap_problem(rows):
    passed = [r["problem"] for r in rows if plottable(r)]
    if not passed:
        return None
    b1 = [p for p in passed if p["batch"] == 1] or passed
    return max(b1, key=lambda p: (p["keys"], p["name"]))["name"]


def plot_heatmap(plt, rep, problem, path):
    import numpy as np
    cells, labels = {}, {}
    for r in rep["rows"]:
        if plottable(r) and r["problem"]["name"] == problem:
            cells[(tile_name(r["kernel"]), r["partitions"])] = r["time"]["median_us"]
            labels[r["partitions"]] = mha_report.split_label(r)  # plans, cluster splits: codes
    tiles = sorted({t for t, _ in cells})
    parts = sorted({p for _, p in cells})
    grid = np.full((len(tiles), len(parts)), np.nan)
    for (t, p), us in cells.items():
        grid[tiles.index(t), parts.index(p)] = us
    fig, ax = plt.subplots(figsize=(1.0 * len(parts) + 5.5, 0.36 * len(tiles) + 2.0))
    from matplotlib.colors import LogNorm
    lo, hi = np.nanmin(grid), np.nanmax(grid)
    norm = LogNorm(lo, max(hi, lo * 1.01))  # log: P = 1 can be 10x the rest
    im = ax.imshow(np.ma.masked_invalid(grid), aspect="auto", cmap="viridis_r", norm=norm)
    ax.set_xticks(range(len(parts)), [labels[p] for p in parts])
    ax.set_yticks(range(len(tiles)), tiles, fontsize=8)
    ax.set_xlabel("split (partitions, plan or cluster)")
    ax.set_ylabel("tile (bm bn bk wm wn threads stages [warp split-K])", fontsize=8)
    for i in range(len(tiles)):
        for j in range(len(parts)):
            if not math.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.1f}", ha="center", va="center", fontsize=7.5,
                        color="w" if norm(grid[i, j]) > 0.55 else "k",
                        fontweight="bold" if grid[i, j] == lo else "normal")
    cb = fig.colorbar(im, ax=ax, label="median time (us)")
    from matplotlib.ticker import FormatStrFormatter
    cb.ax.yaxis.set_major_formatter(FormatStrFormatter("%.0f"))
    if hi < 10 * lo:  # within a decade the minor ticks are the only labels; beyond it they crowd
        cb.ax.yaxis.set_minor_formatter(FormatStrFormatter("%.0f"))
    else:
        from matplotlib.ticker import LogFormatter
        cb.ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    from matplotlib.patches import Rectangle
    bi, bj = np.unravel_index(np.nanargmin(grid), grid.shape)
    ax.add_patch(Rectangle((bj - 0.5, bi - 0.5), 1, 1, fill=False, edgecolor="red", lw=2))
    ax.set_title(f"{problem}: median time per step (us), fastest outlined\n"
                 f"{run_label(rep['metadata'])}", fontsize=10)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report")
    ap.add_argument("--defaults", help="JSON written by `mha-tune select --out-json`")
    ap.add_argument("--out-dir", help="where to write the PNGs (default: next to the report)")
    ap.add_argument("--problem", help="problem name for the heatmap")
    a = ap.parse_args(argv)
    try:
        rep = load_report(a.report)
        defaults = load_defaults(a.defaults) if a.defaults else None
    except ReportError as e:
        die(str(e))
    if defaults is not None and not default_rows(defaults, rep["rows"]):
        print(f"plot_report.py: warning: {a.defaults}: no bucket matches a passed row of "
              f"{a.report}; defaults not drawn", file=sys.stderr)
    problem = a.problem or heatmap_problem(rep["rows"])
    if a.problem and not any(r["problem"]["name"] == a.problem for r in rep["rows"]):
        die(f"{a.report}: no row has problem '{a.problem}'")
    if a.problem and not any(plottable(r) and r["problem"]["name"] == a.problem for r in rep["rows"]):
        die(f"{a.report}: problem '{a.problem}' has no passed row; no heatmap to draw")
    plt = import_pyplot()
    out_dir = a.out_dir or os.path.dirname(os.path.abspath(a.report))
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        die(f"{out_dir}: cannot create the output directory: {e.strerror}")
    stem = os.path.join(out_dir, os.path.splitext(os.path.basename(a.report))[0])
    plot_bandwidth(plt, rep, defaults, stem + "_bandwidth.png")
    print(f"wrote {stem}_bandwidth.png")
    if problem and any(plottable(r) and r["problem"]["name"] == problem for r in rep["rows"]):
        # --problem gets its own file, so it does not replace the default heatmap.
        heat = stem + (f"_heatmap_{re.sub(r'[^A-Za-z0-9_.-]', '_', a.problem)}.png" if a.problem
                       else "_heatmap.png")
        plot_heatmap(plt, rep, problem, heat)
        print(f"wrote {heat} ({problem})")
    else:
        print(f"plot_report.py: no passed row for the heatmap{f' of {problem}' if problem else ''}; "
              "heatmap not written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
