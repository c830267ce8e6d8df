"""FlashAttention-3 (flash-attention's hopper/, built by scripts/peers/build_fa3.sh) as a peer: the
decode kernel of vLLM's FLASH_ATTN backend on Hopper, flash_attn_with_kvcache with the cache as
pages (page_table) or one sequence per batch row, per-sequence lengths as cache_seqlens, and the
scheduler metadata (get_scheduler_metadata) planned once outside the timed region, as vLLM does.
Two peers: `fa3`, FA3's own choice of split (num_splits=0, its heuristic, with pack_gqa left to
it too), and `fa3_best_split`, the fastest of SPLITS by a short graph-timed trial of each before
the real timing (the row's reason names the split). FA3 reads caches as [pages, page, kv_heads, d]
(NHD): the peers' HND pools are copied into that layout once, before timing. Its fp8 path takes
q, K and V in e4m3 with per-(sequence, KV head) descales: an e4m3 cache's q is cast to e4m3 once,
outside the timed region (a serving engine quantises q in the step; leaving that out favours FA3),
and its softmax weights are rounded to e4m3 as XQA's are, hence XQA's tolerance. Several query
tokens run as q [batch, q_len, heads, d] with causal=True, which FA3 aligns to the end of the
cache (token t sees keys up to n - q_len + t), as vLLM runs a speculative verify step; a ragged
step runs as q [tokens, heads, d] with cu_seqlens_q and max_seqlen_q. FA3 has no custom mask, so
no tree."""
from .backends import NotSupported, Peer
from .suite import is_fp8, is_paged
from . import timing

SPLITS = (1, 2, 4, 8, 16, 32, 64)
# FA3's head dims; scripts/peers/build_fa3.sh builds 64, 128 and 256 at most
HEAD_DIMS = (64, 96, 128, 192, 256)
FP8_TOLERANCE = 0.15  # as flashinfer_xqa's on sm90: q and P in e4m3 (backends.py)
TRIAL_BUDGET_S = 0.05  # per split tried: enough for a median to a few percent


def build_refusal(torch, p, config):
    """Why this build cannot compute p (a FLASHATTENTION_DISABLE_* switch it was built with)."""
    flags = (config or {}).get("build_flags", {})
    off = [k for k, on in flags.items() if on]
    checks = [(f"FLASHATTENTION_DISABLE_HDIM{p['depth']}", f"head dim {p['depth']}"),
              ("FLASHATTENTION_DISABLE_FP8" if is_fp8(p) else "", "an e4m3 cache"),
              ("FLASHATTENTION_DISABLE_FP16" if p["dtype"] == "fp16" else "", "fp16"),
              ("FLASHATTENTION_DISABLE_SOFTCAP" if p["soft_cap"] > 0 else "", "a soft cap"),
              ("FLASHATTENTION_DISABLE_LOCAL" if p["mask"] == "window" else "", "a window"),
              ("FLASHATTENTION_DISABLE_PAGEDKV" if is_paged(p) else "", "a paged cache")]
    for flag, what in checks:
        if flag and flag in off:
            return f"this FlashAttention-3 build has no kernels for {what} ({flag})"
    return None


class Fa3Peer(Peer):
    package = "flash_attn_3"
    query_tokens = ragged_tokens = True

    def __init__(self, best_split):
        self.best_split = best_split
        self.name = "fa3_best_split" if best_split else "fa3"

    def why_not(self, p):
        if p["has_sink"]:
            return "flash_attn_with_kvcache has no attention-sink term"
        if p["depth"] not in HEAD_DIMS:
            return f"FlashAttention-3 head dims are {', '.join(map(str, HEAD_DIMS))}, not {p['depth']}"
        if p["kv_dtype"] == "e5m2":
            return "FlashAttention-3's fp8 is e4m3 only"
        if p["mask"] == "tree":
            return "flash_attn_with_kvcache takes causal or local masks only, no draft tree"
        return None

    def tolerance(self, p):
        return FP8_TOLERANCE if is_fp8(p) else super().tolerance(p)

    def prepare(self, torch, p, data):
        import flash_attn_interface as fa
        try:
            from flash_attn_config import CONFIG
        except ImportError:
            CONFIG = {}
        why = build_refusal(torch, p, CONFIG)
        if why:
            raise NotSupported(why)
        if torch.cuda.get_device_capability(0)[0] != 9:
            raise NotSupported("FlashAttention-3's hopper/ kernels run on sm90 only")
        b, h, kv, d, q_len = p["batch"], p["heads"], p["kv_heads"], p["depth"], p["q_len"]
        paged = is_paged(p)
        # [pages, kv, page, d] -> [pages, page, kv, d]; a contiguous cache: [batch, keys, kv, d].
        k = [x.permute(0, 2, 1, 3).contiguous() for x in data.k]
        v = [x.permute(0, 2, 1, 3).contiguous() for x in data.v]
        ragged = bool(p["ragged_q_lens"])
        # Uniform: [batch, q_len, heads, d]; ragged: the packed [tokens, heads, d] with its offsets.
        qs = [q if ragged else q.view(b, q_len, h, d) for q in data.q]
        varlen = {"cu_seqlens_q": data.starts_t, "max_seqlen_q": q_len} if ragged else {}
        descales = {}
        qkv_dtype = qs[0].dtype
        if is_fp8(p):
            qkv_dtype = torch.float8_e4m3fn
            qs = [q.to(qkv_dtype) for q in qs]

            def per_row(scale):  # a float or a [kv] tensor -> [batch, kv] float32
                t = torch.as_tensor(scale, dtype=torch.float32, device="cuda").reshape(-1)
                return t.expand(kv).reshape(1, kv).expand(b, kv).contiguous()
            descales = {"q_descale": per_row(1.0), "k_descale": per_row(data.k_scale),
                        "v_descale": per_row(data.v_scale)}
        seqlens = data.lengths.contiguous()
        page_table = data.table if paged else None
        window = (p["window"] - 1, 0) if p["mask"] == "window" else (-1, -1)
        # One token a sequence: causal is null.
        causal = (q_len > 1 or ragged) and p["mask"] in ("causal", "window")
        cap = float(p["soft_cap"])

        def make_call(splits):
            meta = fa.get_scheduler_metadata(
                b, q_len, data.max_keys, h, kv, d, seqlens, qkv_dtype=qkv_dtype,
                page_size=data.page_size if paged else None, causal=causal, window_size=window,
                has_softcap=cap > 0, num_splits=splits,
                cu_seqlens_q=varlen.get("cu_seqlens_q"))

            def call(i):
                out = fa.flash_attn_with_kvcache(
                    qs[i], k[i], v[i], cache_seqlens=seqlens, page_table=page_table,
                    softmax_scale=p["scale"], causal=causal, window_size=window, softcap=cap,
                    scheduler_metadata=meta, num_splits=splits, **varlen, **descales)
                return out.view(-1, h, d)
            call.keep = (meta, k, v, qs, seqlens, descales)
            return call

        layout = "NHD pages" if paged else "[batch, keys, kv_heads, d]"
        note = f"flash_attn_with_kvcache, {layout} (copied from HND once), scheduler metadata"
        if q_len > 1 or ragged:
            note += f", q_len {q_len}{' ragged (cu_seqlens_q)' if ragged else ''}, causal={causal}"
        if is_fp8(p):
            note += ", q cast to e4m3 outside the timed region, K/V descales per KV head"
        if not self.best_split:
            return make_call(0), note + ", num_splits=0 (FA3's heuristic)"
        trials = {}
        for splits in SPLITS:
            call = make_call(splits)
            try:
                samples = timing.time_graph(torch, call, len(data.q), TRIAL_BUDGET_S, 0.02)
            except Exception as e:  # a split FA3 refuses for this shape is skipped, not fatal
                torch.cuda.synchronize()
                trials[splits] = f"{type(e).__name__}"
                continue
            trials[splits] = timing.median(samples)
        timed = {s: t for s, t in trials.items() if isinstance(t, float)}
        if not timed:
            raise NotSupported(f"no num_splits of {SPLITS} ran: {trials}")
        best = min(timed, key=timed.get)
        tried = ", ".join(f"{s}: {t:.2f}" if isinstance(t, float) else f"{s}: {t}"
                          for s, t in trials.items())
        return make_call(best), note + f", num_splits={best}, the fastest of trials (us) {tried}"


PEERS = (Fa3Peer(False), Fa3Peer(True))
