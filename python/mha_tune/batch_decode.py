"""BatchDecode: FlashInfer's plan-then-run shape over mha_tune's ops.

    wrapper = mha_tune.BatchDecode(torch.empty(64 << 20, dtype=torch.uint8, device="cuda"))
    wrapper.plan(seq_lens, num_qo_heads=32, num_kv_heads=8, head_dim=128)   # host, once a step
    out = wrapper.run(q, (k_cache, v_cache))                                # device, capturable

plan() keeps the step's lengths and page table in device buffers of its own, written in place each
time (as FlashInfer does), and reuses its plan while the shape and capacities stay: a CUDA graph
captured around run() replays the new lengths after the next plan(). For graphs, give max_batch,
max_keys and ragged (or split) explicitly: their defaults follow the lengths, and a new plan or a
larger buffer would not be the one the graph captured."""

import math

import torch

from ._ops import ops
from .plan import Plan, torch_dtype


def _host_ints(values, arg):
    """A 1-D int32 CPU tensor of `values` (a list, a tuple or a tensor on any device)."""
    if isinstance(values, torch.Tensor):
        if values.dim() != 1 or values.is_floating_point() or values.is_complex():
            raise ValueError(f"{arg} must be a 1-D integer tensor (sizes {tuple(values.shape)}, "
                             f"dtype {values.dtype})")
        return values.detach().to("cpu", torch.int32)
    try:
        return torch.tensor([int(v) for v in values], dtype=torch.int32)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{arg} must be a list of ints or a 1-D tensor: {e}") from None


def _table_from_csr(indptr, indices, batch):
    """FlashInfer's page lists (indptr [batch + 1] into indices) as a padded [batch, width] table."""
    indptr, indices = _host_ints(indptr, "indptr"), _host_ints(indices, "indices")
    if indptr.numel() != batch + 1:
        raise ValueError(f"indptr has {indptr.numel()} entries; {batch} sequences need {batch + 1}")
    counts = (indptr[1:] - indptr[:-1]).tolist()
    if min(counts, default=0) < 0 or int(indptr[-1]) > indices.numel():
        raise ValueError("indptr must be non-decreasing and end within indices")
    table = torch.zeros((batch, max(counts, default=0) or 1), dtype=torch.int32)
    for b, n in enumerate(counts):
        table[b, :n] = indices[int(indptr[b]):int(indptr[b]) + n]
    return table, counts


class BatchDecode:
    """Decodes one query token per sequence against a KV cache with mha-tune's kernels.
    `workspace`: a uint8 CUDA buffer, kept for every plan and run (its size bounds the plans:
    plan() raises when one needs more)."""

    def __init__(self, workspace):
        if not isinstance(workspace, torch.Tensor) or workspace.dtype != torch.uint8 or \
                workspace.device.type != "cuda" or not workspace.is_contiguous():
            raise ValueError("workspace must be a contiguous uint8 CUDA tensor, e.g. "
                             "torch.empty(64 << 20, dtype=torch.uint8, device='cuda')")
        self.workspace = workspace
        self._plan = None
        self._key = None
        self._batch = 0
        self._soft_cap = 0.0
        self._scales = {}        # per-tensor float scales as device vectors (_scale)
        self.seq_lens = None     # device int32 [max_batch]: the planned step's lengths first
        self.page_table = None   # device int32 [max_batch, pages per sequence] (paged caches)

    @property
    def plan_info(self):
        """The current plan (kernel, split, reason, workspace_bytes, ...), or None."""
        return None if self._plan is None else self._plan.info()

    def plan(self, seq_lens=None, page_table=None, *, indptr=None, indices=None,
             last_page_len=None, num_qo_heads, num_kv_heads, head_dim, page_size=0,
             kv_layout="NHD", q_dtype=torch.bfloat16, kv_dtype=None, out_dtype=None,
             mask="null", window=0, chunk=0, has_sink=False, soft_cap=0.0, max_keys=None,
             max_batch=None, ragged=None, split=None, kernel=None, sm_count=None):
        """Plans the next steps. The lengths: `seq_lens` (host ints; a device tensor is copied to
        the host), or FlashInfer's `indptr`/`indices`/`last_page_len` for a paged cache. Paged
        caches (page_size > 0) also take `page_table` [batch, pages per sequence] (any device)
        unless indptr/indices give the pages. kv_layout "NHD" ([.., page_size, kv_heads, depth])
        or "HND" ([.., kv_heads, page_size, depth]). max_batch and max_keys are the capacities
        (default: this batch and its longest sequence); kernel and split override the defaults."""
        paged = page_size != 0
        if kv_layout not in ("NHD", "HND"):
            raise ValueError(f"kv_layout: {kv_layout!r} is not 'NHD' or 'HND'")
        if kv_layout == "HND" and not paged:
            raise ValueError("kv_layout 'HND' needs a paged cache (page_size > 0); a contiguous "
                             "cache is [batch, max_keys, kv_heads, head_dim]")
        if indptr is not None or indices is not None:
            if not paged or indptr is None or indices is None or page_table is not None:
                raise ValueError("indptr and indices (FlashInfer's page lists) go together, for a "
                                 "paged cache, instead of page_table")
        if seq_lens is None:
            if indptr is None or last_page_len is None:
                raise ValueError("seq_lens is required (or indptr, indices and last_page_len)")
            last = _host_ints(last_page_len, "last_page_len")
            page_table, counts = _table_from_csr(indptr, indices, last.numel())
            lengths = torch.tensor([(n - 1) * page_size + int(l) if n > 0 else 0
                                    for n, l in zip(counts, last.tolist())], dtype=torch.int32)
        else:
            lengths = _host_ints(seq_lens, "seq_lens")
            if indptr is not None:
                page_table, _ = _table_from_csr(indptr, indices, lengths.numel())
        batch = lengths.numel()
        if batch == 0:
            raise ValueError("seq_lens: a step needs at least one sequence")
        if int(lengths.min()) < 0:
            raise ValueError("seq_lens: lengths must be >= 0")
        longest = int(lengths.max())
        max_batch = batch if max_batch is None else max_batch
        max_keys = max(longest, 1) if max_keys is None else max_keys
        if batch > max_batch:
            raise ValueError(f"seq_lens: {batch} sequences exceed max_batch={max_batch}")
        if longest > max_keys:
            raise ValueError(f"seq_lens: a sequence of {longest} keys exceeds max_keys={max_keys}")
        if paged and page_table is None:
            raise ValueError("page_table is required for a paged cache (page_size > 0)")
        if not paged and page_table is not None:
            raise ValueError("page_table was given for a contiguous cache (page_size=0)")
        if ragged is None:
            ragged = bool((lengths != lengths[0]).any())
        device = self.workspace.device
        if sm_count is None:
            sm_count = torch.cuda.get_device_properties(device).multi_processor_count

        kv = "contig" if not paged else ("paged" if kv_layout == "NHD" else "paged_hnd")
        options = dict(heads=num_qo_heads, kv_heads=num_kv_heads, depth=head_dim,
                       batch=max_batch, max_keys=max_keys, dtype=q_dtype, out_dtype=out_dtype,
                       kv_dtype=kv_dtype, kv=kv, page_size=page_size, mask=mask, window=window,
                       chunk=chunk, has_sink=has_sink, soft_cap=soft_cap > 0, ragged=ragged,
                       kernel=kernel, split=split, sm_count=sm_count)
        key = tuple(sorted((k, str(v)) for k, v in options.items()))
        if key != self._key:
            plan = Plan(**options)
            if plan.workspace_bytes > self.workspace.numel():
                raise ValueError(f"workspace: the plan ({plan.kernel}, split {plan.split}) needs "
                                 f"{plan.workspace_bytes} bytes; the buffer holds "
                                 f"{self.workspace.numel()}")
            if self._plan is not None:
                self._plan.free()
            self._plan, self._key = plan, key
        self._fill_buffers(lengths, page_table, max_batch, max_keys, page_size)
        self._plan.set_lengths(lengths, self.workspace)
        self._batch = batch
        self._soft_cap = float(soft_cap)
        return self

    def _fill_buffers(self, lengths, page_table, max_batch, max_keys, page_size):
        """Copies the step's lengths (and pages) into the persistent device buffers, reallocated
        only when the capacity grows, on the current stream."""
        device, batch = self.workspace.device, lengths.numel()
        if self.seq_lens is None or self.seq_lens.numel() < max_batch:
            self.seq_lens = torch.zeros(max_batch, dtype=torch.int32, device=device)
        self.seq_lens[:batch].copy_(lengths)
        if page_size == 0:
            self.page_table = None
            return
        if not isinstance(page_table, torch.Tensor):
            page_table = torch.tensor(page_table, dtype=torch.int32)
        if page_table.dim() != 2 or page_table.size(0) < batch or page_table.is_floating_point():
            raise ValueError(f"page_table must be an integer [batch, pages per sequence] tensor "
                             f"with a row per sequence ({batch}); got sizes "
                             f"{tuple(page_table.shape)}")
        pages = math.ceil(max_keys / page_size)
        needed = math.ceil(int(lengths.max()) / page_size)
        if page_table.size(1) < needed:
            raise ValueError(f"page_table has {page_table.size(1)} pages per sequence; a sequence "
                             f"of {int(lengths.max())} keys needs {needed} of {page_size} keys")
        if self.page_table is None or self.page_table.size(0) < max_batch or \
                self.page_table.size(1) != pages:
            self.page_table = torch.zeros((max_batch, pages), dtype=torch.int32, device=device)
        width = min(pages, page_table.size(1))
        self.page_table[:batch, :width].copy_(page_table[:batch, :width])

    @staticmethod
    def _split_cache(kv_cache):
        if isinstance(kv_cache, (tuple, list)) and len(kv_cache) == 2:
            return kv_cache[0], kv_cache[1]
        if isinstance(kv_cache, torch.Tensor) and kv_cache.dim() == 5 and kv_cache.size(1) == 2:
            # vLLM's [pages, 2, page_size, kv_heads, depth] or FlashInfer's HND [pages, 2,
            # kv_heads, page_size, depth]: K and V are strided views, no copy.
            return kv_cache.select(1, 0), kv_cache.select(1, 1)
        shape = tuple(kv_cache.shape) if isinstance(kv_cache, torch.Tensor) else type(kv_cache)
        raise ValueError(f"kv_cache must be (k_cache, v_cache) or one [pages, 2, ...] tensor, "
                         f"not {shape}")

    def _scale(self, value, arg, like):
        """The kernels read a float32 [kv_heads] vector. A float (per tensor) becomes one, made
        once and kept while the value stays: made at every call, its fill kernel sat in every
        captured step. A tensor is used as it is when it already is such a vector, else expanded
        on the device at each call (its values may change in place)."""
        kv_heads = self._plan.kv_heads
        if value is None:
            value = 1.0
        if not isinstance(value, torch.Tensor):
            key = (float(value), kv_heads, like.device)
            kept = self._scales.get(arg)
            if kept is None or kept[0] != key:  # the last value of each argument is kept
                kept = (key, torch.full((kv_heads,), float(value), dtype=torch.float32,
                                        device=like.device))
                self._scales[arg] = kept
            return kept[1]
        value = value.to(device=like.device, dtype=torch.float32)
        if value.numel() == 1:  # per-tensor: one value for every KV head
            return value.reshape(1).expand(kv_heads).contiguous()
        if value.numel() != kv_heads:
            raise ValueError(f"{arg} must hold 1 (per tensor) or {kv_heads} (per KV head) "
                             f"values, not {value.numel()}")
        return value.reshape(kv_heads).contiguous()

    def run(self, q, kv_cache, *, out=None, lse=None, return_lse=False, sinks=None,
            k_scale=None, v_scale=None, scale=None):
        """Attention of q [batch, num_qo_heads, head_dim] over the planned step's cache:
        kv_cache is (k_cache, v_cache) or one combined tensor (see _split_cache). out (and lse,
        float32 [batch, heads], with return_lse) are written in place when given. fp8 caches take
        k_scale and v_scale (a float, or a tensor of 1 or kv_heads values; default 1). scale
        defaults to 1 / sqrt(head_dim). Returns out, or (out, lse) with return_lse."""
        plan = self._plan
        if plan is None:
            raise RuntimeError("run: call plan() first")
        k_cache, v_cache = self._split_cache(kv_cache)
        if not isinstance(q, torch.Tensor) or q.dim() != 3 or q.size(0) != self._batch:
            raise ValueError(f"q must be [batch, heads, head_dim] with the {self._batch} "
                             f"sequences plan() was given; got "
                             f"{tuple(q.shape) if isinstance(q, torch.Tensor) else type(q)}")
        if out is None:
            out = torch.empty((q.size(0), plan.heads, plan.depth),
                              dtype=torch_dtype(plan.out_dtype), device=q.device)
        if return_lse and lse is None:
            lse = torch.empty((q.size(0), plan.heads), dtype=torch.float32, device=q.device)
        if plan.is_fp8:
            k_scale = self._scale(k_scale, "k_scale", q)
            v_scale = self._scale(v_scale, "v_scale", q)
        ops.run(plan.handle, q, k_cache, v_cache, self.seq_lens, self.page_table, sinks,
                k_scale, v_scale, 0.0 if scale is None else float(scale), self._soft_cap, 0, 0,
                None, None, self.workspace, out, lse)
        return (out, lse) if return_lse else out
