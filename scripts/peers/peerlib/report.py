"""Peer rows and reports in mha-tune's report schema (schema_version 1, the keys of
src/reports/report_json.cpp), so that compare, plots and the side-by-side table read them unchanged. A peer
has no tile: its traits carry zeros and its kernel name starts with "peer_"."""
import datetime
import json
import math
import os

from mha_report import SCHEMA_VERSION

from .suite import is_fp8, step_bytes


def number(v):
    """As report_json.cpp: NaN and infinities as strings."""
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def make_row(peer, p, status, reason="", time_us=None, peak_gbps=0.0, rel_l2=0.0, max_abs=0.0,
             device=0, kernel=None):
    t = time_us or {"median_us": 0.0, "min_us": 0.0, "mean_us": 0.0, "stdev_us": 0.0, "samples": 0}
    b = step_bytes(p)
    gbps = b / (t["median_us"] * 1e-6) / 1e9 if status == "passed" and t["median_us"] > 0 else 0.0
    # kv_dtype, kv_scale and soft_cap as report_json.cpp writes them since fp8 caches: a reader
    # takes a row without them for a cache in q's dtype, with no soft cap.
    traits = {"dtype": p["dtype"], "out_dtype": p["out_dtype"], "kv_dtype": p["kv_dtype"],
              "soft_cap": p["soft_cap"] > 0, "depth": p["depth"],
              "group": p["heads"] // p["kv_heads"], "kv": p["kv"], "mask": p["mask"],
              "has_sink": p["has_sink"], "bm": 0, "bn": 0, "bk": 0, "wm": 0, "wn": 0, "threads": 0,
              "stages": 0, "warp_split_k": False, "smem_bytes": 0}
    problem = {"name": p["name"], "batch": p["batch"], "heads": p["heads"],
               "kv_heads": p["kv_heads"], "depth": p["depth"], "dtype": p["dtype"],
               "out_dtype": p["out_dtype"], "kv_dtype": p["kv_dtype"],
               "kv_scale": p["kv_scale"] if is_fp8(p) else "", "kv": p["kv"],
               "page_size": p["page_size"], "mask": p["mask"], "window": p["window"],
               "chunk": p["chunk"], "soft_cap": p["soft_cap"], "has_sink": p["has_sink"],
               "keys": p["keys"], "lengths": p["lengths_name"]}
    # As row_fields.cpp: q_len and tree_depth are written where they differ from a one-token step.
    if p["q_len"] > 1:
        problem["q_len"] = p["q_len"]
    if p["mask"] == "tree":
        problem["tree_depth"] = p["tree_depth"]
    if p["ragged_q_lens"]:  # as report_json.cpp
        problem["ragged_q_lens"] = list(p["ragged_q_lens"])
    if len(set(p["lengths"])) > 1:  # as report_json.cpp: every length of a ragged batch
        problem.update(ragged_lengths=list(p["lengths"]), total_keys=sum(p["lengths"]))
    return {"kernel": f"peer_{peer}", "traits": traits, "problem": problem,
            "partitions": 1, "status": status, "reason": reason,
            "time": {k: number(float(v)) if k != "samples" else int(v) for k, v in t.items()},
            "bytes": b, "achieved_gbps": number(gbps),
            "peak_fraction": number(gbps / peak_gbps if peak_gbps > 0 else 0.0),
            "rel_l2_error": number(float(rel_l2)), "max_abs_error": number(float(max_abs)),
            "sm_clock_mhz": 0.0, "throttled": False, "device": device,
            **kernel_fields(kernel if status == "passed" else None)}


def kernel_fields(kernel):
    """The kernel-time convention beside `time` (peerlib/kernel_time.py): the step's summed kernel
    intervals in us, kernels per step and how they were read; zeros and "" when not measured."""
    k = kernel or {}
    return {"kernel_time_us": number(float(k.get("kernel_us", 0.0))),
            "kernels_per_step": number(float(k.get("kernels_per_step", 0.0))),
            "kernel_time_method": k.get("method", "")}


def make_metadata(gpu_name="", sm_count=0, l2_bytes=0, peak_gbps=0.0, command_line="", seed=1,
                  driver_version="", cuda_version="", git_commit="unknown", timestamp=None,
                  devices="", config_file="", gpu_uuids="", gpu_pci_bus_ids="",
                  nvidia_driver_version=""):
    ts = timestamp or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"schema_version": SCHEMA_VERSION, "tool_version": "peers.py", "git_commit": git_commit,
            "gpu_name": gpu_name, "sm_count": int(sm_count), "sm_clock_max_mhz": 0.0,
            "mem_clock_max_mhz": 0.0, "l2_bytes": int(l2_bytes), "driver_version": driver_version,
            "cuda_version": cuda_version, "timestamp": ts, "config_file": config_file,
            "config_hash": "", "command_line": command_line,
            "peak_read_gbps": number(float(peak_gbps)), "seed": int(seed), "timing_mode": "graph",
            "cold_cache": True, "shard_index": -1, "shard_count": 0, "devices": devices,
            "gpu_uuids": gpu_uuids, "gpu_pci_bus_ids": gpu_pci_bus_ids,
            "nvidia_driver_version": nvidia_driver_version}


def make_report(meta, rows):
    return {"schema_version": SCHEMA_VERSION, "metadata": meta, "rows": rows}


def write_report(path, report):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def fmt_value(v, spec):
    """A number with `spec`; the strings report_json writes for NaN and infinities as they are."""
    return v if isinstance(v, str) else format(v, spec)


def format_table(rows):
    lines = [f"{'problem':<44} {'peer':<26} {'status':<13} {'median us':>10} {'kernel us':>10} "
             f"{'GB/s':>7} {'peak':>6}"]
    for r in rows:
        lines.append(f"{r['problem']['name']:<44} {r['kernel']:<26} {r['status']:<13} "
                     f"{fmt_value(r['time']['median_us'], '.2f'):>10} "
                     f"{fmt_value(r.get('kernel_time_us', 0.0), '.2f'):>10} "
                     f"{fmt_value(r['achieved_gbps'], '.0f'):>7} "
                     f"{fmt_value(r['peak_fraction'], '.2f'):>6}")
    return "\n".join(lines)
