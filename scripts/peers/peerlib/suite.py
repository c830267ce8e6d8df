"""Peer problems as mha-tune writes them: inline specs and suite files with mha-tune's own keys,
expanded and named exactly as src/problems/problem.cpp does, so that peer rows and mha-tune rows of one
suite join on the problem name. Also the bytes a step must move and the page tables peers read.
Standard library only (the tests and --dry-run import no torch)."""
import json
import math
import random

# The keys of src/problems/problem.cpp's set_field that change what a peer computes or how it is named,
# plus short aliases for the common ones.
ALIASES = {"b": "batch", "h": "heads", "n": "keys", "d": "depth"}
KEYS = ("name", "batch", "heads", "kv_heads", "depth", "dtype", "out_dtype", "kv_dtype",
        "kv_scale", "kv", "page_size", "mask", "window", "chunk", "soft_cap", "sink", "sink_mean",
        "q_std", "scale", "keys", "lengths", "partitions", "plan_blocks_per_sm", "plan_min_chunk",
        "mix", "mix_seed")
CHOICES = {"dtype": ("bf16", "fp16"), "out_dtype": ("bf16", "fp16", "fp32"),
           "kv_dtype": ("bf16", "fp16", "e4m3", "e5m2"), "kv_scale": ("tensor", "head"),
           "kv": ("contig", "paged", "paged_hnd"), "mask": ("null", "causal", "window", "chunked"),
           "mix": ("uniform", "lognormal", "one_long", "many_long")}
# Largest finite value of each fp8 cache format: its scales put 8 sigma there.
FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}
MAX_KEYS = 1 << 24  # as src/problems/problem.cpp
DEPTHS = (64, 128, 256)


class UsageError(Exception):
    pass



def list_hash(text):
    """The first 8 hex digits of the 64-bit FNV-1a hash of `text`, as src/problems/problem.cpp
    names a long ragged list (two lists of one size and longest must not share a name)."""
    h = 0xcbf29ce484222325
    for c in text.encode():
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"[:8]

def _ints(where, key, value):
    items = value if isinstance(value, list) else str(value).split(":")
    out = []
    for v in items:
        try:
            iv = int(v)
        except (TypeError, ValueError):
            raise UsageError(f"{where}: key '{key}': '{v}' is not an integer") from None
        if isinstance(v, float) and v != iv:
            raise UsageError(f"{where}: key '{key}': {v} is not an integer")
        out.append(iv)
    if not out:
        raise UsageError(f"{where}: key '{key}': empty list")
    return out


def _one_int(where, key, value, minimum):
    v = _ints(where, key, value)
    if len(v) != 1 or v[0] < minimum:
        raise UsageError(f"{where}: key '{key}': expected one integer >= {minimum}, got '{value}'")
    return v[0]


def _float(where, key, value):
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: key '{key}': '{value}' is not a number") from None
    if f != f or f in (float("inf"), float("-inf")):
        raise UsageError(f"{where}: key '{key}': '{value}' is not a finite number")
    return f


def parse_fields(where, items):
    """(key, value) pairs -> a spec dict with checked values; unknown keys are errors."""
    spec = {}
    for key, value in items:
        key = ALIASES.get(key, key)
        if key not in KEYS:
            raise UsageError(f"{where}: unknown key '{key}' (keys: {', '.join(KEYS)})")
        if key in ("name",):
            spec[key] = str(value)
        elif key in CHOICES:
            if str(value) not in CHOICES[key]:
                raise UsageError(f"{where}: key '{key}': '{value}' is not one of "
                                 f"{', '.join(CHOICES[key])}")
            spec[key] = str(value)
        elif key == "sink":
            text = str(value).lower()
            if text not in ("true", "false", "1", "0"):
                raise UsageError(f"{where}: key 'sink': '{value}' is not true or false")
            spec[key] = text in ("true", "1")
        elif key in ("sink_mean", "q_std", "scale"):
            spec[key] = _float(where, key, value)
        elif key == "soft_cap":  # 0: no soft-capping, as problem.cpp reads it
            spec[key] = _float(where, key, value)
            if spec[key] < 0:
                raise UsageError(f"{where}: key 'soft_cap': {value} is negative (0: no soft-capping)")
        elif key in ("keys", "lengths"):
            spec[key] = _ints(where, key, value)
            if min(spec[key]) < 1:
                raise UsageError(f"{where}: key '{key}': lengths must be >= 1")
        elif key in ("partitions", "plan_blocks_per_sm", "plan_min_chunk"):
            continue  # mha-tune's split-K counts and split plans; a peer chooses its own
        elif key in ("page_size", "window", "chunk", "mix_seed"):
            spec[key] = _one_int(where, key, value, 0)
        else:
            spec[key] = _one_int(where, key, value, 1)
    if spec.get("depth", 128) not in DEPTHS:
        raise UsageError(f"{where}: key 'depth': {spec['depth']} is not one of 64, 128, 256")
    kv_dtype = spec.get("kv_dtype", spec.get("dtype", "bf16"))
    if "kv_scale" in spec and kv_dtype not in FP8_MAX:
        raise UsageError(f"{where}: key 'kv_scale': a {kv_dtype} cache has no scales (kv_scale "
                         "goes with kv_dtype e4m3 or e5m2)")
    return spec


def parse_inline(text):
    """'batch=1,heads=32,kv_heads=8,keys=512:2048;b=8,...' -> list of spec dicts."""
    specs = []
    for i, part in enumerate(s.strip() for s in text.split(";")):
        if not part:
            continue
        where = f"--problems item {i + 1} ('{part}')"
        items = []
        for kv in part.split(","):
            key, eq, value = kv.strip().partition("=")
            if not eq:
                raise UsageError(f"{where}: '{kv}' is not key=value")
            items.append((key.strip(), value.strip()))
        specs.append(dict(parse_fields(where, items), origin=where))
    return specs


def read_suite(path):
    """A config with a "suite", or a problem file {"problems": [...]}, as mha-tune reads them."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise UsageError(f"{path}: cannot read the suite: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{path}: not JSON: {e}") from None
    origin = path
    if isinstance(doc, dict) and "suite" in doc:
        doc, origin = doc["suite"], f"{path}: suite"
    if not isinstance(doc, dict) or not isinstance(doc.get("problems"), list):
        raise UsageError(f"{origin}: key 'problems': expected a list of problem objects")
    specs = []
    for i, item in enumerate(doc["problems"]):
        where = f"{origin}: problems[{i}]"
        if not isinstance(item, dict):
            raise UsageError(f"{where}: expected an object")
        specs.append(dict(parse_fields(where, item.items()), origin=where))
    return specs


class _SplitMix64:
    """src/problems/length_mix.cpp's generator, bit for bit."""
    MASK = (1 << 64) - 1

    def __init__(self, seed):
        self.state = seed & self.MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def between(self, lo, hi):
        return lo + int(self.uniform() * (hi - lo + 1))


def mix_lengths(mix, batch, keys, seed):
    """As src/problems/length_mix.cpp mix_lengths: the seeded ragged batches peers and mha-tune share."""
    rng, lengths = _SplitMix64(seed), []
    for i in range(batch):
        n = keys
        if mix == "lognormal":
            u1, u2 = 1.0 - rng.uniform(), rng.uniform()
            z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
            n = math.floor(keys * math.exp(z) + 0.5)  # llround of a positive value
        elif mix == "one_long" and i > 0:
            n = rng.between(max(1, keys // 256), max(1, keys // 64))
        elif mix == "many_long":
            n = rng.between(max(1, keys // 2), keys)
        lengths.append(min(max(n, 1), MAX_KEYS))
    return lengths


def _g(x):
    """fmt's {:g} for the floats in names."""
    return format(x, "g")


def problem_name(p):
    """As src/problems/problem.cpp problem_name."""
    name = (f"b{p['batch']}_h{p['heads']}_kv{p['kv_heads']}_d{p['depth']}_n{p['keys']}_"
            f"{p['dtype']}")
    if p["out_dtype"] != p["dtype"]:
        name += "_o" + p["out_dtype"]
    if p["kv_dtype"] != p["dtype"]:
        name += "_kv" + p["kv_dtype"] + ("h" if is_fp8(p) and p["kv_scale"] == "head" else "")
    name += "_" + p["kv"] + (str(p["page_size"]) if is_paged(p) else "")
    name += "_" + p["mask"] + (str(p["window"]) if p["mask"] == "window" else "")
    name += str(p["chunk"]) if p["mask"] == "chunked" else ""
    if p["soft_cap"] > 0:
        name += "_cap" + _g(p["soft_cap"])
    if p["has_sink"]:
        name += "_sink" + _g(p["sink_mean"])
    if p["lengths_name"]:
        name += "_" + p["lengths_name"]
    if p["q_std"] != 1.0:
        name += "_qstd" + _g(p["q_std"])
    if p["scale_given"] > 0:
        name += "_scale" + _g(p["scale_given"])
    return name


def expand(spec):
    """One spec -> its problems (one per length, or one ragged problem), named as mha-tune does.
    Fields a spec leaves out take mha-tune's family defaults for the Llama-3-8B shape."""
    where = spec.get("origin", "problem")
    heads, kv_heads = spec.get("heads", 32), spec.get("kv_heads", 8)
    if heads % kv_heads:
        raise UsageError(f"{where}: heads {heads} is not a multiple of kv_heads {kv_heads}")
    kv, mask = spec.get("kv", "contig"), spec.get("mask", "null")
    base = {"batch": spec.get("batch", 1), "heads": heads, "kv_heads": kv_heads,
            "depth": spec.get("depth", 128), "dtype": spec.get("dtype", "bf16"),
            "kv": kv, "page_size": spec.get("page_size") or (16 if kv != "contig" else 0),
            "mask": mask, "window": spec.get("window") or (128 if mask == "window" else 0),
            "chunk": spec.get("chunk") or (256 if mask == "chunked" else 0),
            "soft_cap": spec.get("soft_cap", 0.0),
            "has_sink": spec.get("sink", False), "sink_mean": spec.get("sink_mean", 0.0),
            "q_std": spec.get("q_std", 1.0), "scale_given": spec.get("scale", 0.0),
            "lengths_name": ""}
    base["out_dtype"] = spec.get("out_dtype", base["dtype"])
    base["kv_dtype"] = spec.get("kv_dtype", base["dtype"])
    base["kv_scale"] = spec.get("kv_scale", "tensor")
    if kv == "contig":
        base["page_size"] = 0
    if mask != "window":
        base["window"] = 0
    if mask != "chunked":
        base["chunk"] = 0
    base["scale"] = base["scale_given"] or base["depth"] ** -0.5
    out = []
    if "mix" in spec:  # one seeded ragged batch per keys value, named as mha-tune names it
        if spec.get("lengths"):
            raise UsageError(f"{where}: keys 'mix' and 'lengths' both give the lengths: keep one")
        if "batch" not in spec or not spec.get("keys"):
            raise UsageError(f"{where}: keys 'batch' and 'keys' (the mix's scale) are required "
                             "with 'mix'")
        seed = spec.get("mix_seed", 1)
        for n in spec["keys"]:
            lengths = mix_lengths(spec["mix"], spec["batch"], n, seed)
            p = dict(base, batch=spec["batch"], keys=max(lengths), lengths=lengths,
                     lengths_name=f"{spec['mix']}{spec['batch']}x{n}s{seed}")
            p["name"] = f"{spec['name']}_n{n}" if "name" in spec else problem_name(p)
            out.append(p)
        return out
    if spec.get("lengths"):
        lengths = spec["lengths"]
        if "batch" in spec and spec["batch"] != len(lengths):
            raise UsageError(f"{where}: key 'batch': {spec['batch']} disagrees with the "
                             f"{len(lengths)} lengths given")
        p = dict(base, batch=len(lengths), keys=max(lengths), lengths=list(lengths))
        listed = "-".join(map(str, lengths))
        p["lengths_name"] = ("ragged" + listed if len(listed) <= 40
                             else f"ragged{len(lengths)}x{max(lengths)}h{list_hash(listed)}")
        p["name"] = spec["name"] if "name" in spec else problem_name(p)
        out.append(p)
        return out
    if not spec.get("keys"):
        raise UsageError(f"{where}: key 'keys' (or 'lengths') is required")
    for n in spec["keys"]:
        p = dict(base, keys=n, lengths=[n] * base["batch"])
        p["name"] = f"{spec['name']}_n{n}" if "name" in spec else problem_name(p)
        out.append(p)
    return out


PLAN_KEYS = ("name", "batch", "heads", "kv_heads", "depth", "dtype", "out_dtype", "kv_dtype",
             "kv_scale", "soft_cap", "kv", "page_size", "mask", "window", "chunk", "has_sink",
             "sink_mean", "q_std", "scale", "keys", "ragged_lengths")


def problems_from_plan(plan, origin):
    """The problems of `mha-tune sweep --dry-run --json` (its parsed output) as the peers take
    them: the binary's own expansion of ranges, mixes and names, so the peers time exactly the
    problems the sweep times."""
    if not isinstance(plan, dict) or not isinstance(plan.get("problems"), list):
        raise UsageError(f"{origin}: not the output of `mha-tune sweep --dry-run --json` "
                         "(no 'problems' list)")
    out = []
    for i, q in enumerate(plan["problems"]):
        missing = [k for k in PLAN_KEYS if k not in q]
        if missing:
            raise UsageError(f"{origin}: problems[{i}] lacks {', '.join(missing)} (a plan from "
                             "an older mha-tune: write it again)")
        p = {k: q[k] for k in PLAN_KEYS if k != "ragged_lengths"}
        lengths = q["ragged_lengths"] or [q["keys"]] * q["batch"]
        if len(lengths) != q["batch"] or min(lengths) < 0:
            raise UsageError(f"{origin}: problems[{i}] ({q['name']}): {len(lengths)} lengths "
                             f"for a batch of {q['batch']}")
        p.update(lengths=list(lengths), kv_scale=q["kv_scale"] or "tensor", lengths_name="",
                 scale_given=q["scale"])
        out.append(p)
    if not out:
        raise UsageError(f"{origin}: the plan holds no problem")
    return out


def expand_all(specs):
    problems, seen = [], set()
    for s in specs:
        for p in expand(s):
            if p["name"] in seen:
                raise UsageError(f"{s.get('origin', 'problem')}: problem name '{p['name']}' "
                                 "appears twice")
            seen.add(p["name"])
            problems.append(p)
    if not problems:
        raise UsageError("no problem given")
    return problems


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


def visible_keys(p, n):
    """Keys a query at position n - 1 sees (masks.cuh: window keeps the last `window`, chunked
    the query's chunk; causal is null for decode, since the query is the newest token)."""
    if p["mask"] == "window":
        return min(n, p["window"])
    if p["mask"] == "chunked":
        return n - (n - 1) // p["chunk"] * p["chunk"]
    return n


def step_bytes(p):
    """As problem.cpp step_bytes with partitions 1: visible K and V, q in, output out."""
    elem, out_elem = 2.0, 4.0 if p["out_dtype"] == "fp32" else 2.0
    kv = (sum(visible_keys(p, n) for n in p["lengths"]) * p["kv_heads"] * p["depth"]
          * kv_elem_bytes(p) * 2)
    return kv + p["batch"] * p["heads"] * p["depth"] * (elem + out_elem)


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
    paging, scales and the cap's value are runtime values), which a worker runs back to back."""
    return (p["heads"], p["kv_heads"], p["depth"], p["dtype"], p["kv_dtype"], p["mask"],
            p["soft_cap"] > 0, p["has_sink"])
