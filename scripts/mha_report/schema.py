"""What the fields of a report row and of a defaults bucket mean, computed as mha-tune's C++
does (src/reports/report_json.cpp writes rows, src/reports/select_buckets.cpp buckets)."""

import math
import re

# Of mha-tune's reports and of peers.py's, which copy their schema (peerlib/report.py).
SCHEMA_VERSION = 1

# A split plan is -(blocks_per_sm << PLAN_SHIFT | min_chunk_keys) on the partitions axis
# (encode_split_plan in src/common/split_code.cpp).
PLAN_SHIFT = 21
# A cluster split (P partitions combined in a thread-block cluster) is P + CLUSTER_SPLIT_BASE
# (kClusterSplitBase in src/common/split_code.h).
CLUSTER_SPLIT_BASE = 1 << 20


def split_label(row):
    """A row's split as mha-tune prints it: "16", "plan<blocks per SM>x<min chunk keys>" for a
    split plan, "cluster<P>" for a cluster split. Reports since the plan carry the label as
    "split"; older ones are decoded."""
    if "split" in row:
        return row["split"]
    p = row["partitions"]
    if p > CLUSTER_SPLIT_BASE:
        return f"cluster{p - CLUSTER_SPLIT_BASE}"
    if p > 0:
        return str(p)
    code = -p
    return f"plan{code >> PLAN_SHIFT}x{code & ((1 << PLAN_SHIFT) - 1)}"


def writes_no_partials(row):
    """A split whose row bytes are the step's alone: P = 1, or a cluster split (its partials stay
    in distributed shared memory). Other splits' bytes count their partials' write and read."""
    p = row["partitions"]
    return p == 1 or p > CLUSTER_SPLIT_BASE


def is_ragged(problem):
    """As select's is_ragged_batch: the sequences' lengths differ. A report lists them only for a
    ragged batch; without the list, a named length set ("lengths") is taken as ragged."""
    lengths = problem.get("ragged_lengths") or []
    return min(lengths) != max(lengths) if lengths else bool(problem["lengths"])


def is_timed(row):
    """Passed, with a positive median: a time that can be compared (failed points carry 0 and
    reports write NaN as the string "nan")."""
    t = row.get("time")
    return (row.get("status") == "passed" and isinstance(t, dict)
            and isinstance(t.get("median_us"), (int, float)) and t["median_us"] > 0)


def best_by_problem(rows):
    """problem name -> the timed row with the lowest median: the best configuration measured."""
    best = {}
    for r in rows:
        if not is_timed(r):
            continue
        name = r["problem"]["name"]
        if name not in best or r["time"]["median_us"] < best[name]["time"]["median_us"]:
            best[name] = r
    return best


def ratios_by_kernel(before_rows, after_rows):
    """kernel -> [after / before median] over the points (problem, split) timed in both: how each
    kernel of an A/B moved, beside the best per problem (which hides a kernel that got slower
    but is never the best)."""
    def timed(rows):
        return {(r["kernel"], r["problem"]["name"], split_label(r)): r["time"]["median_us"]
                for r in rows if is_timed(r)}
    before, after = timed(before_rows), timed(after_rows)
    ratios = {}
    for key in sorted(before.keys() & after.keys()):
        ratios.setdefault(key[0], []).append(after[key] / before[key])
    return ratios


def dtype_key(problem):
    """The dtype part of a family as select keys its buckets (kernel_registry.h dtype_key): q's
    dtype, then "_kv<cache dtype>" for an fp8 cache, "_cap" for soft-capping and "_mt" for a
    step of several query tokens or ragged ones (the multi-token kernels)."""
    key = problem["dtype"]
    kv_dtype = problem.get("kv_dtype", key)
    if kv_dtype != key:
        key += "_kv" + kv_dtype
    if problem.get("soft_cap", 0) > 0:
        key += "_cap"
    if problem.get("q_len", 1) > 1 or problem.get("ragged_q_lens"):
        key += "_mt"
    return key


def bucket_q_len(bucket):
    """A bucket's query tokens: its q_len field, else (defaults written before it) the name's
    "_q<N>" suffix, which select gives buckets of N > 1 tokens, else 1."""
    if "q_len" in bucket:
        return bucket["q_len"]
    m = re.search(r"_q(\d+)$", bucket.get("bucket", ""))
    return int(m.group(1)) if m else 1


def bucket_for(defaults, problem):
    """The bucket of select's defaults that holds the problem exactly, or None (select's lookup
    for a problem it has not seen picks the nearest bucket; the scripts compare only exact ones).
    Buckets of older defaults files carry no "ragged" and hold either kind."""
    for b in defaults["buckets"]:
        if "ragged" in b and b["ragged"] != is_ragged(problem):
            continue
        if (b["dtype"] == dtype_key(problem) and b["depth"] == problem["depth"]
                and b["group"] == problem["heads"] // problem["kv_heads"]
                and b["kv"] == problem["kv"] and b["mask"] == problem["mask"]
                and b["work_units"] == problem["batch"] * problem["kv_heads"]
                and bucket_q_len(b) == problem.get("q_len", 1)
                and b["min_keys"] <= problem["keys"] <= b["max_keys"]):
            return b
    return None


def geomean(values):
    """The geometric mean of positive ratios (nan for none)."""
    return math.exp(sum(map(math.log, values)) / len(values)) if values else math.nan
