#!/usr/bin/env python3
"""Tests of scripts/peers/peers.py and scripts/peers/peerlib without torch or a GPU: problem parsing
and its errors, names and bytes as mha-tune computes them (checked against the built binary when
MHA_BUILD_DIR has one), page tables, which peer refuses which problem and why, the report schema,
crash isolation of the worker processes (a stand-in worker that segfaults), --resume's reading of
its own report, --dry-run and usage errors without importing torch. The GPU paths run on the H200 (scripts/bench_vs_peers.sh)."""

import argparse
import contextlib
import importlib.util
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from mha_test_env import REPO, MHA_TUNE  # noqa: E402
SCRIPT = os.path.join(REPO, "scripts", "peers", "peers.py")
sys.path[:0] = [os.path.join(REPO, "scripts"), os.path.join(REPO, "scripts", "peers")]
from peerlib import (backends, fa3, flashinfer_sites, kernel_time, report, suite,  # noqa: E402
                     timing, worker)

spec = importlib.util.spec_from_file_location("peers", SCRIPT)
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)

# Keys exactly as src/reports/report_json.cpp writes them.
ROW_KEYS = {"kernel", "traits", "problem", "partitions", "status", "reason", "time", "bytes",
            "achieved_gbps", "peak_fraction", "rel_l2_error", "max_abs_error", "sm_clock_mhz",
            "throttled", "device",
            # The peers' own: the kernel-time convention beside the step's (peerlib/kernel_time.py).
            "kernel_time_us", "kernels_per_step", "kernel_time_method"}
TRAIT_KEYS = {"dtype", "out_dtype", "kv_dtype", "soft_cap", "depth", "group", "kv", "mask",
              "has_sink", "bm", "bn", "bk", "wm", "wn", "threads", "stages", "warp_split_k",
              "smem_bytes"}
PROBLEM_KEYS = {"name", "batch", "heads", "kv_heads", "depth", "dtype", "out_dtype", "kv_dtype",
                "kv_scale", "kv", "page_size", "mask", "window", "chunk", "soft_cap", "has_sink",
                "keys", "lengths"}
TIME_KEYS = {"median_us", "min_us", "mean_us", "stdev_us", "samples"}
SERVING = os.path.join(REPO, "configs", "suites", "serving.json")


def plan_problem(name="p", keys=64, lengths=None, lengths_name=None, **fields):
    """One problem of a plan as `mha-tune sweep --dry-run --json` prints it (src/sweep/
    sweep_plan.cpp), with the binary's defaults for the fields not given: a 16-bit cache has
    kv_scale "", a paged one pages of 16; "lengths" is the name's lengths part and
    "ragged_lengths" every length of a ragged batch ([] for a uniform one). The estimate's
    fields (kernels, points, bytes_per_step, estimated_s) are not the peers'."""
    dtype = fields.get("dtype", "bf16")
    kv_dtype = fields.get("kv_dtype", dtype)
    kv, mask = fields.get("kv", "contig"), fields.get("mask", "null")
    depth = fields.get("depth", 128)
    q = {"name": name, "batch": len(lengths) if lengths else 1, "heads": 32, "kv_heads": 8,
         "depth": depth, "q_len": 1, "ragged_q_lens": [], "dtype": dtype, "out_dtype": dtype, "kv_dtype": kv_dtype,
         "kv_scale": "tensor" if kv_dtype in ("e4m3", "e5m2") else "", "soft_cap": 0.0, "kv": kv,
         "page_size": 0 if kv == "contig" else 16, "mask": mask,
         "tree_depth": 4 if mask == "tree" else 0, "window": 128 if mask == "window" else 0, "chunk": 256 if mask == "chunked" else 0,
         "has_sink": False, "sink_mean": 0.0, "q_std": 1.0, "scale": depth ** -0.5,
         "keys": max(lengths) if lengths else keys,
         "lengths": lengths_name if lengths_name is not None else
         ("ragged" + "-".join(map(str, lengths)) if lengths else ""),
         "ragged_lengths": list(lengths or []), "partitions": [1], "kernels": [], "points": 1,
         "bytes_per_step": 0.0, "estimated_s": 0.0}
    q.update(fields)
    return q


def plan_doc(*problems):
    """A whole `sweep --dry-run --json` document around plan problems."""
    return {"dry_run": True, "shard": None,
            "counts": {"problems": len(problems), "kernels": 0, "partition_counts": 1,
                       "points": len(problems)},
            "kernels": [], "problems": list(problems),
            "estimate": {"seconds": 0.0, "method": "", "assumed_read_gbps": 4000.0,
                         "step_floor_us": 2.0, "samples_per_point": 20, "time_budget_s": 0.5,
                         "auto_partitions_sm_count": 132}}


def planned(**fields):
    """The problem the peers make of one plan problem (plan_problem's fields)."""
    return suite.problems_from_plan(plan_doc(plan_problem(**fields)), "test plan")[0]


def planned_all(*problems):
    return suite.problems_from_plan(plan_doc(*problems), "test plan")


def g_problems(*keys):
    """Problems g_n<keys> of one shape, as a named spec's range names them."""
    return planned_all(*(plan_problem(name=f"g_n{n}", keys=n) for n in keys))


class IdentityTest(unittest.TestCase):
    """A peers report names its GPU as mha-tune's reports do: UUID, PCI bus id, driver release."""

    def test_gpu_identity_as_nvidia_smi_prints_it(self):
        props = argparse.Namespace(uuid="8f7c1a02-b34d-5e6f-7081-92a3b4c5d6e7", pci_domain_id=0,
                                   pci_bus_id=0x3B, pci_device_id=0)
        self.assertEqual(worker.gpu_uuid(props), "GPU-8f7c1a02-b34d-5e6f-7081-92a3b4c5d6e7")
        self.assertEqual(worker.pci_bus_id(props), "00000000:3B:00.0")
        self.assertEqual(worker.gpu_uuid(argparse.Namespace()), "")
        self.assertEqual(worker.pci_bus_id(argparse.Namespace(pci_bus_id=1)), "")
        with tempfile.NamedTemporaryFile("w") as f:
            f.write("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.03  Release "
                    "Build  (dvs-builder@U16)  Thu Jan 23 2025\n")
            f.flush()
            self.assertEqual(worker.nvidia_driver_release(f.name), "580.159.03")
        self.assertEqual(worker.nvidia_driver_release("/nonexistent/version"), "")

    def test_metadata_carries_it(self):
        meta = report.make_metadata("NVIDIA H200", 132, gpu_uuids="GPU-1", gpu_pci_bus_ids="00:01",
                                    nvidia_driver_version="580.159")
        self.assertEqual((meta["gpu_uuids"], meta["gpu_pci_bus_ids"], meta["nvidia_driver_version"]),
                         ("GPU-1", "00:01", "580.159"))


# What `mha-tune sweep --dry-run --json --problem SPEC...` printed for these specs (a build of
# configs/tiles/ci.json), laid out shorter and with each kernel list cut to its first, the method to its
# start: a named range in steps of 500 (the syntax peers.py once read differently), an explicit
# ragged list, a seeded lognormal mix, an fp8 cache with a soft cap, and pages of fp16 with an
# fp32 output.
#   name=r,batch=2,dtype=bf16,kv=contig,keys=1000:2000:+500,q_std=2
#   dtype=bf16,kv=contig,lengths=5:9000:130,scale=0.05
#   mix=lognormal,batch=6,keys=4096,mix_seed=7,dtype=bf16,kv=contig
#   kv_dtype=e4m3,soft_cap=50,kv=contig,keys=300
#   dtype=fp16,out_dtype=fp32,kv=paged,page_size=16,batch=3,keys=100
PLAN_TEXT = r'''
{
  "counts": {"kernels": 3, "partition_counts": 1, "points": 22, "problems": 7},
  "dry_run": true,
  "estimate": {
    "assumed_read_gbps": 4400.0, "auto_partitions_sm_count": 132, "samples_per_point": 10,
    "seconds": 2.701383398690909, "step_floor_us": 7.0, "time_budget_s": 0.25,
    "method": "per point: 0.02 s overhead + 0.02 s warm-up + min(--time-bud..."
  },
  "kernels": [
    "decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16_t128_s4",
    "decode_bf16_bf16_kve4m3_d128_g4_contig_null_cap_bm16_bn64_bk32_wm16_wn16_t128_s4_wsk",
    "decode_fp16_fp32_d128_g4_paged_null_bm16_bn64_bk32_wm16_wn16_t128_s2"
  ],
  "problems": [
    {
     "batch": 2, "bytes_per_step": 8224768.0, "chunk": 0, "depth": 128, "dtype": "bf16",
     "estimated_s": 0.41868, "q_len": 1, "ragged_q_lens": [], "tree_depth": 0, "has_sink": false, "heads": 32,
     "kernels": ["decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16_t128_s4"],
     "keys": 1000, "kv": "contig", "kv_dtype": "bf16", "kv_heads": 8, "kv_scale": "",
     "lengths": "", "mask": "null", "name": "r_n1000", "out_dtype": "bf16", "page_size": 0,
     "partitions": [1], "points": 4, "q_std": 2.0, "ragged_lengths": [],
     "scale": 0.0883883461356163, "sink_mean": 0.0, "soft_cap": 0.0, "window": 0
    },
    {
     "batch": 2, "bytes_per_step": 12320768.0, "chunk": 0, "depth": 128, "dtype": "bf16",
     "estimated_s": 0.41588, "q_len": 1, "ragged_q_lens": [], "tree_depth": 0, "has_sink": false, "heads": 32,
     "kernels": ["decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16_t128_s4"],
     "keys": 1500, "kv": "contig", "kv_dtype": "bf16", "kv_heads": 8, "kv_scale": "",
     "lengths": "", "mask": "null", "name": "r_n1500", "out_dtype": "bf16", "page_size": 0,
     "partitions": [1], "points": 4, "q_std": 2.0, "ragged_lengths": [],
     "scale": 0.0883883461356163, "sink_mean": 0.0, "soft_cap": 0.0, "window": 0
    },
    {
     "batch": 2, "bytes_per_step": 16416768.0, "chunk": 0, "depth": 128, "dtype": "bf16",
     "estimated_s": 0.41448, "q_len": 1, "ragged_q_lens": [], "tree_depth": 0, "has_sink": false, "heads": 32,
     "kernels": ["decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16_t128_s4"],
     "keys": 2000, "kv": "contig", "kv_dtype": "bf16", "kv_heads": 8, "kv_scale": "",
     "lengths": "", "mask": "null", "name": "r_n2000", "out_dtype": "bf16", "page_size": 0,
     "partitions": [1], "points": 4, "q_std": 2.0, "ragged_lengths": [],
     "scale": 0.0883883461356163, "sink_mean": 0.0, "soft_cap": 0.0, "window": 0
    },
    {
     "batch": 3, "bytes_per_step": 37466112.0, "chunk": 0, "depth": 128, "dtype": "bf16",
     "estimated_s": 0.41272480814545454, "q_len": 1, "ragged_q_lens": [], "tree_depth": 0, "has_sink": false, "heads": 32,
     "kernels": ["decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16_t128_s4"],
     "keys": 9000, "kv": "contig", "kv_dtype": "bf16", "kv_heads": 8, "kv_scale": "",
     "lengths": "ragged5-9000-130", "mask": "null",
     "name": "b3_h32_kv8_d128_n9000_bf16_contig_null_ragged5-9000-130_scale0.05",
     "out_dtype": "bf16", "page_size": 0, "partitions": [1], "points": 4, "q_std": 1.0,
     "ragged_lengths": [5, 9000, 130], "scale": 0.05000000074505806, "sink_mean": 0.0,
     "soft_cap": 0.0, "window": 0
    },
    {
     "batch": 6, "bytes_per_step": 111493120.0, "chunk": 0, "depth": 128, "dtype": "bf16",
     "estimated_s": 0.4181085905454546, "q_len": 1, "ragged_q_lens": [], "tree_depth": 0, "has_sink": false, "heads": 32,
     "kernels": ["decode_bf16_bf16_d128_g4_contig_null_bm16_bn64_bk32_wm16_wn16_t128_s4"],
     "keys": 11006, "kv": "contig", "kv_dtype": "bf16", "kv_heads": 8, "kv_scale": "",
     "lengths": "lognormal6x4096s7", "mask": "null",
     "name": "b6_h32_kv8_d128_n11006_bf16_contig_null_lognormal6x4096s7", "out_dtype": "bf16",
     "page_size": 0, "partitions": [1], "points": 4, "q_std": 1.0,
     "ragged_lengths": [11006, 635, 4112, 2413, 2588, 6442], "scale": 0.0883883461356163,
     "sink_mean": 0.0, "soft_cap": 0.0, "window": 0
    },
    {
     "batch": 1, "bytes_per_step": 630784.0, "chunk": 0, "depth": 128, "dtype": "bf16",
     "estimated_s": 0.31793, "q_len": 1, "ragged_q_lens": [], "tree_depth": 0, "has_sink": false, "heads": 32,
     "kernels": ["decode_bf16_bf16_kve4m3_d128_g4_contig_null_cap_bm16_bn64_bk32_wm16_wn16_t128_s4_wsk"],
     "keys": 300, "kv": "contig", "kv_dtype": "e4m3", "kv_heads": 8, "kv_scale": "tensor",
     "lengths": "", "mask": "null",
     "name": "b1_h32_kv8_d128_n300_bf16_kve4m3_contig_null_cap50", "out_dtype": "bf16",
     "page_size": 0, "partitions": [1], "points": 1, "q_std": 1.0, "ragged_lengths": [],
     "scale": 0.0883883461356163, "sink_mean": 0.0, "soft_cap": 50.0, "window": 0
    },
    {
     "batch": 3, "bytes_per_step": 1302528.0, "chunk": 0, "depth": 128, "dtype": "fp16",
     "estimated_s": 0.30358, "q_len": 1, "ragged_q_lens": [], "tree_depth": 0, "has_sink": false, "heads": 32,
     "kernels": ["decode_fp16_fp32_d128_g4_paged_null_bm16_bn64_bk32_wm16_wn16_t128_s2"],
     "keys": 100, "kv": "paged", "kv_dtype": "fp16", "kv_heads": 8, "kv_scale": "",
     "lengths": "", "mask": "null", "name": "b3_h32_kv8_d128_n100_fp16_ofp32_paged16_null",
     "out_dtype": "fp32", "page_size": 16, "partitions": [1], "points": 1, "q_std": 1.0,
     "ragged_lengths": [], "scale": 0.0883883461356163, "sink_mean": 0.0, "soft_cap": 0.0,
     "window": 0
    }
  ],
  "shard": null
}
'''


class PlanTest(unittest.TestCase):
    """--plan: the problems as mha-tune's sweep expands them (ranges, mixes, names), taken
    verbatim, so the peers time what the sweep times whatever syntax the spec uses."""

    def test_takes_the_plan_verbatim(self):
        plan = json.loads(PLAN_TEXT)
        got = suite.problems_from_plan(plan, "plan.json")
        self.assertEqual(len(got), len(plan["problems"]))
        for p, q in zip(got, plan["problems"]):
            for key in ("name", "batch", "heads", "kv_heads", "depth", "dtype", "out_dtype",
                        "kv_dtype", "kv", "page_size", "mask", "window", "chunk", "soft_cap",
                        "has_sink", "sink_mean", "q_std", "scale", "keys"):
                self.assertEqual(p[key], q[key], f"{q['name']}: {key}")
            self.assertEqual(p["lengths"], q["ragged_lengths"] or [q["keys"]] * q["batch"])
            self.assertEqual(p["lengths_name"], q["lengths"])  # the report's "lengths"
            self.assertEqual(suite.step_bytes(p), q["bytes_per_step"], q["name"])
        self.assertEqual([p["name"] for p in got[:3]], ["r_n1000", "r_n1500", "r_n2000"])
        self.assertEqual([p["lengths"] for p in got[:3]], [[1000] * 2, [1500] * 2, [2000] * 2])
        ragged, mix, fp8, paged = got[3:]
        self.assertEqual(ragged["lengths"], [5, 9000, 130])
        self.assertEqual(mix["lengths"], plan["problems"][4]["ragged_lengths"])
        self.assertTrue(suite.is_ragged(mix))
        self.assertEqual((fp8["kv_scale"], fp8["soft_cap"]), ("tensor", 50.0))
        self.assertEqual(got[0]["kv_scale"], "tensor")  # a 16-bit cache has none: never read
        self.assertEqual((paged["kv"], paged["page_size"], paged["out_dtype"]),
                         ("paged", 16, "fp32"))
        # Rows carry the plan's problem, as the sweep's rows do.
        row = report.make_row("torch_flex", mix, "not_supported", "why")["problem"]
        q = plan["problems"][4]
        self.assertEqual((row["name"], row["lengths"], row["ragged_lengths"]),
                         (q["name"], q["lengths"], q["ragged_lengths"]))

    def test_refuses_what_is_not_a_plan(self):
        good = plan_problem(name="x", lengths=[3, 9])
        for doc, says in (({}, "no 'problems' list"), ([], "no 'problems' list"),
                          ({"problems": []}, "holds no problem"),
                          ({"problems": [3]}, "problems[0]: expected an object"),
                          ({"problems": [{"name": "x"}]}, "lacks batch"),
                          ({"problems": [{k: v for k, v in good.items() if k != "lengths"}]},
                           "lacks lengths"),
                          ({"problems": [dict(good, batch=3)]}, "2 lengths for a batch of 3"),
                          ({"problems": [dict(good, keys=8)]}, "lengths from 3 to 9 for keys 8"),
                          ({"problems": [dict(good, ragged_lengths=[0, 9])]}, "lengths from 0"),
                          ({"problems": [good, good]}, "'x' appears twice")):
            with self.assertRaises(suite.UsageError, msg=says) as ctx:
                suite.problems_from_plan(doc, "p.json")
            self.assertIn(says, str(ctx.exception))
            self.assertIn("p.json", str(ctx.exception))
        with self.assertRaises(suite.UsageError) as ctx:
            suite.problems_from_plan({"rows": []}, "p.json")
        self.assertIn("mha-tune sweep --config C --dry-run --json > plan.json", str(ctx.exception))

    @unittest.skipUnless(os.access(MHA_TUNE, os.X_OK), "MHA_BUILD_DIR has no mha-tune binary")
    def test_the_binarys_plan(self):
        """Whatever syntax the spec uses (steps, factors, powers of two, mixes, long lists), the
        peers take the binary's problems: its names and lengths, its step bytes; and the plan
        written by hand above has the binary's keys."""
        specs = ["name=s,kv_heads=8,dtype=bf16,kv=contig,keys=1000:2000:+250",
                 "name=x,kv_heads=8,dtype=bf16,kv=contig,keys=512:8192:x4",
                 "name=w,kv_heads=8,dtype=bf16,kv=contig,keys=[512:4096:pow2]",
                 "mix=lognormal,batch=24,keys=131072,mix_seed=7,dtype=bf16,kv=contig",
                 "lengths=" + ":".join(str(100 + i) for i in range(20)) + ":5000,dtype=bf16,"
                 "kv=contig"]
        args = [MHA_TUNE, "sweep", "--dry-run", "--json"]
        for text in specs:
            args += ["--problem", text]
        r = subprocess.run(args, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        plan = json.loads(r.stdout)
        got = suite.problems_from_plan(plan, "plan")
        self.assertEqual([p["name"] for p in got], [q["name"] for q in plan["problems"]])
        self.assertEqual([p["keys"] for p in got[:5]], [1000, 1250, 1500, 1750, 2000])
        self.assertEqual([p["name"] for p in got[5:8]], ["x_n512", "x_n2048", "x_n8192"])
        self.assertEqual([p["keys"] for p in got[8:12]], [512, 1024, 2048, 4096])
        for p, q in zip(got, plan["problems"]):
            self.assertEqual(p["lengths"], q["ragged_lengths"] or [q["keys"]] * q["batch"])
            self.assertEqual(p["lengths_name"], q["lengths"])
            self.assertEqual(suite.step_bytes(p), q["bytes_per_step"], q["name"])
        self.assertEqual(len(got[12]["lengths"]), 24)
        self.assertEqual(got[13]["lengths"], [100 + i for i in range(20)] + [5000])
        theirs = {k for q in plan["problems"] for k in q}
        self.assertEqual({k for q in json.loads(PLAN_TEXT)["problems"] for k in q}, theirs)
        self.assertEqual(set(plan_problem()), theirs)
        self.assertEqual(set(plan_doc()), set(plan))


class BytesAndPagesTest(unittest.TestCase):
    def test_bytes_as_mha_tune(self):
        p = planned(batch=1, heads=32, kv_heads=8, keys=512)
        self.assertEqual(suite.step_bytes(p), 2113536.0)  # as mha-tune's report for this shape
        w = planned(mask="window", window=128, keys=4096)
        self.assertEqual(suite.step_bytes(w), suite.step_bytes(planned(keys=128)))
        c = planned(mask="chunked", chunk=256, keys=1000)  # chunk [768, 1000): 232 keys
        self.assertEqual(suite.step_bytes(c), suite.step_bytes(planned(keys=232)))
        r = planned(lengths=[100, 300])
        self.assertEqual(suite.step_bytes(r) - 2 * 32 * 128 * 4, 400 * 8 * 128 * 4)

    def test_query_token_bytes(self):
        """q and the output grow with q_len; K/V are read once for all the tokens, and a window
        reaches back from the first token."""
        one, four = planned(keys=512), planned(keys=512, q_len=4, mask="causal")
        self.assertEqual(suite.step_bytes(four) - suite.step_bytes(one), 3 * 32 * 128 * 4)
        w = planned(mask="window", window=128, keys=4096, q_len=4)
        self.assertEqual(suite.step_bytes(w) - suite.step_bytes(planned(keys=131, q_len=4)), 0)

    def test_draft_trees(self):
        """As problems/draft_tree.cpp: a chain of `depth` from the root, every token seeing
        itself and its ancestors, no deeper than `depth`; causal steps see the whole chain."""
        import random
        for depth in (1, 3, 8):
            words = suite.draft_tree(8, depth, random.Random(depth))
            self.assertEqual(words[:depth], [(2 << t) - 1 for t in range(depth)])
            for t, w in enumerate(words):
                self.assertEqual(w >> t, 1)  # itself, and only earlier drafts
                ancestors = [u for u in range(t) if w >> u & 1]
                self.assertLessEqual(len(ancestors) + 1, depth)
                if ancestors:  # its parent is the deepest ancestor, and sees the others
                    self.assertEqual(words[ancestors[-1]], w & ~(1 << t))
        causal = planned(keys=64, lengths=[9, 30], q_len=3, mask="causal")
        self.assertEqual(suite.token_words(causal, 1), [[1, 3, 7]] * 2)
        tree = planned(keys=64, lengths=[9, 30], q_len=8, mask="tree", tree_depth=2)
        words = suite.token_words(tree, 1)
        self.assertEqual(words, suite.token_words(tree, 1))  # seeded
        self.assertEqual(len(words), 2)
        self.assertTrue(all(w in (1 << t, 1 | 1 << t) for ws in words for t, w in enumerate(ws)))

    def test_fp8_bytes(self):
        """One byte per K/V element in an fp8 cache; q and the output keep theirs."""
        for kv_dtype in ("e4m3", "e5m2"):
            p = planned(kv_dtype=kv_dtype, kv_scale="head", keys=512)
            self.assertEqual(suite.step_bytes(p), 512 * 8 * 128 * 2 + 32 * 128 * 4)
            self.assertEqual(suite.cache_bytes(p, 128), 2.0 * 4 * 128 * 8 * 128)
        w = planned(kv_dtype="e4m3", mask="window", window=128, out_dtype="fp32", keys=4096)
        self.assertEqual(suite.step_bytes(w), 128 * 8 * 128 * 2 + 32 * 128 * (2 + 4))
        p = planned(kv_dtype="e4m3", lengths=[100, 300])
        self.assertEqual(worker.copy_bytes(p, backends.Layout(16, True)),
                         2.0 * (7 + 19) * 16 * 8 * 128 + 2 * 32 * 128 * 2)
        self.assertEqual(suite.step_bytes(planned(soft_cap=50.0, keys=512)), 2113536.0)

    def test_fp8_data_scales(self):
        """Per-head sigmas 0.5, 1, 2, 4, ...; 8 sigma at the format's largest value, sigma the
        head's own or the largest over heads."""
        p = planned(kv_dtype="e4m3", keys=8)
        self.assertEqual(suite.kv_sigmas(p), [0.5, 1.0, 2.0, 4.0] * 2)
        self.assertEqual(suite.kv_scales(p), [32.0 / 448] * 8)
        h = planned(kv_dtype="e4m3", kv_scale="head", keys=8)
        self.assertEqual(suite.kv_scales(h), [4.0 / 448, 8.0 / 448, 16.0 / 448, 32.0 / 448] * 2)
        e = planned(kv_dtype="e5m2", heads=4, kv_heads=2, keys=8)
        self.assertEqual(suite.kv_scales(e), [8.0 / 57344] * 2)
        self.assertEqual(suite.kv_sigmas(planned(keys=8)), [1.0] * 8)

    def test_rotation(self):
        self.assertEqual(timing.rotation_copies(5e9, 62914560), 1)
        self.assertEqual(timing.rotation_copies(1.0, 62914560), 512)
        self.assertEqual(timing.rotation_copies(2.1e6, 62914560), 120)
        self.assertEqual(timing.steps_per_replay(2), 8)

    def test_page_table(self):
        rows, total = suite.page_table([33, 16, 1], 16, seed=1)
        self.assertEqual(total, 5)
        self.assertEqual([len(r) for r in rows], [3, 3, 3])
        used = rows[0][:3] + rows[1][:1] + rows[2][:1]
        self.assertEqual(sorted(used), [0, 1, 2, 3, 4])  # every page once
        self.assertEqual(suite.page_table([33, 16, 1], 16, seed=1), (rows, total))  # seeded
        self.assertNotEqual(suite.page_table([4096], 16, seed=1)[0][0], list(range(256)))
        self.assertEqual(suite.page_table([300], 128, 1, shuffle=False)[0], [[0, 1, 2]])
        self.assertEqual(suite.cache_bytes(planned(lengths=[100, 300]), 128),
                         2.0 * 4 * 128 * 8 * 128 * 2)


class StatsTest(unittest.TestCase):
    def test_statistics_and_stopping(self):
        self.assertEqual(timing.median([4, 1, 2, 3]), 2.5)
        self.assertAlmostEqual(timing.quantile([1, 2, 3, 4], 0.25), 1.75)
        s = timing.summarize_us([1.0, 2.0, 3.0])
        self.assertEqual((s["median_us"], s["min_us"], s["samples"]), (2.0, 1.0, 3))
        self.assertFalse(timing.should_stop([10.0] * 9, 0.1))
        self.assertTrue(timing.should_stop([10.0] * 10, 0.1))
        self.assertFalse(timing.should_stop([10.0, 12.0] * 10, 0.1))
        self.assertTrue(timing.should_stop([10.0, 12.0] * 10, 0.5))


class PeerTableTest(unittest.TestCase):
    def why(self, peer, **fields):
        return backends.PEERS[peer].why_not(planned(**fields))

    def test_who_refuses_what(self):
        self.assertIn("page table", self.why("torch_sdpa_flash", kv="paged", keys=64))
        self.assertIn("lengths", self.why("torch_sdpa_cudnn", lengths=[3, 9]))
        self.assertIsNone(self.why("torch_sdpa_flash", keys=64))
        self.assertIsNone(self.why("torch_flex", lengths=[3, 9], mask="window", window=4))
        self.assertIn("sink", self.why("torch_flex", has_sink=True, keys=64))
        self.assertIn("sinks", self.why("flashinfer_fa2", has_sink=True, kv="paged", keys=64))
        self.assertIsNone(self.why("flashinfer_tc", kv="paged", page_size=7, lengths=[3, 9]))
        self.assertIn("not 7", self.why("flashinfer_xqa", kv="paged", page_size=7, keys=64))
        self.assertIsNone(self.why("flashinfer_xqa", kv="paged", mask="window", has_sink=True,
                                   keys=64))
        self.assertIn("window", self.why("flashinfer_cudnn", kv="paged", mask="window", keys=64))
        fp32 = planned(out_dtype="fp32", keys=64)
        self.assertIn("query's dtype", peers.common_why_not(fp32))
        self.assertEqual(planned(keys=64)["q_len"], 1)  # a plan without q_len: one token

    def test_query_tokens(self):
        """Steps of several tokens go to the peers that compute them, never to a one-token peer
        (which would time a different problem); trees to those with a custom or draft mask."""
        causal = planned(kv="paged", keys=64, q_len=4, mask="causal")
        tree = planned(kv="paged", keys=64, q_len=8, mask="tree", tree_depth=4)
        takers = {name for name, peer in backends.PEERS.items()
                  if peers.tokens_why_not(causal, peer) is None}
        self.assertEqual(takers, {"torch_flex", "flashinfer_prefill_fa2", "flashinfer_prefill_fa3",
                                  "flashinfer_xqa", "fa3", "fa3_best_split"})
        for name in ("torch_sdpa_flash", "flashinfer_fa2", "flashinfer_tc", "flashinfer_trtllm",
                     "mha_tune"):
            if name in backends.PEERS:
                self.assertIn("one query token per sequence, not 4",
                              peers.tokens_why_not(causal, backends.PEERS[name]), name)
        one = planned(kv="paged", keys=64)
        self.assertIsNone(peers.tokens_why_not(one, backends.PEERS["flashinfer_fa2"]))
        self.assertIsNone(self.why("flashinfer_prefill_fa2", **tree))
        self.assertIn("custom mask", self.why("flashinfer_prefill_fa3", **tree))
        self.assertIn("no draft tree", self.why("fa3", **tree))
        self.assertIsNone(self.why("fa3", **causal))
        self.assertIn("0.7's API", self.why("flashinfer_xqa", **causal))  # 0.5.3's XQA
        prefill = backends.PEERS["flashinfer_prefill_fa2"]
        self.assertIn("sinks", prefill.why_not(dict(causal, has_sink=True)))
        self.assertIn("per tensor", prefill.why_not(dict(causal, kv_dtype="e4m3",
                                                         kv_scale="head")))

    def test_ragged_tokens(self):
        """Ragged counts (cu_seqlens_q) go to the paths that take offsets: FlashInfer's prefill
        wrapper (qo_indptr), XQA (q_cu_seq_lens, 0.7) and FA3 (cu_seqlens_q); never to Flex,
        whose queries are [batch, heads, q_len, d]."""
        ragged = planned(lengths=[9, 30, 5], q_len=4, ragged_q_lens=[4, 0, 1], mask="causal")
        takers = {name for name, peer in backends.PEERS.items()
                  if peers.tokens_why_not(ragged, peer) is None}
        self.assertEqual(takers, {"flashinfer_prefill_fa2", "flashinfer_prefill_fa3",
                                  "flashinfer_xqa", "fa3", "fa3_best_split"})
        self.assertIn("ragged counts", peers.tokens_why_not(ragged, backends.PEERS["torch_flex"]))
        self.assertEqual(suite.token_counts(ragged), [4, 0, 1])
        self.assertEqual(suite.token_starts(ragged), [0, 4, 4, 5])
        self.assertEqual(suite.token_counts(planned(lengths=[9, 30], q_len=2, mask="causal")),
                         [2, 2])
        # Bytes as problem.cpp: 5 tokens' q and output rows, no K/V for the sequence without one.
        self.assertEqual(suite.step_bytes(ragged),
                         (9 + 5) * 8 * 128 * 2 * 2.0 + 5 * 32 * 128 * 4.0)
        # Each sequence's words: its own causal chain, or a tree no deeper than its tokens.
        self.assertEqual(suite.token_words(ragged, 1), [[1, 3, 7, 15], [], [1]])
        tree = planned(lengths=[9, 30], q_len=8, ragged_q_lens=[8, 2], mask="tree",
                       tree_depth=4)
        words = suite.token_words(tree, 1)
        self.assertEqual([len(w) for w in words], [8, 2])
        self.assertEqual(words[1], [1, 3])
        self.assertEqual(report.make_row("fa3", ragged, "skipped")["problem"]["ragged_q_lens"],
                         [4, 0, 1])
        self.assertNotEqual(suite.group_key(ragged),
                            suite.group_key(planned(lengths=[9, 30, 5], q_len=4, mask="causal")))

    def test_tree_plans(self):
        self.assertEqual(planned(keys=64, q_len=8, mask="tree", tree_depth=8)["tree_depth"], 8)
        for depth in (0, 9):
            with self.assertRaisesRegex(suite.UsageError, r"tree_depth in 1\.\.q_len \(8\)"):
                planned(keys=64, q_len=8, mask="tree", tree_depth=depth)

    def test_fp8_and_soft_cap(self):
        """Who takes an fp8 cache (per tensor or per head, e4m3 or e5m2) and a soft cap."""
        paged = {"kv": "paged", "page_size": 16, "keys": 64}
        for peer in ("torch_sdpa_flash", "torch_sdpa_cudnn", "torch_flex"):
            self.assertIn("no fp8 K/V cache", self.why(peer, keys=64, kv_dtype="e4m3"), peer)
        self.assertIn("soft-capping", self.why("torch_sdpa_cudnn", keys=64, soft_cap=50.0))
        self.assertIsNone(self.why("torch_flex", lengths=[3, 9], mask="window", window=4,
                                   soft_cap=50.0))
        for peer in ("flashinfer_fa2", "flashinfer_tc"):
            for kv_dtype in ("e4m3", "e5m2"):
                self.assertIsNone(self.why(peer, **paged, kv_dtype=kv_dtype), peer)
            self.assertIsNone(self.why(peer, keys=64, kv_dtype="e4m3", soft_cap=30.0,
                                       mask="window"), peer)
            self.assertIn("one scale per tensor",
                          self.why(peer, **paged, kv_dtype="e4m3", kv_scale="head"), peer)
        self.assertIsNone(self.why("flashinfer_xqa", **paged, kv_dtype="e4m3", has_sink=True,
                                   mask="window"))
        self.assertIn("e4m3 only", self.why("flashinfer_xqa", **paged, kv_dtype="e5m2"))
        self.assertIn("one K/V scale", self.why("flashinfer_xqa", **paged, kv_dtype="e4m3",
                                                       kv_scale="head"))
        self.assertIn("soft-capping", self.why("flashinfer_xqa", **paged, soft_cap=50.0))
        self.assertIn("dequantisation scales",
                      self.why("flashinfer_cudnn", **paged, kv_dtype="e4m3"))
        self.assertIn("soft-capping", self.why("flashinfer_cudnn", **paged, soft_cap=50.0))
        self.assertIn("16-bit K/V cache",
                      peers.common_why_not(planned(dtype="fp16", kv_dtype="bf16", keys=8)))
        self.assertIsNone(peers.common_why_not(planned(dtype="fp16", kv_dtype="e5m2", keys=8)))

    def test_fa3_refusals(self):
        self.assertIn("attention-sink", self.why("fa3", kv="paged", has_sink=True, keys=64))
        self.assertIn("e4m3 only", self.why("fa3", kv="paged", kv_dtype="e5m2", keys=64))
        for fields in ({"keys": 64}, {"kv": "paged", "page_size": 16, "lengths": [3, 9]},
                       {"kv": "paged", "kv_dtype": "e4m3", "kv_scale": "head", "keys": 64},
                       {"mask": "window", "window": 8, "soft_cap": 30.0, "keys": 64}):
            self.assertIsNone(self.why("fa3", **fields), fields)
        fp8 = planned(kv="paged", kv_dtype="e4m3", keys=64)
        self.assertEqual(backends.PEERS["fa3"].tolerance(fp8), 0.15)
        self.assertEqual(backends.PEERS["fa3"].layout(planned(keys=64)).page_size, 0)

    def test_fa3_build_refusal_names_the_switch(self):
        built = {"build_flags": {"FLASHATTENTION_DISABLE_HDIM256": True,
                                 "FLASHATTENTION_DISABLE_FP8": True,
                                 "FLASHATTENTION_DISABLE_HDIM128": False}}
        why = lambda **fields: fa3.build_refusal(None, planned(**fields), built)  # noqa: E731
        self.assertIn("FLASHATTENTION_DISABLE_HDIM256", why(depth=256, keys=64))
        self.assertIn("e4m3 cache", why(kv="paged", kv_dtype="e4m3", keys=64))
        self.assertIsNone(why(depth=128, keys=64, soft_cap=30.0))
        self.assertIsNone(fa3.build_refusal(None, planned(depth=256, keys=64), {}))

    def test_tolerances(self):
        """XQA's sm90 fp8 kernel rounds q and P to e4m3 too: a looser bound for it alone."""
        fp8, bf16 = planned(kv="paged", kv_dtype="e4m3", keys=64), planned(kv="paged", keys=64)
        xqa = backends.PEERS["flashinfer_xqa"]
        self.assertEqual((xqa.tolerance(fp8), xqa.tolerance(bf16)), (0.15, backends.TOLERANCE))
        for name in ("flashinfer_fa2", "flashinfer_tc", "torch_flex"):
            self.assertEqual(backends.PEERS[name].tolerance(fp8), backends.TOLERANCE, name)

    def test_group_key(self):
        """One worker per JIT module: cache dtype and soft cap on/off split groups; the cap's
        value, the scale kind, lengths and paging do not."""
        key = lambda **fields: suite.group_key(planned(**fields))  # noqa: E731
        self.assertNotEqual(key(keys=64), key(keys=64, kv_dtype="e4m3"))
        self.assertNotEqual(key(keys=64, kv_dtype="e4m3"), key(keys=64, kv_dtype="e5m2"))
        self.assertNotEqual(key(keys=64), key(keys=64, soft_cap=50.0))
        self.assertEqual(key(keys=64, soft_cap=50.0), key(kv="paged", keys=9000, soft_cap=30.0))
        self.assertEqual(key(keys=64, kv_dtype="e4m3"),
                         key(lengths=[3, 9], kv_dtype="e4m3", kv_scale="head"))
        self.assertNotEqual(key(keys=64, mask="causal"), key(keys=64, mask="causal", q_len=2))

    def test_layouts(self):
        contig, paged = planned(keys=300), planned(kv="paged", page_size=16, keys=300)
        self.assertEqual(backends.PEERS["torch_sdpa_flash"].layout(contig).page_size, 0)
        for fi in ("flashinfer_fa2", "flashinfer_tc", "flashinfer_xqa", "flashinfer_cudnn"):
            lay = backends.PEERS[fi].layout(contig)
            self.assertEqual((lay.page_size, lay.shuffled), (128, False), fi)
            lay = backends.PEERS[fi].layout(paged)
            self.assertEqual((lay.page_size, lay.shuffled), (16, True), fi)

    def test_flashinfer_workspace_holds_its_split_scratch(self):
        # MQA (64/1, d64) asked FlashInfer's tensor-core plan for 276,824,064 bytes of
        # batch_prefill_tmp_v (64 heads x 264 blocks x 64 rows x 64 floats) and 128 MB failed.
        mqa = planned(heads=64, kv_heads=1, depth=64, keys=8192)
        self.assertGreaterEqual(backends._fi_decode_workspace_bytes(mqa, 132), 276824064 + 64 * 264 * 64 * 4)
        llama = planned(heads=32, kv_heads=8, keys=8192)
        self.assertEqual(backends._fi_decode_workspace_bytes(llama, 132), 128 << 20)

    def test_resolve(self):
        self.assertEqual(len(backends.resolve("all")), 12)
        self.assertEqual([p.name for p in backends.resolve("fi_tc, flash")],
                         ["flashinfer_tc", "torch_sdpa_flash"])
        self.assertEqual([p.name for p in backends.resolve("ours")], ["mha_tune"])
        with self.assertRaises(ValueError):
            backends.resolve("fi_tc,xla")


class ReportTest(unittest.TestCase):
    def test_schema(self):
        ps = planned_all(plan_problem(name="u", keys=512),
                         plan_problem(name="r", kv="paged", page_size=128, lengths=[4, 9],
                                      mask="window", window=4, has_sink=True))
        t = timing.summarize_us([10.0, 10.1, 9.9])
        rows = [report.make_row("flashinfer_tc", ps[0], "passed", "x", t, 4400.0, 0.002, 0.001),
                report.make_row("torch_flex", ps[1], "not_supported", "why")]
        rep = report.make_report(report.make_metadata("NVIDIA H200", 132, 62914560, 4400.0), rows)
        for r in rep["rows"]:
            self.assertEqual(set(r), ROW_KEYS)
            self.assertEqual(set(r["traits"]), TRAIT_KEYS)
            ragged = {"ragged_lengths", "total_keys"} if r["problem"]["lengths"] else set()
            self.assertEqual(set(r["problem"]), PROBLEM_KEYS | ragged)
            self.assertEqual(set(r["time"]), TIME_KEYS)
            self.assertEqual((r["partitions"], r["traits"]["bm"]), (1, 0))
        self.assertEqual(rows[0]["kernel"], "peer_flashinfer_tc")
        self.assertAlmostEqual(rows[0]["achieved_gbps"], 2113536.0 / 10.0e-6 / 1e9)
        p = rows[1]["problem"]
        self.assertEqual((p["kv"], p["page_size"], p["mask"], p["window"], p["has_sink"],
                          p["lengths"], p["keys"]), ("paged", 128, "window", 4, True, "ragged4-9", 9))
        self.assertEqual((p["ragged_lengths"], p["total_keys"]), ([4, 9], 13))
        self.assertEqual(report.number(float("nan")), "nan")
        # q_len and tree_depth are written where they differ from a one-token step, as
        # row_fields.cpp writes them.
        tree = planned(keys=64, q_len=8, mask="tree", tree_depth=3)
        self.assertEqual({k: report.make_row("torch_flex", tree, "skipped")["problem"][k]
                          for k in ("q_len", "tree_depth")}, {"q_len": 8, "tree_depth": 3})
        causal = report.make_row("torch_flex", planned(keys=64, q_len=2, mask="causal"), "skipped")
        self.assertEqual((causal["problem"]["q_len"], "tree_depth" in causal["problem"]), (2, False))
        self.assertEqual((rows[0]["traits"]["kv_dtype"], rows[0]["traits"]["soft_cap"],
                          rows[0]["problem"]["kv_scale"], rows[0]["problem"]["soft_cap"]),
                         ("bf16", False, "", 0.0))
        self.assertEqual((rows[0]["kernel_time_us"], rows[0]["kernel_time_method"]), (0.0, ""))
        k = {"kernel_us": 8.5, "kernels_per_step": 2.0, "method": "cupti via torch.profiler"}
        timed = report.make_row("flashinfer_tc", ps[0], "passed", "x", t, 4400.0, kernel=k)
        self.assertEqual((timed["kernel_time_us"], timed["kernels_per_step"],
                          timed["kernel_time_method"]), (8.5, 2.0, "cupti via torch.profiler"))
        # Only a timed row carries a kernel time.
        self.assertEqual(report.make_row("torch_flex", ps[0], "failed", "x", kernel=k)
                         ["kernel_time_us"], 0.0)
        self.assertIn("kernel us", report.format_table([timed]))
        fp8 = report.make_row("flashinfer_xqa", planned(kv_dtype="e4m3", soft_cap=50.0, keys=512),
                              "passed", "x", t, 4400.0)
        self.assertEqual((fp8["traits"]["kv_dtype"], fp8["traits"]["soft_cap"],
                          fp8["problem"]["kv_dtype"], fp8["problem"]["kv_scale"],
                          fp8["problem"]["soft_cap"], fp8["bytes"]),
                         ("e4m3", True, "e4m3", "tensor", 50.0, 1064960.0))


class FlashInferSitesTest(unittest.TestCase):
    def setUp(self):
        saved = dict(backends.PEERS), dict(backends.SHORT)

        def restore():
            backends.PEERS.clear(), backends.PEERS.update(saved[0])
            backends.SHORT.clear(), backends.SHORT.update(saved[1])
        self.addCleanup(restore)

    def test_parse(self):
        self.assertEqual(flashinfer_sites.parse(["v072=/tmp/fi"]), {"v072": "/tmp/fi"})
        for bad in (["v072"], ["V072=/x"], ["v0.7=/x"], ["v072="], ["a=/x", "a=/y"]):
            with self.assertRaises(ValueError, msg=bad):
                flashinfer_sites.parse(bad)

    def test_register_names_packages_and_0_7_api(self):
        added = flashinfer_sites.register({"v072": "/tmp/fi072"})
        self.assertEqual(sorted(p.name for p in added), [
            "flashinfer_cudnn_v072", "flashinfer_fa2_v072", "flashinfer_prefill_fa2_v072",
            "flashinfer_prefill_fa3_v072", "flashinfer_tc_fa3_v072", "flashinfer_tc_v072",
            "flashinfer_trtllm_v072", "flashinfer_xqa_v072"])
        self.assertEqual(flashinfer_sites.register({"v072": "/tmp/fi072"}), [])  # idempotent
        xqa = backends.PEERS["flashinfer_xqa_v072"]
        self.assertEqual((xqa.package, xqa.site, xqa.api07), ("flashinfer@v072", "/tmp/fi072", True))
        self.assertFalse(backends.PEERS["flashinfer_xqa"].api07)  # the original is untouched
        self.assertEqual([p.name for p in backends.resolve("fi_xqa_v072,fi_tc_fa3_v072")],
                         ["flashinfer_xqa_v072", "flashinfer_tc_fa3_v072"])
        self.assertEqual(len(backends.resolve("all")), 20)
        # 0.7's XQA runs a speculative step of causal or tree tokens; never the 'null' mask.
        spec = {"kv": "paged", "keys": 64, "q_len": 4}
        self.assertIsNone(xqa.why_not(planned(**spec, mask="causal")))
        self.assertIsNone(xqa.why_not(planned(**spec, mask="tree", tree_depth=2)))
        self.assertIn("'null'", xqa.why_not(planned(**spec)))
        # 0.7's API takes sinks in the wrapper and a window, sinks and fp16 in cuDNN; 0.5.3's not.
        sink = planned(kv="paged", has_sink=True, keys=64)
        window = planned(kv="paged", mask="window", keys=64)
        fp16 = planned(dtype="fp16", kv="paged", keys=64)
        for name in ("flashinfer_fa2", "flashinfer_tc", "flashinfer_cudnn"):
            self.assertIsNotNone(backends.PEERS[name].why_not(sink), name)
            self.assertIsNone(backends.PEERS[name + "_v072"].why_not(sink), name)
        self.assertIsNone(backends.PEERS["flashinfer_cudnn_v072"].why_not(window))
        self.assertIsNone(backends.PEERS["flashinfer_cudnn_v072"].why_not(fp16))
        self.assertIn("dequantisation", backends.PEERS["flashinfer_cudnn_v072"].why_not(
            planned(kv="paged", kv_dtype="e4m3", keys=64)))
        # The CUDA-core decode compiles a fixed list of groups, longer in 0.7; tensor cores take any.
        def group(g):
            return planned(kv="paged", heads=g * 4, kv_heads=4, keys=64)
        for g, old_ok, new_ok in ((7, False, False), (5, False, False), (6, False, True),
                                  (16, False, True), (8, True, True)):
            self.assertEqual(backends.PEERS["flashinfer_fa2"].why_not(group(g)) is None, old_ok, g)
            self.assertEqual(backends.PEERS["flashinfer_fa2_v072"].why_not(group(g)) is None,
                             new_ok, g)
            self.assertIsNone(backends.PEERS["flashinfer_tc"].why_not(group(g)), g)
        self.assertIn("Unsupported group_size", backends.PEERS["flashinfer_fa2"].why_not(group(7)))

    def test_worker_env_puts_the_site_first(self):
        flashinfer_sites.register({"v072": "/tmp/fi072"})
        env = flashinfer_sites.worker_env(backends.PEERS["flashinfer_tc_v072"],
                                          {"PYTHONPATH": "/tmp/site053", "X": "1"})
        self.assertEqual(env["PYTHONPATH"], "/tmp/fi072" + os.pathsep + "/tmp/site053")
        self.assertEqual(flashinfer_sites.worker_env(backends.PEERS["flashinfer_tc"],
                                                     {"X": "1"}), {"X": "1"})

    def test_probe_refuses_a_flashinfer_from_elsewhere(self):
        with tempfile.TemporaryDirectory() as tmp:
            site, other = os.path.join(tmp, "site"), os.path.join(tmp, "other")
            for d, version in ((site, "0.7.2.post1"), (other, "0.5.3")):
                os.makedirs(os.path.join(d, "flashinfer"))
                with open(os.path.join(d, "flashinfer", "__init__.py"), "w") as f:
                    f.write(f"__version__ = {version!r}\n")
            out = os.path.join(tmp, "probe.json")
            for path, want in ((site, {"version": "0.7.2.post1"}), (other, None)):
                r = subprocess.run([sys.executable, SCRIPT, "--probe-flashinfer", out, site],
                                   env=dict(os.environ, PYTHONPATH=path), capture_output=True,
                                   text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(out) as f:
                    got = json.load(f)
                if want:
                    self.assertEqual(got, want)
                else:
                    self.assertIn("not from", got["error"])


class KernelTimeTest(unittest.TestCase):
    def test_summarize_counts_kernels_only(self):
        events = [("flash_fwd_kernel", 6.0), ("combine", 1.5), ("Memcpy DtoD (Device -> Device)", 9.0),
                  ("Memset (Device)", 2.0), ("flash_fwd_kernel", 6.5), ("combine", 2.0)]
        got = kernel_time.summarize(events, steps=2)
        self.assertEqual(got, {"kernel_us": 8.0, "kernels_per_step": 2.0})
        self.assertIsNone(kernel_time.summarize([("Memset (Device)", 1.0)], steps=2))
        self.assertIsNone(kernel_time.summarize([], steps=1))

    def test_graph_first_then_stream_launches(self):
        class FakeTorch:  # measure() is replaced: only the fallback order is under test
            pass
        calls = []

        def fake_measure(torch, launch, steps, replays=kernel_time.REPLAYS):
            calls.append(launch)
            return None if launch == "graph" else {"kernel_us": 3.0, "kernels_per_step": 1.0}
        real = kernel_time.measure
        kernel_time.measure = fake_measure
        try:
            got = kernel_time.measure_step(FakeTorch, "graph", "stream", 8)
        finally:
            kernel_time.measure = real
        self.assertEqual(calls, ["graph", "stream"])
        self.assertEqual(got["method"], "cupti via torch.profiler, stream launches")


STAND_IN_WORKER = r'''
import json, os, signal, sys
job = json.load(open(sys.argv[1]))
with open(job["journal"], "a") as j:
    for p in job["problems"]:
        j.write(json.dumps({"start": p["name"]}) + "\n"); j.flush()
        if p["name"].endswith("_n13"):
            os.kill(os.getpid(), signal.SIGSEGV)
        row = {"problem": {"name": p["name"]}, "status": "passed", "kernel": "peer_" + job["peer"]}
        j.write(json.dumps({"row": row}) + "\n"); j.flush()
        if p["name"].endswith("_n11"):
            sys.exit(3)  # as after a sticky CUDA error: the rest need a new process
'''


class WorkerOrderTest(unittest.TestCase):
    def test_problems_sharing_kernels_run_back_to_back(self):
        """One worker takes all of a peer's problems: those of one group_key together, groups in
        order of first appearance, each in its own order; none lost or repeated."""
        ps = planned_all(plan_problem(name="a_n11", keys=11), plan_problem(name="a_n12", keys=12),
                         plan_problem(name="b_n21", kv_heads=1, keys=21),
                         plan_problem(name="c_n31", batch=2, keys=31),
                         plan_problem(name="d_n41", kv_heads=1, depth=64, keys=41))
        # a and c share kernels (batch and lengths are runtime values); b and d differ in kv_heads
        # or depth.
        names = [p["name"] for p in peers.ordered_by_kernels(ps)]
        self.assertEqual(names, ["a_n11", "a_n12", "c_n31", "b_n21", "d_n41"])
        self.assertEqual(sorted(names), sorted(p["name"] for p in ps))


class CrashIsolationTest(unittest.TestCase):
    def test_crash_fails_only_the_problem_in_flight(self):
        """A worker that stops between problems (exit 3 after n11) is replaced without failing
        anything; one killed by a signal (n13) fails that problem alone; the rest go on."""
        with tempfile.TemporaryDirectory() as d:
            worker = os.path.join(d, "worker.py")
            with open(worker, "w") as f:
                f.write(STAND_IN_WORKER)
            saved = peers.worker_command
            peers.worker_command = lambda job: [sys.executable, worker, job]
            try:
                rows = peers.run_worker(backends.PEERS["flashinfer_xqa"],
                                        g_problems(11, 12, 13, 14, 15), {}, 60, d)
            finally:
                peers.worker_command = saved
        status = {r["problem"]["name"]: r["status"] for r in rows}
        self.assertEqual(status, {"g_n11": "passed", "g_n12": "passed", "g_n13": "failed",
                                  "g_n14": "passed", "g_n15": "passed"})
        crashed = next(r for r in rows if r["problem"]["name"] == "g_n13")
        self.assertIn("SIGSEGV", crashed["reason"])


class DeadlineTest(unittest.TestCase):
    def test_past_the_deadline_nothing_starts_and_rows_say_why(self):
        def no_worker(job):
            raise AssertionError("a worker started after the deadline")
        saved = peers.worker_command
        peers.worker_command = no_worker
        try:
            with tempfile.TemporaryDirectory() as d:
                rows = peers.run_worker(backends.PEERS["flashinfer_xqa"],
                                        g_problems(11, 12), {}, 60, d,
                                        deadline=time.time() - 5)
        finally:
            peers.worker_command = saved
        self.assertEqual([r["status"] for r in rows], ["skipped", "skipped"])
        self.assertIn("--stop-after", rows[0]["reason"])

    def test_resume_times_skipped_rows_again_and_keeps_versions(self):
        """A resumed run keeps measured rows, re-times 'skipped' ones, and merges the earlier
        run's peer versions into its metadata."""
        info = {"gpu_name": "H200", "sm_count": 132, "l2_bytes": 62914560, "peak_gbps": 4400.0,
                "peak_method": "x", "torch": "2.11", "driver_version": "13.0",
                "cuda_version": "13.0", "packages": {"flashinfer": {"version": "0.5.3"}}}
        ps = g_problems(11, 12)
        with tempfile.TemporaryDirectory() as d:
            worker = os.path.join(d, "worker.py")
            with open(worker, "w") as f:  # rows as make_row writes them
                f.write(STAND_IN_WORKER.replace(
                    '"kernel": "peer_" + job["peer"]}',
                    '"kernel": "peer_" + job["peer"], "reason": "", "kernel_time_us": 0.0, '
                    '"time": {"median_us": 1.0}, "achieved_gbps": 0.0, "peak_fraction": 0.0}'))
            prefix = os.path.join(d, "peers")
            old = report.make_metadata()
            old["peer_versions"] = {"peer_fa3": "3.0.0"}
            kept = report.make_row("flashinfer_xqa", ps[0], "passed", "kept", {
                "median_us": 5.0, "min_us": 5.0, "mean_us": 5.0, "stdev_us": 0.0, "samples": 3})
            redo = report.make_row("flashinfer_xqa", ps[1], "skipped", "out of time")
            report.write_report(prefix + ".json", report.make_report(old, [kept, redo]))
            saved = peers.probe, peers.worker_command
            peers.probe = lambda workdir: dict(info)
            peers.worker_command = lambda job: [sys.executable, worker, job]
            args = argparse.Namespace(out=prefix, resume=True, sites={}, seed=1, time_budget=0.1,
                                      target_error=0.005, no_kernel_time=True, worker_timeout=60,
                                      stop_after=0, plan="plan.json")
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    rc = peers.run(args, ps, [backends.PEERS["flashinfer_xqa"]])
            finally:
                peers.probe, peers.worker_command = saved
            self.assertEqual(rc, 0)
            with open(prefix + ".json") as f:
                doc = json.load(f)
        by_name = {r["problem"]["name"]: r for r in doc["rows"]}
        self.assertEqual(by_name["g_n11"]["reason"], "kept")
        self.assertEqual(by_name["g_n12"]["status"], "passed")  # the stand-in worker's row
        self.assertEqual(doc["metadata"]["peer_versions"],
                         {"peer_fa3": "3.0.0", "peer_flashinfer_xqa": "0.5.3"})


class ResumeTest(unittest.TestCase):
    def test_resume_reads_own_report_before_the_gpu(self):
        """--resume keeps the rows of peers.py's own report; a file it cannot use (not JSON,
        a sweep's report) exits 2 before the GPU probe."""
        def no_probe(workdir):
            raise AssertionError("the GPU was probed before the report to resume was read")
        with tempfile.TemporaryDirectory() as d:
            prefix = os.path.join(d, "peers")
            row = report.make_row("torch_flex", planned(keys=64), "not_supported", "why")
            report.write_report(prefix + ".json", report.make_report(report.make_metadata(), [row]))
            self.assertEqual(peers.resumed_rows(prefix + ".json"), [row])
            saved = peers.probe
            peers.probe = no_probe
            try:
                for bad, text in [("{", "not valid JSON"), (json.dumps(report.make_report(
                        report.make_metadata(), [dict(row, kernel="decode_a")])), "not a peer's")]:
                    with open(prefix + ".json", "w") as f:
                        f.write(bad)
                    err = io.StringIO()
                    with contextlib.redirect_stderr(err):
                        rc = peers.run(argparse.Namespace(out=prefix, resume=True), [], [])
                    self.assertEqual(rc, 2)
                    self.assertIn(text, err.getvalue())
                    self.assertIn(prefix + ".json: ", err.getvalue())
            finally:
                peers.probe = saved


class CliTest(unittest.TestCase):
    PLAN_USAGE = "mha-tune sweep --config C --dry-run --json > plan.json"

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def run_cli(self, *args):
        env = dict(os.environ, PYTHONPATH="")  # torch must not be needed
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                              env=env)

    def write_plan(self, doc):
        path = os.path.join(self.tmp.name, "plan.json")
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def test_help_and_dry_run(self):
        self.assertEqual(self.run_cli("--help").returncode, 0)
        plan = self.write_plan(plan_doc(
            plan_problem(name="llama3_8b_paged16_b1_n512", kv="paged", keys=512),
            plan_problem(name="llama3_8b_b2_n64", lengths=[64, 64], lengths_name="")))
        r = self.run_cli("--out", "/tmp/x", "--dry-run", "--plan", plan)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("llama3_8b_paged16_b1_n512: 2.11 MB/step", r.stdout)
        self.assertIn("not_supported: SDPA takes dense K/V only", r.stdout)
        self.assertRegex(r.stdout, r"2 problem\(s\) x 12 peer\(s\): \d+ to time")
        self.assertNotIn("torch", sys.modules)

    def test_dry_run_times_the_plan_verbatim(self):
        """The problems of the plan and no others, in its order, with its step bytes."""
        r = self.run_cli("--out", "/tmp/x", "--dry-run", "--plan", self.write_plan(PLAN_TEXT))
        self.assertEqual(r.returncode, 0, r.stderr)
        plan = json.loads(PLAN_TEXT)["problems"]
        listed = re.findall(r"(?m)^(\S+): ([0-9.]+) MB/step$", r.stdout)
        self.assertEqual(listed, [(q["name"], f"{q['bytes_per_step'] / 1e6:.2f}") for q in plan])
        self.assertIn(f"{len(plan)} problem(s) x 12 peer(s)", r.stdout)
        self.assertIn("flashinfer_cudnn            not_supported: cudnn_batch_decode_with_kv_cache builds "
                      "cuDNN's 16-bit SDPA graph, with no K/V dequantisation scales", r.stdout)
        self.assertIn("not_supported: peers write the output in the query's dtype (fp16), not "
                      "fp32", r.stdout)

    def test_the_plan_is_the_only_source(self):
        r = self.run_cli("--out", "/tmp/x", "--dry-run")
        self.assertEqual(r.returncode, 2)
        self.assertIn("pass --plan plan.json", r.stderr)
        self.assertIn(self.PLAN_USAGE, r.stderr)
        plan = self.write_plan(PLAN_TEXT)
        for gone in (["--suite", SERVING], [f"--suite={SERVING}"], ["--problems", "n=64"],
                     ["--plan", plan, "--problems", "n=64"]):
            r = self.run_cli("--out", "/tmp/x", "--dry-run", *gone)
            self.assertEqual(r.returncode, 2, gone)
            self.assertRegex(r.stderr, r"peers.py: --(suite|problems) is gone", gone)
            self.assertIn(self.PLAN_USAGE, r.stderr)
            self.assertNotIn("MB/step", r.stdout)

    def test_a_plan_it_cannot_use_exits_2(self):
        for doc, says in (("{not json", "cannot read it as JSON"),
                          ({"problems": []}, "holds no problem"),
                          ({"suite": {"problems": [{"keys": [64]}]}}, "no 'problems' list"),
                          (plan_doc({"name": "x", "keys": 64}), "lacks batch")):
            r = self.run_cli("--out", "/tmp/x", "--dry-run", "--plan", self.write_plan(doc))
            self.assertEqual(r.returncode, 2, says)
            self.assertIn(says, r.stderr)
        r = self.run_cli("--out", "/tmp/x", "--dry-run", "--plan", "/nonexistent/plan.json")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--plan /nonexistent/plan.json: cannot read it", r.stderr)

    def test_usage_errors_exit_2(self):
        plan = self.write_plan(PLAN_TEXT)
        self.assertEqual(self.run_cli("--out", "x", "--dry-run", "--plan", plan,
                                      "--peers", "flash,xla").returncode, 2)
        self.assertEqual(self.run_cli("--dry-run", "--plan", plan).returncode, 2)  # --out

    @unittest.skipUnless(os.access(MHA_TUNE, os.X_OK), "MHA_BUILD_DIR has no mha-tune binary")
    def test_a_sweeps_own_plan(self):
        """End to end: the plan `sweep --config --dry-run --json` writes for the build's own
        config, every problem of it listed by peers.py, by the sweep's names."""
        config = os.path.join(REPO, "configs", "suites", "ci.json")
        r = subprocess.run([MHA_TUNE, "sweep", "--config", config, "--dry-run", "--json"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        names = [q["name"] for q in json.loads(r.stdout)["problems"]]
        self.assertTrue(names)
        r = self.run_cli("--out", "/tmp/x", "--dry-run", "--plan", self.write_plan(r.stdout))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(re.findall(r"(?m)^(\S+): [0-9.]+ MB/step$", r.stdout), names)


if __name__ == "__main__":
    unittest.main()
