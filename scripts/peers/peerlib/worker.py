"""One worker process: one peer over a list of problems that share its compiled kernels. For each
problem it journals "start" before touching the GPU and the finished row after, so that the parent
can name the problem a crash (a signal) happened in and go on with the rest in a new process.
Inputs are random (never zeros), the reference is fp32 on the logical (for an fp8 cache, the
dequantised) cache of copy 0, and a peer is timed only after it matched the reference."""
import json
import math
import os
import sys

from . import backends, flashinfer_sites, kernel_time, report, timing
from .suite import (FP8_MAX, V_SIGMA_FACTOR, cache_bytes, is_fp8, kv_scales, kv_sigmas,
                    page_table, token_counts, token_starts, token_words)


class CaseData:
    """The inputs of one problem in one peer's layout, n_copies times over for the rotation. An fp8
    cache holds x / s saturated to the format, x ~ N(0, sigma_h^2) per KV head (suite.kv_sigmas);
    k_scale and v_scale are its dequantisation scales s (a float for "tensor" scales, a [kv_heads]
    float32 tensor for "head" ones; None for a 16-bit cache). V spreads V_SIGMA_FACTOR times wider
    than K, so its stored values are drawn alike and its scales are that factor times K's. The
    queries are token-major, [tokens, heads, d] (sequence b's at rows starts[b] .., q_len each
    unless the step is ragged), as the ragged-query APIs take them; `starts_t` is cu_seqlens_q
    (int32, [batch + 1]); `words` (per sequence, suite.token_words) are the draft tokens' mask
    words, `words_t` the same packed by token as an int32 [tokens] tensor."""

    def __init__(self, torch, p, layout, n_copies, seed):
        h, kv, d = p["heads"], p["kv_heads"], p["depth"]
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[p["dtype"]]
        self.page_size = layout.page_size or max(p["lengths"])
        rows, pages = page_table(p["lengths"], self.page_size, seed, layout.shuffled)
        self.page_counts = [(n + self.page_size - 1) // self.page_size for n in p["lengths"]]
        self.table = torch.tensor(rows, dtype=torch.int32, device="cuda")
        self.max_keys = len(rows[0]) * self.page_size  # keys the page table can address
        self.lengths = torch.tensor(p["lengths"], dtype=torch.int32, device="cuda")
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)

        def randn(*shape, std=1.0):
            return (torch.randn(*shape, generator=gen, device="cuda", dtype=torch.float32)
                    .mul_(std).to(dtype))
        self.starts = token_starts(p)
        self.starts_t = torch.tensor(self.starts, dtype=torch.int32, device="cuda")
        self.q = [randn(self.starts[-1], h, d, std=p["q_std"]) for _ in range(n_copies)]
        self.words = token_words(p, seed)
        self.words_t = torch.tensor([w for seq in self.words for w in seq], dtype=torch.int32,
                                    device="cuda")
        kv_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "e4m3": torch.float8_e4m3fn,
                    "e5m2": torch.float8_e5m2}[p["kv_dtype"]]
        self.k_scale = self.v_scale = self.dequant = self.v_dequant = None
        if is_fp8(p):
            top, scales = FP8_MAX[p["kv_dtype"]], kv_scales(p)
            ratio = torch.tensor([sg / sc for sg, sc in zip(kv_sigmas(p), scales)],
                                 device="cuda").view(1, kv, 1, 1)  # x / s = randn * sigma_h / s
            self.dequant = torch.tensor(scales, device="cuda").view(kv, 1, 1)
            self.v_dequant = self.dequant * V_SIGMA_FACTOR
            tensor = p["kv_scale"] == "tensor"
            self.k_scale = scales[0] if tensor else self.dequant.view(kv)
            self.v_scale = scales[0] * V_SIGMA_FACTOR if tensor else self.v_dequant.view(kv)

        def cache():
            x = torch.randn(pages, kv, self.page_size, d, generator=gen, device="cuda",
                            dtype=torch.float32)
            if self.dequant is not None:  # saturated first: torch's cast to fp8 gives NaN or inf
                x.mul_(ratio).clamp_(-top, top)
            return x.to(kv_dtype)
        self.k = [cache() for _ in range(n_copies)]
        self.v = [cache() for _ in range(n_copies)]
        self.sinks = None
        if p["has_sink"]:  # per query head, in units of scaled scores (the contract's)
            self.sinks = (torch.randn(h, generator=gen, device="cuda", dtype=torch.float32)
                          + p["sink_mean"])

    def visible(self, torch, p, seq):
        """[tokens, n] bool: the keys each token of sequence `seq` sees (module `visible`)."""
        return visible(torch, p, p["lengths"][seq], self.words[seq])

    def logical(self, torch, which, seq, n):
        """[kv, n, d] fp32 keys or values of sequence `seq` from copy 0, through the page table,
        dequantised. An fp8 pool is gathered as bytes: older torch has no fp8 index kernel."""
        pool = (self.k if which == "k" else self.v)[0]
        pages = self.table[seq, :self.page_counts[seq]].long()
        kv, d = pool.shape[1], pool.shape[3]
        if self.dequant is None:
            return pool[pages].float().permute(1, 0, 2, 3).reshape(kv, -1, d)[:, :n]
        rows = pool.view(torch.uint8)[pages].view(pool.dtype).float()
        return (rows.permute(1, 0, 2, 3).reshape(kv, -1, d)[:, :n] *
                (self.dequant if which == "k" else self.v_dequant))


def visible(torch, p, n, words):
    """[tokens, n] bool: which keys of a sequence of n keys each of its tokens (one per word) sees
    (masks.cuh key_visible, the contract's definition): every key for the null mask; up to the
    token's own position (n - tokens + t) for causal, the last `window` of those for a window;
    for a tree, the keys before the drafts and the drafts the token's word names."""
    q_len = len(words)
    keys = torch.arange(n, device="cuda").view(1, n)
    pos = (n - q_len + torch.arange(q_len, device="cuda")).view(q_len, 1)
    if p["mask"] == "null":
        return keys.expand(q_len, n) < n
    if p["mask"] == "tree":
        draft = keys - (n - q_len)
        bits = (torch.tensor(words, dtype=torch.int64, device="cuda").view(q_len, 1)
                >> draft.clamp_min(0)) & 1
        return (draft < 0) | (bits == 1)
    seen = keys <= pos
    if p["mask"] == "window":
        seen &= keys > pos - p["window"]
    return seen


def reference(torch, p, data):
    """fp32 attention of copy 0, sequence by sequence, each token with its mask (`visible`), the
    soft cap (on the scaled scores, before the sink joins them) and the sink; [tokens, heads, d],
    token-major as the queries."""
    h, kv, d = p["heads"], p["kv_heads"], p["depth"]
    out = torch.empty(data.starts[-1], h, d, dtype=torch.float32, device="cuda")
    for seq, (n, q_len) in enumerate(zip(p["lengths"], token_counts(p))):
        if q_len == 0:  # a sequence without a token this step has no row
            continue
        first = data.starts[seq]
        k = data.logical(torch, "k", seq, n)
        v = data.logical(torch, "v", seq, n)
        q = data.q[0][first:first + q_len].float().view(q_len, kv, h // kv, d)
        s = torch.einsum("tkgd,knd->kgtn", q, k) * p["scale"]
        if p["soft_cap"] > 0:
            s = torch.tanh(s / p["soft_cap"]) * p["soft_cap"]
        s = s.masked_fill(~visible(torch, p, n, data.words[seq]), float("-inf"))
        if data.sinks is not None:
            sink = data.sinks.view(kv, h // kv, 1, 1).expand(kv, h // kv, q_len, 1)
            s = torch.cat([s, sink], dim=-1)
        # A token that sees no key (a position before the first, q_len > n) attends to nothing:
        # its row is zero, not the NaN of a softmax over nothing.
        w = torch.softmax(s, dim=-1).nan_to_num(nan=0.0)
        if data.sinks is not None:
            w = w[..., :-1]
        o = torch.einsum("kgtn,knd->tkgd", w, v).reshape(q_len, h, d)
        out[first:first + q_len] = o
    return out


def copy_bytes(p, layout):
    ps = layout.page_size or max(p["lengths"])
    return cache_bytes(p, ps) + 2.0 * sum(token_counts(p)) * p["heads"] * p["depth"]


def run_case(torch, peer, p, env):
    layout = peer.layout(p)
    n_copies = timing.rotation_copies(copy_bytes(p, layout), env["l2_bytes"])
    data = CaseData(torch, p, layout, n_copies, env["seed"])
    ref = reference(torch, p, data)
    try:
        call, note = peer.prepare(torch, p, data)
    except backends.NotSupported as e:
        return report.make_row(peer.name, p, "not_supported", str(e)[:500])
    out = call(0)
    torch.cuda.synchronize()
    diff = out.float().reshape(ref.shape) - ref  # a peer may return a view in its own order
    rel = (diff.norm() / ref.norm().clamp_min(1e-30)).item()
    max_abs = diff.abs().max().item()
    note = f"{note}; {layout.describe(p)}; {n_copies} copies"
    tolerance = peer.tolerance(p)
    if not math.isfinite(rel) or rel >= tolerance:
        return report.make_row(peer.name, p, "incorrect", f"rel L2 {rel:.3g} >= {tolerance}; {note}",
                               rel_l2=rel, max_abs=max_abs)
    graph = outs = None
    try:
        graph, outs, steps = timing.capture_graph(torch, call, n_copies)
        samples = timing.sample_graph(torch, graph, steps, env["budget_s"], env["target"])
    except Exception as e:  # some peers cannot be captured: time them like --timing stream
        torch.cuda.synchronize()
        graph = None
        note += (f"; graph capture failed ({type(e).__name__}: {str(e).splitlines()[0][:160]}), "
                 "timed by stream launches")
        samples = timing.time_stream(torch, call, n_copies, env["budget_s"], env["target"])
    kernel = None
    if env.get("kernel_time", True):  # the second convention, never at the cost of the first
        launch, steps = timing.stream_launcher(call, n_copies)
        try:
            kernel = kernel_time.measure_step(torch, graph.replay if graph else None, launch, steps)
        except Exception as e:
            torch.cuda.synchronize()
            note += f"; kernel time unavailable ({type(e).__name__}: {str(e)[:120]})"
    del graph, outs
    return report.make_row(peer.name, p, "passed", note, timing.summarize_us(samples),
                           env["peak_gbps"], rel, max_abs, kernel=kernel)


def main(job_path):
    """Runs the job file's problems; each outcome is appended to its journal as one JSON line."""
    with open(job_path) as f:
        job = json.load(f)
    import torch
    flashinfer_sites.register(job.get("flashinfer_sites", {}))
    peer = backends.PEERS[job["peer"]]
    env = job["env"]
    torch.manual_seed(env["seed"])
    with open(job["journal"], "a") as journal:
        def log(entry):
            journal.write(json.dumps(entry) + "\n")
            journal.flush()
        for p in job["problems"]:
            log({"start": p["name"]})
            try:
                row = run_case(torch, peer, p, env)
            except Exception as e:
                row = report.make_row(peer.name, p, "failed", f"{type(e).__name__}: {e}"[:500])
                try:
                    torch.cuda.synchronize()
                except Exception:  # a sticky error: the rest need a new process
                    log({"row": row})
                    return 3
            log({"row": row})
            torch.cuda.empty_cache()
    return 0


def gpu_uuid(props):
    """As nvidia-smi -L prints it ("GPU-8f7c1a02-..."), or "" where torch does not say."""
    uuid = str(getattr(props, "uuid", "") or "")
    return uuid if not uuid or uuid.startswith("GPU-") else "GPU-" + uuid


def pci_bus_id(props):
    """As nvidia-smi prints it ("00000000:3B:00.0"), or "" where torch does not say."""
    parts = [getattr(props, k, None) for k in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
    if any(p is None for p in parts):
        return ""
    return f"{parts[0]:08X}:{parts[1]:02X}:{parts[2]:02X}.0"


def nvidia_driver_release(path="/proc/driver/nvidia/version"):
    """The driver release ("580.159") from the kernel module's version text, or ""."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return ""
    import re
    m = re.search(r"Kernel Module(?: for \S+)?\s+([0-9]+(?:\.[0-9]+)+)", text)
    return m.group(1) if m else ""


def probe(out_path):
    """The GPU's identity, the peak read bandwidth and which peer packages import, as JSON."""
    import ctypes
    import platform
    import torch
    info = {"python": platform.python_version(), "torch": torch.__version__}
    if not torch.cuda.is_available():
        info["error"] = "no CUDA device visible to torch"
    else:
        props = torch.cuda.get_device_properties(0)
        info.update(gpu_name=props.name, sm_count=props.multi_processor_count,
                    l2_bytes=getattr(props, "L2_cache_size", 0) or timing.H200_L2_BYTES,
                    cuda_version=torch.version.cuda or "", gpu_uuid=gpu_uuid(props),
                    pci_bus_id=pci_bus_id(props), nvidia_driver_version=nvidia_driver_release())
        try:
            dv = ctypes.c_int(0)
            ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(dv))
            info["driver_version"] = f"{dv.value // 1000}.{dv.value % 1000 // 10}"
        except OSError:
            info["driver_version"] = "unknown"
        info["peak_gbps"], info["peak_method"] = timing.measure_peak_read_gbps(torch)
    packages = {}
    try:
        import flashinfer
        packages["flashinfer"] = {"version": getattr(flashinfer, "__version__", "?")}
    except Exception as e:  # any import failure makes its peers 'skipped', with this reason
        packages["flashinfer"] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
    packages["torch"] = {"version": torch.__version__}
    packages["flash_attn_3"] = fa3_version()
    try:
        import mha_tune
        packages["mha_tune"] = {"version": mha_tune.build_info()}
    except Exception as e:
        packages["mha_tune"] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
    info["packages"] = packages
    with open(out_path, "w") as f:
        json.dump(info, f)
    return 0


def fa3_version():
    """{version} of the FlashAttention-3 build on PYTHONPATH (scripts/peers/build_fa3.sh's archive:
    its package version, source commit and build switches), or {error}."""
    try:
        import flash_attn_interface
        import flash_attn_3
    except Exception as e:
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
    version = getattr(flash_attn_3, "__version__", "?")
    info_path = os.path.join(os.path.dirname(os.path.abspath(flash_attn_interface.__file__)),
                             "fa3_build_info.json")
    try:
        with open(info_path) as f:
            built = json.load(f)
        version += f" (commit {built.get('commit', '?')[:12]}, {built.get('nvcc', '')})"
        return {"version": version, "build": built}
    except (OSError, ValueError):
        return {"version": version + " (no fa3_build_info.json)"}


def probe_flashinfer(out_path, site):
    """The version of the FlashInfer this process imports, which must come from `site`."""
    try:
        import flashinfer
        where = os.path.realpath(os.path.dirname(flashinfer.__file__))
        if not where.startswith(os.path.realpath(site) + os.sep):
            info = {"error": f"flashinfer imported from {where}, not from {site}"}
        else:
            info = {"version": getattr(flashinfer, "__version__", "?")}
    except Exception as e:
        info = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
    with open(out_path, "w") as f:
        json.dump(info, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
