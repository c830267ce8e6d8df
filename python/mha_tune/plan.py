"""A decode plan (C++ mha::DecodePlan) as a Python object: the kernel and split chosen for a shape
and its capacity, the workspace it needs, and its lengths for a split plan. No GPU is needed to
make one when sm_count is given. Freed with the object (or by free())."""

import torch

from ._ops import ops

# torch dtypes and the library's names.
_DTYPE_NAMES = {
    torch.bfloat16: "bf16",
    torch.float16: "fp16",
    torch.float32: "fp32",
}
_FP8_NAMES = {}
for _name, _lib in (("float8_e4m3fn", "e4m3"), ("float8_e5m2", "e5m2")):
    if hasattr(torch, _name):
        _FP8_NAMES[getattr(torch, _name)] = _lib
_FROM_NAME = {v: k for k, v in {**_DTYPE_NAMES, **_FP8_NAMES}.items()}

KV_LAYOUTS = ("contig", "paged", "paged_hnd")
MASKS = ("null", "causal", "window", "chunked", "tree")


def dtype_name(dtype, arg, allowed):
    """The library's name of `dtype` (a torch dtype or a name), checked against `allowed`."""
    name = dtype if isinstance(dtype, str) else {**_DTYPE_NAMES, **_FP8_NAMES}.get(dtype)
    if name not in allowed:
        raise ValueError(f"{arg}: {dtype} is not supported (one of "
                         f"{', '.join(str(_FROM_NAME.get(a, a)) for a in allowed)})")
    return name


def torch_dtype(name):
    """The torch dtype of a library dtype name ("bf16" -> torch.bfloat16)."""
    return _FROM_NAME[name]


def _positive(value, arg, minimum=1):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{arg} must be an integer >= {minimum}, not {value!r}")
    return value


class Plan:
    """Plan(heads=32, kv_heads=8, depth=128, batch=..., max_keys=..., ...): a plan for steps of at
    most `batch` sequences of at most `max_keys` keys. kv is "contig", "paged" (pages
    [pages, page_size, kv_heads, depth]) or "paged_hnd" ([pages, kv_heads, page_size, depth]);
    dtype is q's (and the cache's unless kv_dtype names an fp8 one), out_dtype the output's.
    kernel and split override the tuned defaults' choice (a procedural name from kernels(); "4",
    "plan2x128", "cluster4"). sm_count 0 reads the current device's.
    Speculative verify steps: q_len query tokens a sequence (1..16; token t of a sequence of n keys
    at position n - q_len + t), q and the output then a row per token, [batch * q_len, heads,
    depth]; with ragged_q_len each sequence has 0..q_len of them, packed as run's cu_seqlens_q
    says. mask "tree" takes run's tree_mask, an int32 word a token (bit j: it sees draft j)."""

    def __init__(self, *, heads, kv_heads, depth, batch, max_keys, dtype=torch.bfloat16,
                 out_dtype=None, kv_dtype=None, kv="contig", page_size=0, mask="null",
                 window=0, chunk=0, has_sink=False, soft_cap=False, ragged=False, kernel=None,
                 split=None, sm_count=0, q_len=1, ragged_q_len=False):
        self.handle = None
        dtype = dtype_name(dtype, "dtype", ("bf16", "fp16"))
        out_dtype = dtype if out_dtype is None else dtype_name(out_dtype, "out_dtype",
                                                               ("bf16", "fp16", "fp32"))
        kv_dtype = "" if kv_dtype is None else dtype_name(kv_dtype, "kv_dtype",
                                                          (dtype, "e4m3", "e5m2"))
        if kv not in KV_LAYOUTS:
            raise ValueError(f"kv: {kv!r} is not one of {', '.join(KV_LAYOUTS)}")
        if mask not in MASKS:
            raise ValueError(f"mask: {mask!r} is not one of {', '.join(MASKS)}")
        _positive(heads, "heads")
        _positive(kv_heads, "kv_heads")
        if heads % kv_heads:
            raise ValueError(f"heads ({heads}) must be a multiple of kv_heads ({kv_heads})")
        _positive(depth, "depth")
        _positive(batch, "batch")
        _positive(max_keys, "max_keys")
        _positive(page_size, "page_size", minimum=1 if kv != "contig" else 0)
        _positive(window, "window", minimum=1 if mask == "window" else 0)
        _positive(chunk, "chunk", minimum=1 if mask == "chunked" else 0)
        _positive(sm_count, "sm_count", minimum=0)
        _positive(q_len, "q_len")  # the library refuses more than it computes
        self.dtype, self.out_dtype, self.kv_dtype = dtype, out_dtype, kv_dtype or dtype
        self.kv, self.mask, self.page_size = kv, mask, page_size if kv != "contig" else 0
        self.window, self.chunk = window, chunk
        self.heads, self.kv_heads, self.depth = heads, kv_heads, depth
        self.batch, self.max_keys = batch, max_keys
        self.has_sink, self.soft_cap, self.ragged = bool(has_sink), bool(soft_cap), bool(ragged)
        self.q_len, self.ragged_q_len = q_len, bool(ragged_q_len)
        self.handle = ops.make_plan(dtype, out_dtype, kv_dtype, self.soft_cap, kv, mask,
                                    self.has_sink, depth, heads, kv_heads, batch, max_keys,
                                    self.ragged, self.page_size, window, chunk, kernel or "",
                                    split or "", sm_count, q_len, self.ragged_q_len)
        (self.kernel, self.split, self.reason, self.workspace_bytes, self.needs_lengths,
         _, _) = ops.plan_info(self.handle)

    @property
    def is_fp8(self):
        return self.kv_dtype in ("e4m3", "e5m2")

    def set_lengths(self, lengths, workspace):
        """A split plan's step lengths (host ints) into `workspace`, on the current stream: before
        each run (or graph replay) whose lengths changed. A no-op for fixed splits."""
        if not self.needs_lengths:
            return
        if not isinstance(lengths, torch.Tensor):
            lengths = torch.tensor(list(lengths), dtype=torch.int32)
        if lengths.device.type != "cpu":
            raise ValueError("lengths must be on the host (a list or a CPU tensor); the work "
                             "list is planned there")
        ops.set_lengths(self.handle, lengths.to(torch.int32), workspace)

    def info(self):
        kernel, split, reason, workspace, needs, planned, page_size = ops.plan_info(self.handle)
        return {"kernel": kernel, "split": split, "reason": reason, "workspace_bytes": workspace,
                "needs_lengths": needs, "planned_batch": planned, "page_size": page_size}

    def free(self):
        if self.handle is not None and ops is not None:
            ops.free_plan(self.handle)
        self.handle = None

    def __del__(self):
        try:
            self.free()
        except Exception:  # interpreter shutdown: the op registry may be gone already
            pass

    def __repr__(self):
        return f"Plan(kernel={self.kernel!r}, split={self.split!r}, workspace_bytes=" \
               f"{self.workspace_bytes})"
