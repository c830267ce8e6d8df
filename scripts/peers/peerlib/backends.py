"""The peers: each decode path that serving engines run, as one class. A peer says which cache
layout it reads (`layout`), which problems it cannot compute and why (`why_not`, pure, so the
tests and --dry-run need no torch), and builds a call that computes one step on copy i of the
inputs (`prepare`). Every K/V cache is a pool of pages in HND order ([pages, kv_heads, page, d],
the order FlashInfer and SDPA read natively); a contiguous cache is the same memory with one page
per sequence, [batch, kv_heads, keys, d]. mha-tune's own caches are NHD ([.., keys, kv_heads, d]):
both stream whole 256-byte (d128) key rows, and the bytes a step must read are the same.
"""
import itertools

from .suite import is_fp8, is_paged, is_ragged, token_counts

FLASHINFER_VERSION_TRIED = "0.5.3"
XQA_PAGE_SIZES = (16, 32, 64, 128)
TOLERANCE = 2e-2  # rel L2 against the fp32 reference, bf16/fp16 outputs


class Layout:
    """How a peer wants the cache: pages of `page_size` keys (0: one page per sequence), shuffled
    over the pool or in order."""

    def __init__(self, page_size, shuffled):
        self.page_size, self.shuffled = page_size, shuffled

    def describe(self, p):
        if self.page_size == 0:
            return "contiguous [b, kv, n, d]"
        return f"pages of {self.page_size}, {'shuffled' if self.shuffled else 'in order'}"


def problem_layout(p):
    """The layout the problem names: mha-tune's contiguous cache, or its shuffled pages."""
    return Layout(p["page_size"], True) if is_paged(p) else Layout(0, False)


class Peer:
    name = ""             # the report's kernel name is "peer_" + name
    package = "torch"     # what must be importable
    site = ""             # a folder put first on the worker's PYTHONPATH (a second FlashInfer)
    query_tokens = False  # whether it computes steps of several query tokens per sequence
    ragged_tokens = False  # whether those may differ per sequence (cu_seqlens_q)

    def layout(self, p):
        return problem_layout(p)

    def why_not(self, p):
        return None

    def tolerance(self, p):
        """The rel L2 error below which the peer's output counts as correct."""
        return TOLERANCE

    def prepare(self, torch, p, data):
        raise NotImplementedError


# ---------------------------------------------------------------- PyTorch

class SdpaPeer(Peer):
    """PyTorch scaled_dot_product_attention with one backend forced (FlashAttention-2 or cuDNN)."""
    BACKENDS = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION"}

    def __init__(self, backend):
        self.backend = backend
        self.name = f"torch_sdpa_{backend}"

    def why_not(self, p):
        if is_paged(p):
            return "SDPA takes dense K/V only, no page table"
        if is_ragged(p):
            return "SDPA takes no per-sequence lengths (the FA2 backend refuses attention masks)"
        if p["has_sink"]:
            return "SDPA has no attention-sink term"
        if p["mask"] == "window":
            return "SDPA has no sliding window (the FA2 backend refuses attention masks)"
        if is_fp8(p):
            return "SDPA takes no fp8 K/V cache with scales"
        if p["soft_cap"] > 0:
            return "SDPA has no logit soft-capping"
        return None

    def prepare(self, torch, p, data):
        import inspect
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
        kind = getattr(SDPBackend, self.BACKENDS[self.backend])
        b, h, kv, d, n = p["batch"], p["heads"], p["kv_heads"], p["depth"], p["keys"]
        group = h // kv
        qs = [q.view(b, h, 1, d) for q in data.q]
        ks = [k.view(b, kv, n, d) for k in data.k]
        vs = [v.view(b, kv, n, d) for v in data.v]
        try:
            has_gqa = "enable_gqa" in inspect.signature(F.scaled_dot_product_attention).parameters
        except (TypeError, ValueError):
            has_gqa = "enable_gqa" in (F.scaled_dot_product_attention.__doc__ or "")
        modes = ["plain"] if group == 1 else (["enable_gqa", "expand"] if has_gqa else ["expand"])
        refusals = []
        for mode in modes:
            mk, mv, note = ks, vs, ""
            if mode == "expand":  # expanded before timing, so the expansion is not timed
                mk = [k.repeat_interleave(group, dim=1) for k in ks]
                mv = [v.repeat_interleave(group, dim=1) for v in vs]
                note = (f"K/V heads expanded {group}x with repeat_interleave before timing; the "
                        "kernel reads the expanded K/V, bytes count the unexpanded K/V")
            elif mode == "enable_gqa":
                note = "enable_gqa=True"
            extra = {"enable_gqa": True} if mode == "enable_gqa" else {}

            def call(i, mk=mk, mv=mv, extra=extra):
                with sdpa_kernel([kind]):
                    out = F.scaled_dot_product_attention(qs[i], mk[i], mv[i], scale=p["scale"],
                                                         **extra)
                return out.view(b, h, d)
            try:
                call(0)
                torch.cuda.synchronize()
            except RuntimeError as e:
                if "No available kernel" not in str(e):
                    raise
                refusals.append(f"{mode}: {str(e).strip().splitlines()[0][:200]}")
                continue
            return call, note
        raise NotSupported(" | ".join(refusals))


class FlexPeer(Peer):
    """torch.nn.attention.flex_attention under torch.compile, GQA through enable_gqa; lengths, the
    window and a step's token masks (causal from each token's position, a tree's words) as a block
    mask, so fully hidden key blocks are skipped; the soft cap as a score_mod (flex hands it the
    scaled score). Several tokens run as [batch, heads, q_len, d] queries."""
    name = "torch_flex"
    query_tokens = True

    def why_not(self, p):
        if is_paged(p):
            return ("flex_attention reads dense K/V; paging exists only as the experimental, "
                    "non-public torch.nn.attention.experimental._paged_attention")
        if p["has_sink"]:
            return "flex_attention's score_mod cannot add a sink term to the softmax denominator"
        if is_fp8(p):
            return "flex_attention takes no fp8 K/V cache with scales (q, k and v share a dtype)"
        return None

    def prepare(self, torch, p, data):
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        b, h, kv, d, n = p["batch"], p["heads"], p["kv_heads"], p["depth"], p["keys"]
        q_len, mask = p["q_len"], p["mask"]
        lengths, window = data.lengths, p["window"] if mask == "window" else 0
        words = data.words_t.view(b, q_len)  # a uniform step: q_len words a sequence
        # [batch * q_len, h, d] token-major -> [batch, h, q_len, d], copied once before timing.
        qs = [q.view(b, q_len, h, d).transpose(1, 2).contiguous() for q in data.q]
        ks = [k.view(b, kv, n, d) for k in data.k]
        vs = [v.view(b, kv, n, d) for v in data.v]
        block_mask = None
        if is_ragged(p) or window or (q_len > 1 and mask != "null"):
            def mask_mod(bi, hi, qi, ki):
                pos = lengths[bi] - q_len + qi  # the token's position
                seen = ki < lengths[bi]
                if mask == "tree":
                    draft = ki - (lengths[bi] - q_len)
                    bit = (words[bi, qi] >> draft.clamp(min=0)) & 1
                    return seen & ((draft < 0) | (bit == 1))
                if mask != "null":
                    seen = seen & (ki <= pos)
                if window:
                    seen = seen & (ki > pos - window)
                return seen
            block_mask = create_block_mask(mask_mod, B=b, H=None, Q_LEN=q_len, KV_LEN=n,
                                           device="cuda")
        score_mod, cap = None, p["soft_cap"]
        if cap > 0:
            def score_mod(score, bi, hi, qi, ki):
                return torch.tanh(score / cap) * cap
        # Each problem is a new shape, so one worker recompiles per problem; past dynamo's
        # recompile limit (8) a compiled function silently runs eagerly, unfused.
        import torch._dynamo
        for limit in ("cache_size_limit", "recompile_limit"):
            if hasattr(torch._dynamo.config, limit):
                setattr(torch._dynamo.config, limit, 256)
        compiled = torch.compile(flex_attention, dynamic=False)

        def call(i):  # [batch, h, q_len, d], returned as the [batch, q_len, h, d] view
            return compiled(qs[i], ks[i], vs[i], score_mod=score_mod, block_mask=block_mask,
                            scale=p["scale"], enable_gqa=kv != h).transpose(1, 2)
        return call, ("torch.compile(flex_attention)" + (", block mask" if block_mask else "")
                      + (", soft cap as score_mod" if score_mod else ""))


# ---------------------------------------------------------------- FlashInfer

def _fi_dtype(torch, p, key="dtype"):
    """The torch dtype of q (key "dtype") or of the K/V cache (key "kv_dtype")."""
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "e4m3": torch.float8_e4m3fn,
            "e5m2": torch.float8_e5m2}[p[key]]


def _fi_decode_workspace_bytes(p, sm_count):
    """The float workspace FlashInfer's decode wrapper needs. With tensor cores it plans the step
    as a prefill, and with CUDA graphs it reserves split-K scratch for the largest grid: heads x
    (2 blocks per SM) x cta_tile_q (the group rounded up to 16..128) x head_dim floats. MQA (64/1,
    d64) needs 276 MB there; the 128 MB of FlashInfer's examples failed ("Buffer overflow when
    allocating memory for batch_prefill_tmp_v")."""
    group = p["heads"] // p["kv_heads"]
    cta_tile_q = min(128, max(16, 1 << (group - 1).bit_length()))
    scratch = p["heads"] * 2 * sm_count * cta_tile_q * (p["depth"] + 1) * 4
    return max(128 << 20, scratch + (16 << 20))


def _fi_pages_and_workspace(torch, p, data):
    """FlashInfer's paged-KV arguments for the case's pages: indptr [batch + 1] into indices (each
    sequence's pages in order), the keys in each last page, and a workspace for its split."""
    ps, counts = data.page_size, data.page_counts
    indptr = torch.tensor([0, *itertools.accumulate(counts)], dtype=torch.int32, device="cuda")
    indices = torch.cat([data.table[i, :c] for i, c in enumerate(counts)]).contiguous()
    last = torch.tensor([n - (c - 1) * ps for n, c in zip(p["lengths"], counts)],
                        dtype=torch.int32, device="cuda")
    sm_count = torch.cuda.get_device_properties(0).multi_processor_count
    workspace = torch.zeros(_fi_decode_workspace_bytes(p, sm_count), dtype=torch.uint8,
                            device="cuda")
    return indptr, indices, last, workspace


def _outputs(torch, p):
    """Two [tokens, heads, d] outputs that consecutive steps alternate between."""
    return [torch.empty(sum(token_counts(p)), p["heads"], p["depth"],
                        dtype=_fi_dtype(torch, p), device="cuda") for _ in range(2)]


class FlashInferPagedPeer(Peer):
    """FlashInfer's paged APIs split a sequence's keys at page granularity, so one page per
    sequence would run a batch-1 step on a handful of blocks (measured on the H200: 197 us at 2,048
    keys against 34 us with pages). A contiguous problem is given their densest fast layout
    instead: the cache as one pool of 128-key pages in order. `api07`: the peer runs a FlashInfer
    of 0.7's API (peerlib/flashinfer_sites.py), whose decode paths take more than 0.5.3's."""
    package = "flashinfer"
    api07 = False

    def layout(self, p):
        return Layout(128, False) if not is_paged(p) else problem_layout(p)


# The group sizes FlashInfer's CUDA-core (no tensor cores) batch decode compiles (its
# DISPATCH_GQA_GROUP_SIZE in include/flashinfer/utils.cuh, read from each wheel): any other
# raises "Unsupported group_size" at run (groups 5 and 7 did on an H200, in both versions).
CUDA_CORE_GROUPS = {False: (1, 2, 3, 4, 8), True: (1, 2, 3, 4, 6, 8, 16)}  # by api07: 0.5.3, 0.7


class FlashInferWrapperPeer(FlashInferPagedPeer):
    """FlashInfer's BatchDecodeWithPagedKVCacheWrapper (FA2 backend), planned once outside the
    timed region with use_cuda_graph=True; with or without tensor cores. An fp8 cache is planned
    with kv_data_type e4m3/e5m2 and run with k_scale and v_scale: 0.5.3's run() folds k_scale into
    sm_scale and applies v_scale as a separate `out *= v_scale` after the kernel (timed with it,
    as a serving engine runs it). The soft cap is plan(logits_soft_cap=...), applied to the
    scaled score."""

    def __init__(self, tensor_cores, backend=None):
        self.tensor_cores, self.backend = tensor_cores, backend  # None: the wrapper's default
        self.name = ("flashinfer_tc" if tensor_cores else "flashinfer_fa2") + (
            f"_{backend}" if backend else "")

    def why_not(self, p):
        group, groups = p["heads"] // p["kv_heads"], CUDA_CORE_GROUPS[self.api07]
        if not self.tensor_cores and group not in groups:
            return (f"FlashInfer's CUDA-core decode dispatches groups of "
                    f"{', '.join(map(str, groups))} only (group {group}: 'Unsupported "
                    f"group_size'); its tensor-core path takes it")
        if p["has_sink"] and not self.api07:
            return ("FlashInfer 0.5.3's FA2 decode kernels take no sinks (run(sinks=...) reaches "
                    "only the trtllm-gen backend, which is sm100-only)")
        if is_fp8(p) and p["kv_scale"] == "head":
            return ("FlashInfer's decode takes one scale per tensor (run's k_scale and v_scale are "
                    "floats)")
        return None

    def prepare(self, torch, p, data):
        import flashinfer
        ps = data.page_size
        indptr, indices, last, workspace = _fi_pages_and_workspace(torch, p, data)
        extra = {"backend": self.backend} if self.backend else {}
        if self.backend == "fa3" and torch.cuda.get_device_capability(0)[0] != 9:
            raise NotSupported("FlashInfer's fa3 backend runs on sm90 (Hopper) only")
        wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
            workspace, "HND", use_cuda_graph=True, use_tensor_cores=self.tensor_cores,
            paged_kv_indptr_buffer=torch.empty_like(indptr),
            paged_kv_indices_buffer=torch.empty_like(indices),
            paged_kv_last_page_len_buffer=torch.empty_like(last), **extra)
        window_left = p["window"] - 1 if p["mask"] == "window" else -1
        wrapper.plan(indptr, indices, last, p["heads"], p["kv_heads"], p["depth"], ps,
                     window_left=window_left, logits_soft_cap=p["soft_cap"],
                     q_data_type=_fi_dtype(torch, p), kv_data_type=_fi_dtype(torch, p, "kv_dtype"),
                     sm_scale=p["scale"])
        outs = _outputs(torch, p)

        sinks = {"sinks": data.sinks} if data.sinks is not None else {}

        def call(i):  # k_scale and v_scale are None (no scaling) for a 16-bit cache
            out = outs[i % 2]
            wrapper.run(data.q[i], (data.k[i], data.v[i]), k_scale=data.k_scale,
                        v_scale=data.v_scale, out=out, **sinks)
            return out
        call.keep = (wrapper, workspace, indptr, indices, last)
        note = f"{'tensor cores' if self.tensor_cores else 'CUDA cores'}, planned once"
        resolved = getattr(wrapper, "resolved_backend", None) or getattr(wrapper, "_backend", None)
        if resolved:
            note += f", backend {resolved}" + (" (asked for)" if self.backend else "")
        if is_fp8(p):
            note += ", k_scale folded into sm_scale, v_scale as a separate out *= v_scale"
        return call, note


class FlashInferPrefillPeer(FlashInferPagedPeer):
    """FlashInfer's BatchPrefillWithPagedKVCacheWrapper on its fa2 or fa3 backend: the path
    FlashInfer's own wrappers and vLLM's FlashInfer backend take for a step of several query
    tokens per sequence (a speculative verify), and for one token too. Queries as [tokens, heads,
    d] with qo_indptr (cu_seqlens_q: ragged steps too); causal=True aligns each token's range to
    the end of the cache (token t of m sees keys up to n - m + t), a window adds window_left, a
    tree is a custom mask ([m, n] booleans per sequence, which plan packs). Planned once outside
    the timed region, without use_cuda_graph, so plan chooses its split for this very batch (the
    capture replays what it chose). An fp8 cache is planned with its kv_data_type and run with
    k_scale and v_scale."""
    query_tokens = ragged_tokens = True

    def __init__(self, backend):
        self.backend = backend
        self.name = f"flashinfer_prefill_{backend}"

    def why_not(self, p):
        if p["has_sink"]:
            return "the prefill wrapper's sinks are not wired into this harness"
        if is_fp8(p) and p["kv_scale"] == "head":
            return "FlashInfer's prefill run takes one k_scale and one v_scale per tensor"
        if self.backend == "fa3" and p["mask"] == "tree":
            return "FlashInfer's fa3 prefill backend has no custom mask (a tree needs one)"
        return None

    def prepare(self, torch, p, data):
        import flashinfer
        if self.backend == "fa3" and torch.cuda.get_device_capability(0)[0] != 9:
            raise NotSupported("FlashInfer's fa3 backend runs on sm90 (Hopper) only")
        b, ps, qo_indptr = p["batch"], data.page_size, data.starts_t
        indptr, indices, last, workspace = _fi_pages_and_workspace(torch, p, data)
        wrapper = flashinfer.BatchPrefillWithPagedKVCacheWrapper(workspace, "HND",
                                                                 backend=self.backend)
        mask = {}
        if p["mask"] == "tree":
            mask["custom_mask"] = torch.cat([data.visible(torch, p, seq).reshape(-1)
                                             for seq in range(b)])
        else:
            mask["causal"] = p["mask"] in ("causal", "window")
        wrapper.plan(qo_indptr, indptr, indices, last, p["heads"], p["kv_heads"], p["depth"], ps,
                     window_left=p["window"] - 1 if p["mask"] == "window" else -1,
                     logits_soft_cap=p["soft_cap"], q_data_type=_fi_dtype(torch, p),
                     kv_data_type=_fi_dtype(torch, p, "kv_dtype"), sm_scale=p["scale"], **mask)
        outs = _outputs(torch, p)

        def call(i):  # k_scale and v_scale are None (no scaling) for a 16-bit cache
            out = outs[i % 2]
            wrapper.run(data.q[i], (data.k[i], data.v[i]), k_scale=data.k_scale,
                        v_scale=data.v_scale, out=out)
            return out
        call.keep = (wrapper, workspace, qo_indptr, indptr, indices, last, mask)
        what = "custom mask" if "custom_mask" in mask else f"causal={mask['causal']}"
        return call, f"batch prefill wrapper, backend {self.backend}, {what}, planned once"


class FlashInferXqaPeer(FlashInferPagedPeer):
    """FlashInfer's XQA backend (TensorRT-LLM's decode kernel; FlashInfer's default decode backend
    on sm90): xqa_batch_decode_with_kv_cache. It reads pages of 16..128 keys only. An e4m3 cache's
    scales are folded into bmm1_scale (sm_scale * k_scale) and bmm2_scale (v_scale), as FlashInfer's
    own test_xqa_batch_decode does; on sm90 XQA then runs its fp8 kernel (mha_sm90.cu), which casts
    q and the softmax weights to e4m3 as well (MathElem = CacheElem), so its error is larger.
    Several query tokens (0.7's API) run as XQA's speculative-decoding mode: q_len_per_req and the
    draft mask, one 32-bit word per token (suite.token_words: the causal chain or the tree) passed
    as the uint16 pairs it takes; a ragged step adds q_cu_seq_lens (q_len_per_req is then the
    most tokens, the mask one row per token)."""
    name = "flashinfer_xqa"
    query_tokens = ragged_tokens = True
    # q, K and P rounded to e4m3, simulated in NumPy on this suite's e4m3 data (8 KV heads, 64 to
    # 32768 keys): rel L2 0.03 to 0.10. FlashInfer's own XQA test allows 0.1 per element. A missing
    # or wrong scale errs by O(1), so this still fails a peer that computes something else.
    FP8_TOLERANCE = 0.15

    def why_not(self, p):
        if is_paged(p) and p["page_size"] not in XQA_PAGE_SIZES:
            return f"XQA pages hold 16, 32, 64 or 128 keys, not {p['page_size']}"
        if p["depth"] % 16:
            return f"XQA head_dim must be a multiple of 16, not {p['depth']}"
        if p["kv_dtype"] == "e5m2":
            return "XQA's fp8 cache is e4m3 only (FlashInfer 0.5.3 builds e5m2 as a 16-bit cache)"
        if is_fp8(p) and p["kv_scale"] == "head":
            return "XQA takes one K/V scale per tensor (kv_scale is a float or a 1-element tensor)"
        if p["soft_cap"] > 0:
            return "xqa_batch_decode_with_kv_cache has no logit soft-capping argument"
        if p["q_len"] > 1 and not self.api07:
            return ("FlashInfer 0.5.3's xqa_batch_decode_with_kv_cache takes one query token per "
                    "sequence (q_len_per_req and the draft mask came with 0.7's API)")
        if (p["q_len"] > 1 or p["ragged_q_lens"]) and p["mask"] == "null":
            return "XQA's draft tokens see the drafts their mask names; 'null' shows them all"
        if p["ragged_q_lens"] and p["q_len"] < 2:
            return "XQA's ragged queries (q_cu_seq_lens) need q_len_per_req > 1 as their most"
        return None

    def tolerance(self, p):
        return self.FP8_TOLERANCE if is_fp8(p) else TOLERANCE

    def prepare(self, torch, p, data):
        from flashinfer.decode import xqa_batch_decode_with_kv_cache
        workspace = torch.zeros(256 << 20, dtype=torch.uint8, device="cuda")
        # The API asks for uint32 lengths; an older torch without that dtype passes int32.
        seq_lens = data.lengths.to(getattr(torch, "uint32", torch.int32))
        window_left = p["window"] - 1 if p["mask"] == "window" else -1
        max_len = data.max_keys
        outs = _outputs(torch, p)
        k_scale, v_scale = (data.k_scale, data.v_scale) if is_fp8(p) else (1.0, 1.0)
        spec = {}
        if p["q_len"] > 1 or p["ragged_q_lens"]:
            # The int32 words as uint16 halves: [batch, q_len, 2], or a ragged step's [tokens, 2]
            # packed by the same offsets as q.
            halves = data.words_t.contiguous().view(torch.uint16)
            spec = {"q_len_per_req": p["q_len"]}
            if p["ragged_q_lens"]:
                spec.update(mask=halves.view(-1, 2), q_cu_seq_lens=data.starts_t)
            else:
                spec["mask"] = halves.view(p["batch"], p["q_len"], 2)

        def call(i):
            out = outs[i % 2]
            xqa_batch_decode_with_kv_cache(
                data.q[i], (data.k[i], data.v[i]), workspace, data.table, seq_lens, max_len,
                bmm1_scale=p["scale"] * k_scale, bmm2_scale=v_scale, window_left=window_left,
                out=out, sinks=data.sinks, kv_layout="HND", **spec)
            return out
        call.keep = (workspace, seq_lens, spec)
        note = "XQA" + (", e4m3 cache (on sm90 q and P in e4m3 too)" if is_fp8(p) else "")
        if spec:
            note += f", speculative mode: q_len_per_req {p['q_len']}, draft mask words"
        if "q_cu_seq_lens" in spec:
            note += ", ragged (q_cu_seq_lens)"
        return call, note


class FlashInferCudnnPeer(FlashInferPagedPeer):
    """cuDNN's paged decode (the cuDNN frontend's SDPA with page tables and per-sequence lengths)
    through FlashInfer's cudnn_batch_decode_with_kv_cache. (With one page per sequence, cuDNN
    proposed no engine for a ragged batch of 9,000 keys at most.)"""
    name = "flashinfer_cudnn"

    def why_not(self, p):
        if p["has_sink"] and not self.api07:
            return "cudnn_batch_decode_with_kv_cache has no sink argument"
        if p["mask"] == "window" and not self.api07:
            return "cudnn_batch_decode_with_kv_cache has no sliding-window argument"
        if p["dtype"] != "bf16" and not self.api07:
            return "FlashInfer 0.5.3's cuDNN decode graph is built for bf16 only"
        if is_fp8(p):
            return ("cudnn_batch_decode_with_kv_cache builds cuDNN's 16-bit SDPA graph, with no "
                    "K/V dequantisation scales")
        if p["soft_cap"] > 0:
            return "cudnn_batch_decode_with_kv_cache has no logit soft-capping argument"
        return None

    def prepare(self, torch, p, data):
        from flashinfer.cudnn import cudnn_batch_decode_with_kv_cache
        workspace = torch.zeros(128 << 20, dtype=torch.uint8, device="cuda")
        lens = data.lengths.view(p["batch"], 1, 1, 1).contiguous()
        max_len = data.max_keys
        outs = _outputs(torch, p)

        extra = {}
        if self.api07:  # 0.7 takes the window and sinks; 0.5.3's signature has neither
            extra = {"window_left": p["window"] - 1 if p["mask"] == "window" else -1}
            if data.sinks is not None:
                extra["sinks"] = data.sinks

        def call(i):
            out = outs[i % 2]
            cudnn_batch_decode_with_kv_cache(
                data.q[i], data.k[i], data.v[i], p["scale"], workspace, max_sequence_kv=max_len,
                actual_seq_lens_kv=lens, block_tables=data.table, is_cuda_graph_compatible=True,
                out=out, **extra)
            return out
        call.keep = (workspace, lens)
        return call, "cuDNN paged SDPA"


class FlashInferTrtllmPeer(FlashInferXqaPeer):
    """FlashInfer's trtllm_batch_decode_with_kv_cache with backend="trtllm-gen" forced (with
    "auto" it runs XQA on sm90, which flashinfer_xqa already times): TensorRT-LLM's generated
    decode kernels, shipped as cubins for sm100/sm103, so on other GPUs the row says so. Takes
    what XQA takes, with its scales folded the same way; one query token per sequence here."""
    name = "flashinfer_trtllm"
    query_tokens = ragged_tokens = False

    def prepare(self, torch, p, data):
        major, minor = torch.cuda.get_device_capability(0)
        if major != 10:
            raise NotSupported(f"trtllm-gen decode kernels are built for sm100/sm103 only, not "
                               f"sm{major}{minor}")
        from flashinfer.decode import trtllm_batch_decode_with_kv_cache
        workspace = torch.zeros(256 << 20, dtype=torch.uint8, device="cuda")
        window_left = p["window"] - 1 if p["mask"] == "window" else -1
        outs = _outputs(torch, p)
        k_scale, v_scale = (data.k_scale, data.v_scale) if is_fp8(p) else (1.0, 1.0)
        sinks = [data.sinks] if data.sinks is not None else None

        def call(i):
            out = outs[i % 2]
            trtllm_batch_decode_with_kv_cache(
                data.q[i], (data.k[i], data.v[i]), workspace, data.table, data.lengths,
                data.max_keys, bmm1_scale=p["scale"] * k_scale, bmm2_scale=v_scale,
                window_left=window_left, out=out, sinks=sinks, kv_layout="HND",
                backend="trtllm-gen")
            return out
        call.keep = (workspace,)
        return call, "trtllm-gen"


class MhaTunePeer(Peer):
    """mha-tune through its PyTorch op (python/, `import mha_tune`): what an engine calling the
    library from Python gets, timed by the same harness as every other peer. Planned once outside
    the timed region, from the run-time defaults (the kernel and split the library chooses for the
    shape in the installed build). The peers' caches are HND ([pages, kv_heads, page, d]; a
    contiguous one is one page per sequence): the op reads them as strided views of the NHD
    kernels' layout, with no copy."""
    name = "mha_tune"
    package = "mha_tune"

    def prepare(self, torch, p, data):
        import mha_tune
        dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
                  "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
        paged = is_paged(p)
        wrapper = mha_tune.BatchDecode(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))
        try:
            self._plan(wrapper, p, data, dtypes, paged)
        except NotImplementedError as e:  # no kernel of the installed build computes it
            raise NotSupported(str(e)) from None
        # [pages, kv, page, d] as the NHD view [pages, page, kv, d]; a contiguous cache's "page"
        # is its sequence.
        k = [x.permute(0, 2, 1, 3) for x in data.k]
        v = [x.permute(0, 2, 1, 3) for x in data.v]
        outs = [torch.empty(p["batch"], p["heads"], p["depth"], dtype=dtypes[p["out_dtype"]],
                            device="cuda") for _ in range(2)]

        def call(i):
            out = outs[i % 2]
            wrapper.run(data.q[i], (k[i], v[i]), out=out, sinks=data.sinks, k_scale=data.k_scale,
                        v_scale=data.v_scale, scale=p["scale"])
            return out
        call.keep = (wrapper, k, v)
        info = wrapper.plan_info
        return call, f"PyTorch op, planned once: {info['kernel']}, split {info['split']}"

    @staticmethod
    def _plan(wrapper, p, data, dtypes, paged):
        wrapper.plan(p["lengths"], data.table if paged else None,
                     num_qo_heads=p["heads"], num_kv_heads=p["kv_heads"], head_dim=p["depth"],
                     page_size=data.page_size if paged else 0, q_dtype=dtypes[p["dtype"]],
                     kv_dtype=dtypes[p["kv_dtype"]], out_dtype=dtypes[p["out_dtype"]],
                     mask=p["mask"], window=p["window"], chunk=p.get("chunk", 0),
                     has_sink=p["has_sink"], soft_cap=p["soft_cap"])


class NotSupported(Exception):
    """A peer found at run time that it cannot compute the problem (e.g. SDPA refusing)."""


# FlashAttention-3's peers live in their own module, which imports this one's classes: imported
# here, at the end, where every name it takes is defined.
from . import fa3  # noqa: E402

PEERS = {peer.name: peer for peer in (
    SdpaPeer("flash"), SdpaPeer("cudnn"), FlexPeer(), FlashInferWrapperPeer(False),
    FlashInferWrapperPeer(True), FlashInferPrefillPeer("fa2"), FlashInferPrefillPeer("fa3"),
    FlashInferXqaPeer(), FlashInferCudnnPeer(), *fa3.PEERS, MhaTunePeer())}
# Short names for --peers.
SHORT = {"flash": "torch_sdpa_flash", "cudnn": "torch_sdpa_cudnn", "flex": "torch_flex",
         "fi_fa2": "flashinfer_fa2", "fi_tc": "flashinfer_tc", "fi_xqa": "flashinfer_xqa",
         "fi_cudnn": "flashinfer_cudnn", "fi_prefill_fa2": "flashinfer_prefill_fa2",
         "fi_prefill_fa3": "flashinfer_prefill_fa3", "fa3": "fa3", "fa3_best": "fa3_best_split",
         "ours": "mha_tune"}


def resolve(names):
    """'flash,fi_tc' or 'all' -> peer objects; unknown names raise ValueError naming them."""
    if names.strip() == "all":
        return list(PEERS.values())
    out, bad = [], []
    for n in (x.strip() for x in names.split(",")):
        if not n:
            continue
        full = SHORT.get(n, n)
        (out if full in PEERS else bad).append(PEERS.get(full, n))
    if bad or not out:
        raise ValueError(f"--peers: {', '.join(bad) or '(empty)'}: choose from all, "
                         f"{', '.join(SHORT)} (or {', '.join(PEERS)})")
    return out

