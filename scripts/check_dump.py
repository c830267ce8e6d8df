#!/usr/bin/env python3
"""Recomputes every problem of a `mha-tune verify --dump DIR` in float64 numpy from the dumped
inputs and checks it against the dumped reference and kernel outputs.

Usage: scripts/check_dump.py DIR    (exit 1 if any output is off by more than its tolerance)
"""
import json
import pathlib
import sys

import numpy as np


def visible(kind, n, window, chunk):
    keys = np.arange(n)
    pos = n - 1
    if kind == "window":
        return (keys <= pos) & (keys > pos - window)
    if kind == "chunked":
        return (keys <= pos) & (keys // chunk == pos // chunk)
    return keys <= pos


def attention(problem_dir, manifest):
    q = np.load(problem_dir / "q.npy").astype(np.float64)
    k = np.load(problem_dir / "k.npy").astype(np.float64)
    v = np.load(problem_dir / "v.npy").astype(np.float64)
    lengths = np.load(problem_dir / "lengths.npy")
    sink = np.load(problem_dir / "sink_weights.npy").astype(np.float64) if manifest["sink"] else None
    group = manifest["shape"]["group"]
    mask = manifest["mask"]
    out = np.zeros_like(q)
    for b, n in enumerate(lengths):
        seen = visible(mask["kind"], int(n), mask["window"], mask["chunk"])
        for h in range(q.shape[1]):
            kv = h // group
            s = np.where(seen, k[b, :n, kv] @ q[b, h] * manifest["scale"], -np.inf)
            m = max(s.max(), sink[h] if sink is not None else -np.inf)
            if m == -np.inf:
                continue
            w = np.exp(s - m)
            denom = w.sum() + (np.exp(sink[h] - m) if sink is not None else 0.0)
            out[b, h] = (w[:, None] * v[b, :n, kv]).sum(0) / denom
    return out


def rel_l2(a, b):
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def main():
    root = pathlib.Path(sys.argv[1])
    worst, count = 0.0, 0
    for manifest_path in sorted(root.glob("*/manifest.json")):
        manifest = json.loads(manifest_path.read_text())
        expected = attention(manifest_path.parent, manifest)
        reference = np.load(manifest_path.parent / "reference.npy")
        worst_ref = rel_l2(reference, expected)
        if worst_ref > 1e-5:
            print(f"{manifest['problem']}: dumped reference differs from numpy: {worst_ref:.2e}")
            return 1
        for name, info in manifest["outputs"].items():
            err = rel_l2(np.load(manifest_path.parent / name), expected)
            worst, count = max(worst, err), count + 1
            if err > 2e-2:
                print(f"{manifest['problem']} {info['kernel']} p{info['partitions']}: rel L2 {err:.2e}")
                return 1
    print(f"dump check: {count} output(s) recomputed in numpy float64, worst rel L2 {worst:.2e}")
    return 0 if count else 1


if __name__ == "__main__":
    sys.exit(main())
