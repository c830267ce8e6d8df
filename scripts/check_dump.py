#!/usr/bin/env python3
"""Recomputes every problem of a `mha-tune verify --dump DIR` in float64 numpy from the dumped
inputs and checks it against the dumped reference and kernel outputs.

Usage: scripts/check_dump.py DIR
Exit 0 when every output is within tolerance, 1 when one is not, 2 on bad usage or input (no
such directory, no manifest, a malformed manifest, a missing array, nothing to check), 3 when
numpy is missing (apt-get install python3-numpy, or pip install numpy).
"""
import argparse
import json
import pathlib
import sys


class InputError(Exception):
    """Unusable input: exit 2, the message names the file and the key."""


def die(msg, code=2):
    print(f"check_dump.py: {msg}", file=sys.stderr)
    sys.exit(code)


def visible(np, kind, n, window, chunk, q_len=1, token=0, tree=0):
    """Keys token `token` of q_len sees (docs/design.md: it sits at position n - q_len + token;
    under the tree mask it sees the keys before the drafts and the drafts its word `tree` names)."""
    keys = np.arange(n)
    pos = n - q_len + token
    if kind == "null":
        return keys < n
    if kind == "tree":
        draft = keys - (n - q_len)
        return (draft < 0) | (((int(tree) >> np.clip(draft, 0, 31)) & 1) == 1)
    if kind == "window":
        return (keys <= pos) & (keys > pos - window)
    if kind == "chunked":
        return (keys <= pos) & (keys // chunk == pos // chunk)
    return keys <= pos


def load(np, path):
    try:
        return np.load(path)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: cannot load the array: {e}")


def field(manifest, path, *keys):
    value = manifest
    for i, key in enumerate(keys):
        if not isinstance(value, dict) or key not in value:
            raise InputError(f"{path}: {'.'.join(keys[:i + 1])}: missing")
        value = value[key]
    return value


def attention(np, problem_dir, manifest, path):
    q = load(np, problem_dir / "q.npy").astype(np.float64)
    k = load(np, problem_dir / "k.npy").astype(np.float64)
    v = load(np, problem_dir / "v.npy").astype(np.float64)
    lengths = load(np, problem_dir / "lengths.npy")
    has_sink = field(manifest, path, "sink")
    sink = load(np, problem_dir / "sink_weights.npy").astype(np.float64) if has_sink else None
    group = field(manifest, path, "shape", "group")
    kind = field(manifest, path, "mask", "kind")
    window, chunk = field(manifest, path, "mask", "window"), field(manifest, path, "mask", "chunk")
    tree = load(np, problem_dir / "tree_mask.npy") if kind == "tree" else None
    scale = field(manifest, path, "scale")
    # Manifests written before soft caps were recorded had none to record (0: no cap).
    cap = float(manifest.get("soft_cap", 0) or 0)
    # A ragged step ("q_lens"): q holds the step's tokens, sequence after sequence,
    # [tokens][heads][depth]; otherwise [batch][q_len][heads][depth], or [batch][heads][depth]
    # in a dump without the token axis.
    q_lens = manifest.get("shape", {}).get("q_lens")
    one_token = q.ndim == 3 and q_lens is None
    if one_token:
        q = q[:, None]
    if q_lens is None:
        q_lens = [q.shape[1]] * len(lengths)
        rows = [(b, t, (b, t)) for b in range(len(lengths)) for t in range(q.shape[1])]
    else:
        starts = np.concatenate([[0], np.cumsum(q_lens)]).astype(int)
        rows = [(b, t, (starts[b] + t,)) for b in range(len(lengths)) for t in range(q_lens[b])]
    out = np.zeros_like(q)
    for (b, t, at), h in ((row, h) for row in rows for h in range(q.shape[-2])):
        n = lengths[b]
        seen = visible(np, kind, int(n), window, chunk, q_lens[b], t,
                       tree[at] if tree is not None else 0)
        kv = h // group
        raw = k[b, :n, kv] @ q[at + (h,)] * scale
        if cap > 0:  # cap * tanh(s / cap), before the mask and the (uncapped) sink
            raw = cap * np.tanh(raw / cap)
        s = np.where(seen, raw, -np.inf)
        m = max(s.max(), sink[h] if sink is not None else -np.inf)
        if m == -np.inf:
            continue
        w = np.exp(s - m)
        denom = w.sum() + (np.exp(sink[h] - m) if sink is not None else 0.0)
        out[at + (h,)] = (w[:, None] * v[b, :n, kv]).sum(0) / denom
    return out[:, 0] if one_token else out


def rel_l2(np, a, b):
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def check(np, manifests):
    """0 when every output is within tolerance, 1 at the first that is not."""
    worst, count = 0.0, 0
    for path in manifests:
        try:
            manifest = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise InputError(f"{path}: not a readable JSON manifest: {e}")
        problem = field(manifest, path, "problem")
        expected = attention(np, path.parent, manifest, path)
        reference = load(np, path.parent / "reference.npy")
        if reference.shape != expected.shape:
            raise InputError(f"{path.parent / 'reference.npy'}: shape {reference.shape}, expected "
                             f"{expected.shape}")
        worst_ref = rel_l2(np, reference, expected)
        if worst_ref > 1e-5:
            print(f"{problem}: dumped reference differs from numpy: {worst_ref:.2e}")
            return 1
        for name, info in field(manifest, path, "outputs").items():
            output = load(np, path.parent / name)
            if output.shape != expected.shape:
                raise InputError(f"{path.parent / name}: shape {output.shape}, expected {expected.shape}")
            err = rel_l2(np, output, expected)
            worst, count = max(worst, err), count + 1
            if not err <= 2e-2:  # NaN fails too
                print(f"{problem} {info.get('kernel', name)} p{info.get('partitions', '?')}: "
                      f"rel L2 {err:.2e}")
                return 1
    if count == 0:
        raise InputError("the manifests list no kernel output: nothing was checked")
    print(f"dump check: {count} output(s) recomputed in numpy float64, worst rel L2 {worst:.2e}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dump_dir", help="the directory given to `mha-tune verify --dump`")
    a = ap.parse_args(argv)  # exits 2 with the usage on a missing argument
    root = pathlib.Path(a.dump_dir)
    if not root.exists():
        die(f"{root}: no such directory")
    if not root.is_dir():
        die(f"{root}: not a directory; give the directory that `mha-tune verify --dump DIR` wrote")
    manifests = sorted(root.glob("*/manifest.json"))
    if not manifests:
        die(f"{root}: no */manifest.json: not a `mha-tune verify --dump` directory, or empty")
    try:
        import numpy as np
    except ImportError as e:
        die(f"cannot import numpy ({e}); install it with `sudo apt-get install python3-numpy` or "
            "`python3 -m pip install numpy`", code=3)
    try:
        return check(np, manifests)
    except InputError as e:
        die(str(e))


if __name__ == "__main__":
    sys.exit(main())
