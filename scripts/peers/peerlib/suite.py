"""The problems peers.py times, taken verbatim from the plan `mha-tune sweep --config C --dry-run
--json` prints (the binary's own expansion of ranges, length mixes and names, so that peer rows and
mha-tune rows of one suite join on the problem name), and what the peers derive from a problem: the
bytes a step must move, the fp8 cache's scales and the page tables they read. Nothing here parses
a suite: only the binary does. Standard library only (the tests and --dry-run import no torch)."""
import random

# Largest finite value of each fp8 cache format: its scales put 8 sigma there.
FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}


class UsageError(Exception):
    pass


# The keys of a plan problem (src/sweep/sweep_plan.cpp) the peers read. "lengths" is the name's
# lengths part ("" for a uniform batch), "ragged_lengths" every length of a ragged batch ([] for a
# uniform one); the problem's "lengths" here is the list of all its lengths.
PLAN_KEYS = ("name", "batch", "heads", "kv_heads", "depth", "dtype", "out_dtype", "kv_dtype",
             "kv_scale", "soft_cap", "kv", "page_size", "mask", "window", "chunk", "has_sink",
             "sink_mean", "q_std", "scale", "keys", "lengths", "ragged_lengths")
PLAN_USAGE = "mha-tune sweep --config C --dry-run --json > plan.json"


def problems_from_plan(plan, origin):
    """The problems of `mha-tune sweep --dry-run --json` (its parsed output) as the peers take
    them, verbatim: names, shapes, scales and every sequence's length as the binary expanded them
    (ranges, mixes, lists), so the peers time exactly the problems the sweep times."""
    if not isinstance(plan, dict) or not isinstance(plan.get("problems"), list):
        raise UsageError(f"{origin}: not the output of `{PLAN_USAGE}` (no 'problems' list)")
    out, seen = [], set()
    for i, q in enumerate(plan["problems"]):
        if not isinstance(q, dict):
            raise UsageError(f"{origin}: problems[{i}]: expected an object")
        missing = [k for k in PLAN_KEYS if k not in q]
        if missing:
            raise UsageError(f"{origin}: problems[{i}] lacks {', '.join(missing)} (a plan from "
                             "an older mha-tune: write it again)")
        p = {k: q[k] for k in PLAN_KEYS if k not in ("lengths", "ragged_lengths")}
        lengths = q["ragged_lengths"] or [q["keys"]] * q["batch"]
        if len(lengths) != q["batch"]:
            raise UsageError(f"{origin}: problems[{i}] ({q['name']}): {len(lengths)} lengths "
                             f"for a batch of {q['batch']}")
        if min(lengths) < 1 or max(lengths) != q["keys"]:
            raise UsageError(f"{origin}: problems[{i}] ({q['name']}): lengths from "
                             f"{min(lengths)} to {max(lengths)} for keys {q['keys']}")
        if q["name"] in seen:  # rows are matched to problems by name
            raise UsageError(f"{origin}: problems[{i}]: problem name '{q['name']}' appears twice")
        seen.add(q["name"])
        # kv_scale is "" for a 16-bit cache (it has no scales).
        # q_len: plans written before several query tokens had one.
        p.update(lengths=list(lengths), lengths_name=q["lengths"],
                 kv_scale=q["kv_scale"] or "tensor", q_len=q.get("q_len", 1),
                 tree_depth=q.get("tree_depth", 0), ragged_q_lens=list(q.get("ragged_q_lens", [])))
        if p["mask"] == "tree" and not 1 <= p["tree_depth"] <= p["q_len"]:
            raise UsageError(f"{origin}: problems[{i}] ({q['name']}): a tree mask needs "
                             f"tree_depth in 1..q_len ({p['q_len']}), not {p['tree_depth']} "
                             "(a plan from an older mha-tune: write it again)")
        out.append(p)
    if not out:
        raise UsageError(f"{origin}: the plan holds no problem")
    return out


def is_paged(p):
    """Pages in either order (paged: NHD, paged_hnd: HND); the peers read HND for both."""
    return p["kv"] != "contig"


def is_ragged(p):
    return len(set(p["lengths"])) > 1


def is_fp8(p):
    return p["kv_dtype"] in FP8_MAX


def kv_elem_bytes(p):
    return 1.0 if is_fp8(p) else 2.0


def kv_sigmas(p):
    """Standard deviation of the logical K and V values of each KV head: 1 for a 16-bit cache;
    0.5, 1, 2, 4, 0.5, ... for an fp8 one, so that one scale per tensor wastes range on some heads
    (as the C++ problem data draws them)."""
    if not is_fp8(p):
        return [1.0] * p["kv_heads"]
    return [2.0 ** (h % 4 - 1) for h in range(p["kv_heads"])]


# V's values spread this many times wider than K's (problem_data.h kVSigmaFactor), so V's scales
# are this many times K's: a kernel that swapped them fails verification.
V_SIGMA_FACTOR = 3.0


def kv_scales(p):
    """Dequantisation scale of each KV head of an fp8 cache's K (V's: V_SIGMA_FACTOR times it):
    8 sigma maps to the format's largest value, sigma the head's own ("head") or the largest over
    heads ("tensor")."""
    sigmas = kv_sigmas(p)
    top = FP8_MAX[p["kv_dtype"]]
    if p["kv_scale"] == "head":
        return [8.0 * s / top for s in sigmas]
    return [8.0 * max(sigmas) / top] * len(sigmas)


def token_counts(p):
    """Each sequence's query tokens: a ragged step's counts (cu_seqlens_q's differences), else
    q_len each."""
    return list(p["ragged_q_lens"]) or [p["q_len"]] * p["batch"]


def token_starts(p):
    """[batch + 1] offsets of each sequence's first token among the step's (cu_seqlens_q)."""
    starts = [0]
    for count in token_counts(p):
        starts.append(starts[-1] + count)
    return starts


def visible_keys(p, n, tokens=None):
    """Keys a sequence's `tokens` (default q_len) see together in a sequence of n keys
    (masks.cuh: the first token, at n - tokens, starts the range; a window keeps `window` keys up
    to it, chunked the token's chunk; causal and tree keep every key). A sequence without a
    token reads none."""
    tokens = p["q_len"] if tokens is None else tokens
    if tokens == 0:
        return 0
    if p["mask"] == "window":
        return min(n, p["window"] + tokens - 1)
    if p["mask"] == "chunked":
        return n - (n - 1) // p["chunk"] * p["chunk"]
    return n


def step_bytes(p):
    """As problem.cpp step_bytes with partitions 1: visible K and V, q in, output out (a row of
    each per token)."""
    elem, out_elem = 2.0, 4.0 if p["out_dtype"] == "fp32" else 2.0
    counts = token_counts(p)
    keys = sum(visible_keys(p, n, t) for n, t in zip(p["lengths"], counts))
    kv = keys * p["kv_heads"] * p["depth"] * kv_elem_bytes(p) * 2
    return kv + sum(counts) * p["heads"] * p["depth"] * (elem + out_elem)


def draft_tree(q_len, depth, rng):
    """One sequence's draft tree as mask words, one per token, bit j set where the token sees
    draft j (itself and its ancestors), drawn as problems/draft_tree.cpp draws them: a chain of
    `depth` tokens from the root, every later token under a random earlier one with room below
    it. `rng`: a random.Random; the peers' trees have mha-tune's shape, not its exact draws."""
    words, level = [], []
    for t in range(q_len):
        parent = t - 1 if t < depth else -1
        if t >= depth:
            open_ = [u for u in range(t) if level[u] < depth]
            if open_:
                parent = open_[rng.randrange(len(open_))]
        words.append((words[parent] if parent >= 0 else 0) | (1 << t))
        level.append(level[parent] + 1 if parent >= 0 else 1)
    return words


def token_words(p, seed):
    """Per sequence, the mask words of its draft tokens (token_counts of them): the tree's for a
    tree mask (no deeper than its tokens), and the causal chain's (token t sees drafts 0..t)
    otherwise, which is how XQA and FlashInfer's custom masks take a causal step."""
    if p["mask"] == "tree":
        return [draft_tree(t, min(p["tree_depth"], t), random.Random(seed * 1000003 + b))
                for b, t in enumerate(token_counts(p))]
    return [[(2 << i) - 1 for i in range(t)] for t in token_counts(p)]


def page_table(lengths, page_size, seed, shuffle=True):
    """Rows of physical page ids, one row per sequence padded to the longest with page 0, and the
    pool size. Pages are shuffled over the whole pool (as mha-tune's problem_data.cu does) so no
    peer profits from physically contiguous pages."""
    counts = [(n + page_size - 1) // page_size for n in lengths]
    total = sum(counts)
    physical = list(range(total))
    if shuffle:
        random.Random(seed).shuffle(physical)
    rows, at, width = [], 0, max(counts)
    for c in counts:
        rows.append(physical[at:at + c] + [0] * (width - c))
        at += c
    return rows, total


def cache_bytes(p, page_size):
    """K and V bytes of one copy of a cache paged at page_size (page_size = longest: dense)."""
    pages = sum((n + page_size - 1) // page_size for n in p["lengths"])
    return 2.0 * pages * page_size * p["kv_heads"] * p["depth"] * kv_elem_bytes(p)


def group_key(p):
    """Problems that share a peer's compiled kernels (FlashInfer's JIT modules are built per head
    counts, depth, q and cache dtypes, mask, soft-capping on or off and sink; lengths, batch,
    paging, scales and the cap's value are runtime values; XQA's per query length and ragged
    tokens or not), which a worker runs back to back."""
    return (p["heads"], p["kv_heads"], p["depth"], p["dtype"], p["kv_dtype"], p["mask"],
            p["soft_cap"] > 0, p["has_sink"], p["q_len"], bool(p["ragged_q_lens"]))
