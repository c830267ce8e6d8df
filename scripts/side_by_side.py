#!/usr/bin/env python3
"""Side-by-side decode table from one GPU session: mha-tune's tuned default (what `mha-tune
select` chose), the best tile configuration measured, each PyTorch SDPA peer, and the read floor
(visible K/V bytes over the peak read bandwidth measured in the same run), with issue 6's targets.

Usage: scripts/side_by_side.py REPORT.json PEERS.json DEFAULTS.json [--paged PAGED.json]
Prints markdown. Standard library only.
"""
import argparse
import json
import math
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"side_by_side.py: {path}: {e}")


def shape_key(problem):
    return (problem["batch"], problem["heads"], problem["kv_heads"], problem["keys"])


def passed(report):
    return [r for r in report["rows"] if r["status"] == "passed"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("peers")
    ap.add_argument("defaults")
    ap.add_argument("--paged", help="a paged sweep of the same shapes (page sizes as problems)")
    a = ap.parse_args()
    report, peers, defaults = load(a.report), load(a.peers), load(a.defaults)
    peak = report["metadata"]["peak_read_gbps"]

    best, by_point = {}, {}
    for r in passed(report):
        k = shape_key(r["problem"])
        by_point[(k, r["kernel"], r["partitions"])] = r
        if k not in best or r["time"]["median_us"] < best[k]["time"]["median_us"]:
            best[k] = r
    peer_time = {}
    for r in passed(peers):
        peer_time.setdefault(shape_key(r["problem"]), {})[r["kernel"].replace("peer_torch_sdpa_", "")] = \
            r["time"]["median_us"]

    def default_row(k):
        b, h, kv, n = k
        for bucket in defaults["buckets"]:
            if (bucket["group"] == h // kv and bucket["work_units"] == b * kv
                    and bucket["min_keys"] <= n <= bucket["max_keys"]):
                return by_point.get((k, bucket["kernel"], bucket["partitions"]))
        return None

    print(f"GPU: {report['metadata']['gpu_name']}; peak read {peak:.0f} GB/s measured in the same run; "
          f"µs per decode step (median), bf16, d128, contiguous cache\n")
    print("| batch | heads q/kv | keys | default µs (P) | best µs (P) | FA2 µs | cuDNN µs | floor µs "
          "| best peer / default | default % peak |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios, misses = [], []
    for k in sorted(best, key=lambda k: (k[0], k[1], k[2], k[3])):
        b, h, kv, n = k
        d = default_row(k)
        peer = peer_time.get(k, {})
        if d is None or not peer:
            continue
        t = d["time"]["median_us"]
        floor = n * kv * 128 * 2 * 2 * b / (peak * 1e3)
        best_peer = min(peer.values())
        ratio = best_peer / t
        ratios.append(ratio)
        if ratio < 1 / 1.02:
            misses.append(f"b{b} {h}/{kv} n{n}: default {t:.2f} µs vs best peer {best_peer:.2f} µs "
                          f"({100 * (t / best_peer - 1):.1f}% slower)")
        print(f"| {b} | {h}/{kv} | {n} | {t:.2f} ({d['partitions']}) | {best[k]['time']['median_us']:.2f} "
              f"({best[k]['partitions']}) | {peer.get('flash', math.nan):.2f} | {peer.get('cudnn', math.nan):.2f} "
              f"| {floor:.2f} | {ratio:.2f} | {100 * d['peak_fraction']:.1f}% |")
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else math.nan
    print(f"\nGeometric mean of best peer / tuned default over {len(ratios)} problems: **{geo:.3f}** "
          f"(target ≥ 1.25).")
    print(f"Problems where the default is more than 2% slower than the best peer: {len(misses)}")
    for m in misses:
        print(f"- {m}")

    if a.paged:
        print("\nPaged cache (same tiles as the contiguous default family), best µs per problem:\n")
        print("| batch | keys | page | paged µs | contiguous µs | paged / contiguous |")
        print("|---:|---:|---:|---:|---:|---:|")
        paged_best = {}
        for r in passed(load(a.paged)):
            p = r["problem"]
            k = (p["batch"], p["keys"], p["page_size"])
            if k not in paged_best or r["time"]["median_us"] < paged_best[k]:
                paged_best[k] = r["time"]["median_us"]
        for (b, n, page), t in sorted(paged_best.items()):
            c = best.get((b, 32, 8, n))
            if c:
                ct = c["time"]["median_us"]
                print(f"| {b} | {n} | {page} | {t:.2f} | {ct:.2f} | {t / ct:.2f} |")


if __name__ == "__main__":
    main()
