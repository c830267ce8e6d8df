#!/usr/bin/env python3
"""Times peer decode kernels (PyTorch SDPA: FlashAttention-2 and cuDNN backends) the way mha-tune
times its own, and writes PREFIX.json in mha-tune's report schema (schema_version 1).

  peers.py --out PREFIX [--problems "b=1,h=32,kv=8,n=512:2048;b=8,h=32,kv=8,n=512"]
           [--backends flash,cudnn] [--dry-run]

Problem keys: b|batch, h|heads, kv|kv_heads, n|keys (':'-separated list), d|depth (128),
dtype (bf16|fp16). Layout: q [b, h, 1, d], K/V [b, kv, n, d], scale 1/sqrt(d), no mask.

Timing as mha-tune's step_timer: inputs rotated over enough copies that they exceed 4x the L2;
one CUDA graph replay = one step over each copy (at least 8 steps); 20 ms warm-up; events around
each replay; samples until the median's relative standard error < 0.5% (stats.cpp's rule) or
0.5 s; statistics per step. Each peer is verified first against an fp32 reference (rel L2 < 2e-2).
GQA: enable_gqa=True; a backend that refuses it gets K/V heads expanded with repeat_interleave
before timing (said in the row's reason; bytes still count the unexpanded K/V).
Peak read bandwidth: a Triton streaming-read kernel (16-byte loads, evict-first) over 4 GB,
median of 20 launches after 2 warm-ups as in bandwidth_probe.cu; fallback: x.view(int64).sum().
torch is imported only when timing, so --help, --dry-run and the tests need no torch.
"""
import argparse
import datetime
import json
import math
import os
import socket
import subprocess
import sys
import time

DEFAULT_PROBLEMS = ("b=1,h=32,kv=8,n=512:2048:8192:32768:131072;"
                    "b=8,h=32,kv=8,n=512:2048:8192:32768:131072")
BACKENDS = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION"}
KEY_ALIASES = {"b": "batch", "batch": "batch", "h": "heads", "heads": "heads", "kv": "kv_heads",
               "kv_heads": "kv_heads", "n": "keys", "keys": "keys", "d": "depth", "depth": "depth",
               "dtype": "dtype"}
H200_L2_BYTES = 62914560
TOLERANCE = 2e-2


class UsageError(Exception):
    pass


# ---------------------------------------------------------------- pure parts (unit-tested)

def parse_problems(text):
    """'b=1,h=32,kv=8,n=512:2048;b=8,...' -> list of problem dicts, one per length."""
    out = []
    for i, spec in enumerate(s.strip() for s in text.split(";")):
        if not spec:
            continue
        where = f"--problems item {i + 1} ('{spec}')"
        f = {"batch": 1, "heads": 32, "kv_heads": 8, "depth": 128, "dtype": "bf16", "keys": None}
        for part in spec.split(","):
            key, eq, value = part.strip().partition("=")
            if not eq or key.strip() not in KEY_ALIASES:
                raise UsageError(f"{where}: '{part}' is not key=value with a key among "
                                 f"{', '.join(sorted(KEY_ALIASES))}")
            key, value = KEY_ALIASES[key.strip()], value.strip()
            if key == "dtype":
                if value not in ("bf16", "fp16"):
                    raise UsageError(f"{where}: dtype '{value}' is not bf16 or fp16")
                f[key] = value
                continue
            try:
                nums = [int(v) for v in value.split(":")]
            except ValueError:
                raise UsageError(f"{where}: {key} '{value}' is not an integer (list)") from None
            if any(v < 1 for v in nums) or (key != "keys" and len(nums) != 1):
                raise UsageError(f"{where}: {key} '{value}' must be one positive integer"
                                 + (" or a ':' list" if key == "keys" else ""))
            f[key] = nums if key == "keys" else nums[0]
        if f["keys"] is None:
            raise UsageError(f"{where}: n (keys) is required")
        if f["heads"] % f["kv_heads"]:
            raise UsageError(f"{where}: heads {f['heads']} is not a multiple of kv_heads {f['kv_heads']}")
        if f["depth"] not in (64, 128, 256):
            raise UsageError(f"{where}: depth {f['depth']} is not one of 64, 128, 256")
        for n in f["keys"]:
            p = dict(f, keys=n)
            p["name"] = problem_name(p)
            out.append(p)
    if not out:
        raise UsageError("--problems: no problem given")
    return out


def problem_name(p):
    """As src/problem.cpp problem_name for an unnamed contiguous, unmasked, sink-free problem."""
    return (f"b{p['batch']}_h{p['heads']}_kv{p['kv_heads']}_d{p['depth']}_n{p['keys']}_"
            f"{p['dtype']}_contig_null")


def step_bytes(p):
    """As problem.cpp step_bytes with partitions 1: visible K and V, q in, output out."""
    kv = 2.0 * p["batch"] * p["keys"] * p["kv_heads"] * p["depth"] * 2
    return kv + p["batch"] * p["heads"] * p["depth"] * (2 + 2)


def copy_bytes(p, group_expand=1):
    """Bytes of one input copy (q, K, V), as problem_data.cu copy_bytes."""
    return (2.0 * p["batch"] * p["heads"] * p["depth"]
            + 2.0 * 2 * p["batch"] * p["keys"] * p["kv_heads"] * group_expand * p["depth"])


def rotation_copies(bytes_per_copy, l2_bytes, max_total_bytes=16e9):
    """As step_timer.cu: four L2s of other data between two uses of a copy, clamped to [1, 512]."""
    copies = math.ceil(4.0 * l2_bytes / max(1.0, bytes_per_copy))
    copies = min(copies, int(max_total_bytes / max(1.0, bytes_per_copy)))
    return max(1, min(copies, 512))


def steps_per_replay(copies):
    return max(copies, 8)


def median(v):
    s = sorted(v)
    n = len(s)
    if n == 0:
        return 0.0
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def quantile(v, q):
    s = sorted(v)
    if not s:
        return 0.0
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (pos - lo) * (s[hi] - s[lo])


def relative_median_error(v):
    """As stats.cpp: 1.2533 * robust sigma * (1 + 1.17/sqrt(n)) / sqrt(n) / median."""
    n = len(v)
    m = median(v)
    if n < 2 or not m > 0:
        return 0.0
    mad = median([abs(x - m) for x in v])
    sigma = max(1.4826 * mad, (quantile(v, 0.75) - quantile(v, 0.25)) / 1.349)
    sigma *= 1.0 + 1.17 / math.sqrt(n)
    return 1.2533 * sigma / math.sqrt(n) / m


def should_stop(samples, elapsed_s, min_samples=10, max_samples=2000, target=0.005, budget_s=0.5):
    n = len(samples)
    return ((n >= min_samples and relative_median_error(samples) < target)
            or n >= max_samples or elapsed_s >= budget_s)


def summarize_us(v):
    n = len(v)
    mean = sum(v) / n if n else 0.0
    stdev = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
    return {"median_us": median(v), "min_us": min(v) if v else 0.0, "mean_us": mean,
            "stdev_us": stdev, "samples": n}


def number(v):
    """As report_json.cpp: NaN and infinities as strings."""
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def make_row(provider, p, status, reason="", time_us=None, peak_gbps=0.0, rel_l2=0.0, max_abs=0.0,
             device=0):
    t = time_us or {"median_us": 0.0, "min_us": 0.0, "mean_us": 0.0, "stdev_us": 0.0, "samples": 0}
    b = step_bytes(p)
    gbps = b / (t["median_us"] * 1e-6) / 1e9 if status == "passed" and t["median_us"] > 0 else 0.0
    traits = {"dtype": p["dtype"], "out_dtype": p["dtype"], "depth": p["depth"],
              "group": p["heads"] // p["kv_heads"], "kv": "contig", "mask": "null",
              "has_sink": False, "bm": 0, "bn": 0, "bk": 0, "wm": 0, "wn": 0, "threads": 0,
              "stages": 0, "warp_split_k": False, "smem_bytes": 0}
    problem = {"name": p["name"], "batch": p["batch"], "heads": p["heads"],
               "kv_heads": p["kv_heads"], "depth": p["depth"], "dtype": p["dtype"],
               "out_dtype": p["dtype"], "kv": "contig", "page_size": 0, "mask": "null",
               "window": 0, "chunk": 0, "has_sink": False, "keys": p["keys"], "lengths": ""}
    return {"kernel": f"peer_torch_sdpa_{provider}", "traits": traits, "problem": problem,
            "partitions": 1, "status": status, "reason": reason,
            "time": {k: number(float(v)) if k != "samples" else int(v) for k, v in t.items()},
            "bytes": b, "achieved_gbps": number(gbps),
            "peak_fraction": number(gbps / peak_gbps if peak_gbps > 0 else 0.0),
            "rel_l2_error": number(float(rel_l2)), "max_abs_error": number(float(max_abs)),
            "sm_clock_mhz": 0.0, "throttled": False, "device": device}


def make_metadata(gpu_name="", sm_count=0, l2_bytes=0, peak_gbps=0.0, command_line="", seed=1,
                  driver_version="", cuda_version="", git_commit="unknown", timestamp=None,
                  devices=""):
    ts = timestamp or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"schema_version": 1, "tool_version": "peers.py", "git_commit": git_commit,
            "gpu_name": gpu_name, "sm_count": int(sm_count), "sm_clock_max_mhz": 0.0,
            "mem_clock_max_mhz": 0.0, "l2_bytes": int(l2_bytes), "driver_version": driver_version,
            "cuda_version": cuda_version, "timestamp": ts, "config_file": "", "config_hash": "",
            "command_line": command_line, "peak_read_gbps": number(float(peak_gbps)),
            "seed": int(seed), "timing_mode": "graph", "cold_cache": True,
            "shard_index": -1, "shard_count": 0, "devices": devices}


def make_report(meta, rows):
    return {"schema_version": 1, "metadata": meta, "rows": rows}


def write_report(path, report):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def fmt(v, spec):
    return v if isinstance(v, str) else format(v, spec)


def format_table(rows):
    lines = [f"{'problem':<40} {'kernel':<24} {'status':<13} {'median us':>10} {'GB/s':>7} {'peak':>6}"]
    for r in rows:
        lines.append(f"{r['problem']['name']:<40} {r['kernel']:<24} {r['status']:<13} "
                     f"{fmt(r['time']['median_us'], '.2f'):>10} {fmt(r['achieved_gbps'], '.0f'):>7} "
                     f"{fmt(r['peak_fraction'], '.2f'):>6}")
    return "\n".join(lines)


def plan_text(problems, backends, l2_bytes):
    lines = [f"plan: backends {', '.join(backends)}; L2 {l2_bytes / 1e6:.1f} MB (rotation target "
             f"{4 * l2_bytes / 1e6:.0f} MB); peak read: 4 GB streaming read"]
    for p in problems:
        c = rotation_copies(copy_bytes(p), l2_bytes)
        lines.append(f"  {p['name']:<40} {step_bytes(p) / 1e6:9.2f} MB/step  copy {copy_bytes(p) / 1e6:9.2f} MB"
                     f"  copies {c:3d}  steps/replay {steps_per_replay(c)}")
    return "\n".join(lines)


# ---------------------------------------------------------------- GPU parts (torch, lazily)

def measure_peak_read_gbps(torch, nbytes=4e9, repeats=20):
    """(GB/s, method): median of `repeats` timed reads after 2 warm-ups."""
    def timed(fn, count_bytes):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        gbps = []
        for r in range(repeats + 2):
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            if r >= 2:
                gbps.append(count_bytes / (start.elapsed_time(stop) * 1e-3) / 1e9)
        return median(gbps)

    block = 4096  # int32 per program per iteration: 16 per thread at 8 warps (4 x 16-byte loads)
    n = int(nbytes) // 4 // block * block
    x = torch.full((n,), 0x5A5A5A5A, dtype=torch.int32, device="cuda")
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def read_kernel(src, n_tiles, sink, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            acc = tl.zeros([BLOCK], dtype=tl.int32)
            for t in range(pid, n_tiles, tl.num_programs(0)):
                offs = t.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
                acc ^= tl.load(src + offs, eviction_policy="evict_first")
            tl.store(sink + pid, tl.sum(acc, axis=0))

        grid = torch.cuda.get_device_properties(0).multi_processor_count * 8
        sink = torch.empty(grid, dtype=torch.int32, device="cuda")
        return timed(lambda: read_kernel[(grid,)](x, n // block, sink, BLOCK=block, num_warps=8),
                     n * 4), "triton streaming read (16-byte loads, evict_first), 4 GB"
    except Exception as e:  # no Triton or it failed: a reduction that reads every byte once
        print(f"peers.py: Triton read kernel unavailable ({type(e).__name__}: {e}); "
              "using x.view(int64).sum()", file=sys.stderr)
        return timed(lambda: x.view(torch.int64).sum(), n * 4), "torch int64 sum, 4 GB"
    finally:
        del x


def sdpa_call(torch, backend, gqa_mode):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    kind = getattr(SDPBackend, BACKENDS[backend])

    def call(q, k, v):
        with sdpa_kernel([kind]):
            if gqa_mode == "enable_gqa":
                return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            return F.scaled_dot_product_attention(q, k, v)
    return call


def reference(torch, q, k, v):
    """fp32 attention without expanding K/V: q [b,h,1,d], K/V [b,kv,n,d] -> [b,h,1,d] fp32."""
    b, h, _, d = q.shape
    kvh = k.shape[1]
    qf = q.float().reshape(b, kvh, h // kvh, d)
    s = torch.einsum("bkgd,bknd->bkgn", qf, k.float()) / math.sqrt(d)
    return torch.einsum("bkgn,bknd->bkgd", torch.softmax(s, dim=-1), v.float()).reshape(b, h, 1, d)


def is_refusal(e):
    return isinstance(e, RuntimeError) and "No available kernel" in str(e)


def refusal_reason(e, caught):
    why = "; ".join(str(w.message).strip().splitlines()[0] for w in caught if "not used" in str(w.message)
                    or "because" in str(w.message))
    return (why or str(e).strip().splitlines()[0])[:400]


def time_graph(torch, call, copies, steps, budget_s, target):
    """Per-step samples (us) from CUDA-graph replays of `steps` calls over the copies."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up off the capture stream, as torch.cuda.graphs asks
        for i in range(3):
            call(*copies[i % len(copies)])
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    graph, outs = torch.cuda.CUDAGraph(), []
    with torch.cuda.graph(graph):
        for i in range(steps):
            outs.append(call(*copies[i % len(copies)]))
    t0 = time.perf_counter()
    while True:  # 20 ms warm-up of whole replays
        graph.replay()
        torch.cuda.synchronize()
        if time.perf_counter() - t0 >= 0.02:
            break
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples, t0 = [], time.perf_counter()
    while not should_stop(samples, time.perf_counter() - t0, target=target, budget_s=budget_s):
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) * 1e3 / steps)
    del graph, outs
    return samples


def run_point(torch, backend, p, copies, l2_bytes, peak, args):
    """One (backend, problem) row; exceptions become rows with status failed."""
    import warnings
    group = p["heads"] // p["kv_heads"]
    import inspect
    import torch.nn.functional as F
    try:
        has_gqa = "enable_gqa" in inspect.signature(F.scaled_dot_product_attention).parameters
    except (TypeError, ValueError):
        has_gqa = "enable_gqa" in (F.scaled_dot_product_attention.__doc__ or "")
    modes = ["plain"] if group == 1 else (["enable_gqa", "expand"] if has_gqa else ["expand"])
    refusals, note = [], ""
    q, k, v = copies[0]
    ref = reference(torch, q, k, v)
    for mode in modes:
        work = copies
        if mode == "expand":  # expanded before timing, so the expansion is not timed
            work = [(a, b.repeat_interleave(group, dim=1), c.repeat_interleave(group, dim=1))
                    for a, b, c in copies]
            note = (f"K/V heads expanded {group}x with repeat_interleave before timing "
                    f"({'backend refused enable_gqa' if has_gqa else 'no enable_gqa in this torch'}); "
                    "the kernel reads the expanded K/V, bytes count the unexpanded K/V")
        elif mode == "enable_gqa":
            note = "enable_gqa=True"
        call = sdpa_call(torch, backend, mode)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = call(*work[0])
                torch.cuda.synchronize()
            except Exception as e:
                if not is_refusal(e):
                    raise
                refusals.append(f"{mode}: {refusal_reason(e, caught)}")
                continue
        diff = (out.float() - ref)
        rel = (diff.norm() / ref.norm().clamp_min(1e-30)).item()
        max_abs = diff.abs().max().item()
        if not math.isfinite(rel) or rel >= TOLERANCE:
            return make_row(backend, p, "incorrect", f"rel L2 {rel:.3g} >= {TOLERANCE}; {note}",
                            rel_l2=rel, max_abs=max_abs)
        steps = steps_per_replay(len(work))
        try:
            samples = time_graph(torch, call, work, steps, args.time_budget, args.target_error)
        except Exception as e:
            raise RuntimeError(f"timing ({note}): {type(e).__name__}: {e}") from e
        return make_row(backend, p, "passed", note, summarize_us(samples), peak, rel, max_abs)
    return make_row(backend, p, "not_supported", " | ".join(refusals))


def gpu_metadata(torch, peak, args):
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or H200_L2_BYTES
    try:  # as mha-tune: cudaDriverGetVersion, e.g. 13000 -> "13.0"
        import ctypes
        dv = ctypes.c_int(0)
        ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(dv))
        driver = f"{dv.value // 1000}.{dv.value % 1000 // 10}"
    except Exception:
        driver = "unknown"
    try:
        commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True,
                                text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        commit = ""
    return make_metadata(props.name, props.multi_processor_count, l2, peak, " ".join(sys.argv),
                         args.seed, driver, torch.version.cuda or "", commit or "unknown",
                         devices=f"{socket.gethostname()}:{torch.cuda.current_device()}"), l2


def run(args, problems):
    import torch
    if not torch.cuda.is_available():
        print("peers.py: no CUDA device visible to torch", file=sys.stderr)
        return 3
    torch.manual_seed(args.seed)
    peak, method = (0.0, "not measured")
    try:
        peak, method = measure_peak_read_gbps(torch)
    except Exception as e:
        print(f"peers.py: peak read bandwidth not measured: {e}", file=sys.stderr)
    meta, l2 = gpu_metadata(torch, peak, args)
    print(f"{meta['gpu_name']}: peak read {peak:.0f} GB/s ({method}); L2 {l2 / 1e6:.1f} MB")
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}
    rows, path = [], args.out + ".json"
    for p in problems:
        copies = []
        try:
            n = rotation_copies(copy_bytes(p), l2)
            shape_q = (p["batch"], p["heads"], 1, p["depth"])
            shape_kv = (p["batch"], p["kv_heads"], p["keys"], p["depth"])
            copies = [tuple(torch.randn(s, dtype=dtype[p["dtype"]], device="cuda")
                            for s in (shape_q, shape_kv, shape_kv)) for _ in range(n)]
        except Exception as e:
            for b in args.backends:
                rows.append(make_row(b, p, "failed", f"inputs: {type(e).__name__}: {e}"[:500]))
        for b in args.backends if copies else []:
            try:
                row = run_point(torch, b, p, copies, l2, peak, args)
            except Exception as e:
                row = make_row(b, p, "failed", f"{type(e).__name__}: {e}"[:500])
                try:
                    torch.cuda.synchronize()
                except Exception:
                    pass
            rows.append(row)
            print(f"  {p['name']} {row['kernel']}: {row['status']} "
                  f"{fmt(row['time']['median_us'], '.2f')} us {row['reason']}", flush=True)
            write_report(path, make_report(meta, rows))  # after every row: nothing is lost
        del copies
        torch.cuda.empty_cache()
    write_report(path, make_report(meta, rows))
    print(f"wrote {path}\n" + format_table(rows))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="Time PyTorch SDPA decode peers like mha-tune.",
                                 epilog=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="report prefix: writes PREFIX.json")
    ap.add_argument("--problems", default=DEFAULT_PROBLEMS)
    ap.add_argument("--backends", default="flash,cudnn")
    ap.add_argument("--time-budget", type=float, default=0.5, help="seconds per point (0.5)")
    ap.add_argument("--target-error", type=float, default=0.005, help="median rel. std error (0.005)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dry-run", action="store_true", help="print the plan; import no torch")
    args = ap.parse_args(argv)
    try:
        problems = parse_problems(args.problems)
        args.backends = [b.strip() for b in args.backends.split(",") if b.strip()]
        bad = [b for b in args.backends if b not in BACKENDS]
        if bad or not args.backends:
            raise UsageError(f"--backends: {', '.join(bad) or '(empty)'}: choose from flash, cudnn")
    except UsageError as e:
        print(f"peers.py: {e}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(plan_text(problems, args.backends, H200_L2_BYTES) + f"\nwould write {args.out}.json")
        return 0
    try:
        import torch  # noqa: F401
    except ImportError:
        print("peers.py: PyTorch is not installed (needed to time peers; --dry-run needs none)",
              file=sys.stderr)
        return 3
    return run(args, problems)


if __name__ == "__main__":
    sys.exit(main())
