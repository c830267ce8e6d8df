"""Timing peers exactly as mha-tune's step_timer.cu times its kernels: inputs rotated over enough
copies to exceed 4x the L2, one CUDA-graph replay = one step over each copy (at least 8 steps),
20 ms of warm-up replays, events around each replay, samples until the median's relative
standard error is under 0.5% (stats.cpp's rule) or the time budget ends. The statistics are pure
Python; the GPU parts take torch as an argument, so importing this module needs no torch."""
import math
import time

H200_L2_BYTES = 62914560


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


# ---------------------------------------------------------------- GPU parts (torch passed in)

def _sample(torch, launch, steps, budget_s, target):
    """Per-step samples (us) of `launch()`, which runs `steps` steps, after 20 ms of warm-up."""
    t0 = time.perf_counter()
    while True:
        launch()
        torch.cuda.synchronize()
        if time.perf_counter() - t0 >= 0.02:
            break
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples, t0 = [], time.perf_counter()
    while not should_stop(samples, time.perf_counter() - t0, target=target, budget_s=budget_s):
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) * 1e3 / steps)
    return samples


def capture_graph(torch, call, n_copies):
    """(graph, outputs, steps): a CUDA graph of steps_per_replay(n_copies) calls, call(i) using copy
    i % n_copies. Warm-up calls run on a side stream first, as torch.cuda.graphs asks."""
    steps = steps_per_replay(n_copies)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(3):
            call(i % n_copies)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    graph, outs = torch.cuda.CUDAGraph(), []
    with torch.cuda.graph(graph):
        for i in range(steps):
            outs.append(call(i % n_copies))
    return graph, outs, steps


def sample_graph(torch, graph, steps, budget_s=0.5, target=0.005):
    """Per-step samples (us) from replays of a graph capture_graph made."""
    return _sample(torch, graph.replay, steps, budget_s, target)


def time_graph(torch, call, n_copies, budget_s=0.5, target=0.005):
    """Samples from CUDA-graph replays of steps_per_replay(n_copies) calls (capture_graph)."""
    graph, outs, steps = capture_graph(torch, call, n_copies)
    samples = sample_graph(torch, graph, steps, budget_s, target)
    del graph, outs
    return samples


def stream_launcher(call, n_copies):
    """(launch, steps): the steps of one replay launched one by one (mha-tune's --timing stream)."""
    steps = steps_per_replay(n_copies)

    def launch():
        for i in range(steps):
            call(i % n_copies)
    return launch, steps


def time_stream(torch, call, n_copies, budget_s=0.5, target=0.005):
    """mha-tune's --timing stream: the same steps launched one by one (for a peer whose calls
    cannot be captured in a graph; the row says so)."""
    launch, steps = stream_launcher(call, n_copies)
    return _sample(torch, launch, steps, budget_s, target)


def measure_peak_read_gbps(torch, nbytes=4e9, repeats=20):
    """(GB/s, method): as bandwidth_probe.cu, a streaming read of 4 GB with 16-byte loads, median
    of `repeats` timed launches after 2 warm-ups; a torch reduction if Triton is missing."""
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
        import sys
        print(f"peers.py: Triton read kernel unavailable ({type(e).__name__}: {e}); "
              "using x.view(int64).sum()", file=sys.stderr)
        return timed(lambda: x.view(torch.int64).sum(), n * 4), "torch int64 sum, 4 GB"
    finally:
        del x
