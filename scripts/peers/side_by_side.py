#!/usr/bin/env python3
"""The side-by-side decode table of one GPU run: per problem, mha-tune's tuned default (what
`mha-tune select` chose for the problem's bucket), the best configuration the sweep measured,
every peer of scripts/peers/peers.py, the floor (the step's bytes over the peak read bandwidth
measured in the same run), the measured read floor where the sweep timed one (`floor_us`: a plain
read of the same visible K/V bytes, launched like a step) and best peer / default (> 1: ours is
faster), all in step time (graph replay). Then the kernel-time convention (the sum of a step's
kernel intervals, leaving out launch gaps): ours (the sweep's default row where it carries
kernel_time_us, else mha-tune's PyTorch op timed as a peer, `--peers ours`), the best peer's
and their ratio. mha-tune's op (peer_mha_tune) is a column, never the best peer. Rows join on the
problem name, so the sweep and the peers must have run the same suite.

Usage: scripts/peers/side_by_side.py OURS.json PEERS.json DEFAULTS.json
Prints markdown; exits 2 on unreadable or mismatched inputs, 1 when no problem has both a
default and a timed peer (nothing compared is not a pass). Standard library only.
"""
import argparse
import os
import sys

# mha_report is in scripts/, one folder up (also when loaded by path)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mha_report  # noqa: E402
from mha_report import (ReportError, geomean, is_ragged, split_label,  # noqa: E402
                        writes_no_partials)

SHORT = {"peer_flashinfer_fa2": "FI fa2", "peer_flashinfer_tc": "FI tc",
         "peer_flashinfer_xqa": "FI xqa", "peer_flashinfer_cudnn": "FI cuDNN",
         "peer_flashinfer_tc_fa3": "FI tc fa3", "peer_flashinfer_trtllm": "FI trtllm",
         "peer_flashinfer_prefill_fa2": "FI prefill fa2",
         "peer_flashinfer_prefill_fa3": "FI prefill fa3",
         "peer_torch_sdpa_flash": "SDPA FA2", "peer_torch_sdpa_cudnn": "SDPA cuDNN",
         "peer_torch_flex": "Flex", "peer_fa3": "FA3", "peer_fa3_best_split": "FA3 best split",
         "peer_mha_tune": "ours (op)"}
STATUS = {"not_supported": "n/s", "failed": "fail", "incorrect": "wrong", "skipped": "skip"}
# mha-tune's own PyTorch op, timed by the peers' harness: a column, never the best peer.
OURS_OP = "peer_mha_tune"


def short(kernel):
    """The column name; a FlashInfer peer of a second version (peer_flashinfer_xqa_v072) is its
    base name with the version tag after it (FI xqa v072)."""
    if kernel in SHORT:
        return SHORT[kernel]
    base = max((k for k in SHORT if kernel.startswith(k + "_")), key=len, default=None)
    return f"{SHORT[base]} {kernel[len(base) + 1:]}" if base else kernel


def kernel_us(row):
    """The row's kernel time (the sum of its kernel intervals per step), or None if not measured."""
    v = row.get("kernel_time_us", 0) if row and row.get("status") == "passed" else 0
    return v if isinstance(v, (int, float)) and v > 0 else None


def default_choice(defaults, problem):
    """The (kernel, partitions) select chose for the problem's exact bucket, or None."""
    b = mha_report.bucket_for(defaults, problem)
    return (b["kernel"], b["partitions"]) if b else None


def category(problem):
    if problem.get("q_len", 1) > 1 or problem.get("ragged_q_lens"):  # a speculative verify step
        tokens = "ragged" if problem.get("ragged_q_lens") else problem["q_len"]
        return f"{problem['mask']} q{tokens}"
    if problem["has_sink"] or problem["mask"] != "null":
        return "sink/window"
    kind = "ragged" if is_ragged(problem) else "uniform"
    return f"{kind}, {problem['kv'] + str(problem['page_size']) if problem['kv'] != 'contig' else 'contig'}"


def build_table(ours, peers, defaults):
    if any(r["kernel"].startswith("peer_") for r in ours["rows"]):
        raise ReportError("the first report holds peer rows: give the sweep's report first")
    if not any(r["kernel"].startswith("peer_") for r in peers["rows"]):
        raise ReportError("the second report has no peer rows: give "
                          "scripts/peers/peers.py's report")
    peak = ours["metadata"]["peak_read_gbps"]
    best = mha_report.best_by_problem(ours["rows"])
    order, problems, points, floor_bytes, read_floor = [], {}, {}, {}, {}
    for r in ours["rows"]:
        name = r["problem"]["name"]
        if name not in problems:
            order.append(name)
            problems[name] = r["problem"]
        if writes_no_partials(r):  # a P-1 or cluster split: the step's own bytes, no partials
            floor_bytes[name] = r["bytes"]
        if r.get("floor_us", 0) > 0:
            read_floor[name] = r["floor_us"]
        if r["status"] != "passed":
            continue
        points[(name, r["kernel"], r["partitions"])] = r
    peer_cells, peer_names = {}, []
    for r in peers["rows"]:
        if r["kernel"] not in peer_names:
            peer_names.append(r["kernel"])
        peer_cells.setdefault(r["problem"]["name"], {})[r["kernel"]] = r
    lines = [
        f"GPU: {ours['metadata']['gpu_name']}; peak read {peak:.0f} GB/s measured in the same run; "
        f"µs per decode step (median); sweep {ours['metadata'].get('git_commit', '?')}, "
        f"peers {peers['metadata'].get('git_commit', '?')} "
        f"({', '.join(f'{k} {v}' for k, v in peers['metadata'].get('peer_packages', {}).items())})",
        "",
        "| problem | cache | default µs (P) | best µs (P) | "
        + " | ".join(short(n) for n in peer_names)
        + " | floor µs | read µs | best peer | best peer / default | ours kernel µs "
        "| best peer kernel µs | kernel: best peer / ours |",
        "|---|---|---:|---:|" + "---:|" * len(peer_names) + "---:|---:|---|---:|---:|---:|---:|"]
    ratios, by_category, by_batch, misses, kernel_ratios = [], {}, {}, [], []
    for name in order:
        prob = problems[name]
        choice = default_choice(defaults, prob)
        d = points.get((name, *choice)) if choice else None
        cells = peer_cells.get(name, {})
        timed = {k: r["time"]["median_us"] for k, r in cells.items()
                 if r["status"] == "passed" and k != OURS_OP}
        kernel_timed = {k: kernel_us(r) for k, r in cells.items() if kernel_us(r) and k != OURS_OP}
        ours_kernel = kernel_us(d) or kernel_us(cells.get(OURS_OP))
        floor_text = f"{floor_bytes[name] / (peak * 1e3):.2f}" if peak and name in floor_bytes else "—"
        peer_text = []
        for n in peer_names:
            r = cells.get(n)
            peer_text.append("" if r is None else f"{r['time']['median_us']:.2f}"
                             if r["status"] == "passed" else STATUS.get(r["status"], r["status"]))
        ratio_text, best_peer_text = "", ""
        if timed:
            bp = min(timed, key=timed.get)
            best_peer_text = short(bp)
            if d:
                ratio = timed[bp] / d["time"]["median_us"]
                ratios.append(ratio)
                by_category.setdefault(category(prob), []).append(ratio)
                by_batch.setdefault(prob["batch"], []).append(ratio)
                ratio_text = f"{ratio:.2f}"
                if ratio < 1 / 1.02:
                    misses.append(f"{name}: default {d['time']['median_us']:.2f} µs, "
                                  f"{best_peer_text} {timed[bp]:.2f} µs "
                                  f"({100 * (d['time']['median_us'] / timed[bp] - 1):.1f}% slower)")
        kernel_text = ["—", "—", ""]
        if ours_kernel:
            kernel_text[0] = f"{ours_kernel:.2f}"
        if kernel_timed:
            kp = min(kernel_timed, key=kernel_timed.get)
            kernel_text[1] = f"{kernel_timed[kp]:.2f} ({short(kp)})"
            if ours_kernel:
                kernel_ratios.append(kernel_timed[kp] / ours_kernel)
                kernel_text[2] = f"{kernel_ratios[-1]:.2f}"
        dtext = f"{d['time']['median_us']:.2f} ({split_label(d)})" if d else "—"
        read_text = f"{read_floor[name]:.2f}" if name in read_floor else "—"
        btext = (f"{best[name]['time']['median_us']:.2f} ({split_label(best[name])})"
                 if name in best else "—")
        lines.append(f"| {name} | {category(prob)} | {dtext} | {btext} | " + " | ".join(peer_text)
                     + f" | {floor_text} | {read_text} | {best_peer_text} | {ratio_text} | "
                     + " | ".join(kernel_text) + " |")
    if not ratios:
        raise LookupError("no problem has both a tuned default and a timed peer: were the sweep and "
                          "the peers run on the same suite?")
    lines += ["", f"Geometric mean of best peer / default over {len(ratios)} problems: "
              f"**{geomean(ratios):.3f}** (> 1: mha-tune faster)."]
    for cat, v in sorted(by_category.items()):
        lines.append(f"- {cat}: {geomean(v):.3f} over {len(v)} (min {min(v):.2f}, max {max(v):.2f})")
    # By batch size too: serving targets are stated per batch (e.g. batch 1's geomean).
    if len(by_batch) > 1:
        for batch, v in sorted(by_batch.items()):
            lines.append(f"- batch {batch}: {geomean(v):.3f} over {len(v)} "
                         f"(min {min(v):.2f}, max {max(v):.2f})")
    if kernel_ratios:
        lines.append(f"- kernel time (sum of kernel intervals per step), best peer / ours: "
                     f"{geomean(kernel_ratios):.3f} over {len(kernel_ratios)} "
                     f"(min {min(kernel_ratios):.2f}, max {max(kernel_ratios):.2f})")
    else:
        lines.append("- kernel time: not measured on both sides (no kernel_time_us in ours and "
                     "no timed peer_mha_tune row)")
    lines.append(f"\nProblems where the default is more than 2% slower than the best peer: {len(misses)}")
    lines += [f"- {m}" for m in misses]
    lines.append("\nfloor: the step's bytes without partials (a P-1 or cluster split's) over the peak read "
                 "bandwidth; read: a plain streaming read of the same visible K/V bytes, launched like a "
                 "step (—: the sweep timed no such split, or no read).")
    lines.append("n/s: the peer cannot compute the problem (its row gives the reason); wrong: it "
                 "failed verification; fail: it raised or crashed (reason in the report).")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ours", help="mha-tune sweep report (JSON)")
    ap.add_argument("peers", help="scripts/peers/peers.py report (JSON)")
    ap.add_argument("defaults", help="mha-tune select --out-json file")
    a = ap.parse_args(argv)
    try:
        table = build_table(mha_report.load_report(a.ours, "sweep report"),
                            mha_report.load_report(a.peers, "peers report"),
                            mha_report.load_defaults(a.defaults))
    except ReportError as e:
        print(f"side_by_side.py: {e}", file=sys.stderr)
        return 2
    except (KeyError, TypeError) as e:  # before LookupError, of which KeyError is one
        print(f"side_by_side.py: a report lacks a field of mha-tune's schema: {e}", file=sys.stderr)
        return 2
    except LookupError as e:
        print(f"side_by_side.py: {e}", file=sys.stderr)
        return 1
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
